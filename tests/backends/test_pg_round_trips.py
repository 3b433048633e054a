"""Driver calls of a warm read on PostgreSQL, counted at the connection.

A warm search and a warm ``memories(at)`` are each one transaction of at most
three round trips (a pipeline of statements is one; so is a lone statement),
the generation read in the same transaction as the data; the caches of a
store are kept while nothing is written to the namespace, and dropped or
extended when another store writes, purges or rebuilds it.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from branchmem import Store
from helpers.pg_helpers import PG_URL, SKIP_REASON

pytestmark = pytest.mark.skipif(not PG_URL, reason=SKIP_REASON)

MAX_ROUND_TRIPS = 3


class Calls:
    """Round trips, statements and transactions of every pooled connection."""

    def __init__(self) -> None:
        self.round_trips = 0
        self.statements: list[str] = []
        self.piped = 0

    @property
    def transactions(self) -> int:
        return sum(1 for s in self.statements if s.startswith("BEGIN"))

    def reset(self) -> None:
        self.round_trips, self.statements = 0, []


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> Calls:
    import psycopg

    seen = Calls()
    execute, pipeline = psycopg.Connection.execute, psycopg.Connection.pipeline

    def counted_execute(self: Any, query: Any, *a: Any, **k: Any) -> Any:
        seen.statements.append(str(query))
        if not seen.piped:
            seen.round_trips += 1
        return execute(self, query, *a, **k)

    @contextmanager
    def counted_pipeline(self: Any) -> Iterator[Any]:
        seen.piped += 1
        try:
            with pipeline(self) as p:
                yield p
        finally:
            seen.piped -= 1
            if not seen.piped:
                seen.round_trips += 1

    monkeypatch.setattr(psycopg.Connection, "execute", counted_execute)
    monkeypatch.setattr(psycopg.Connection, "pipeline", counted_pipeline)
    return seen


@pytest.fixture
def schema() -> Iterator[str]:
    import psycopg

    name = f"bmt_rt_{uuid.uuid4().hex[:12]}"
    yield name
    with psycopg.connect(PG_URL, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {name} CASCADE")


def _open(schema: str) -> Store:
    from branchmem.backends.postgres import PostgresBackend

    return Store(backend=PostgresBackend(PG_URL, schema=schema))


CHAIN = [{"id": "e0"}] + [{"id": f"e{i}", "parent": f"e{i - 1}"} for i in range(1, 20)]


def _fill(s: Store, n: int = 200) -> None:
    s.add_events(CHAIN)
    s.add_memories(
        [
            {"content": f"user likes blue cat number {i}", "sources": [f"e{i % 20}"]}
            for i in range(n)
        ]
    )


def test_a_warm_search_is_one_transaction_of_few_round_trips(schema: str, calls: Calls) -> None:
    with _open(schema) as s:
        _fill(s)
        first = s.search("blue cat", at="e19", embedder="hashing", k=5)
        calls.reset()
        again = s.search("blue cat", at="e19", embedder="hashing", k=5)
        assert [h.memory.id for h in again] == [h.memory.id for h in first]
        assert calls.transactions == 1, calls.statements
        assert calls.round_trips <= MAX_ROUND_TRIPS, calls.statements
        # nothing was written: the kept candidates are used, no record is read
        assert not any("FROM records" in q and "c.seq" in q for q in calls.statements)


def test_a_warm_memories_read_is_one_transaction_of_few_round_trips(
    schema: str, calls: Calls
) -> None:
    with _open(schema) as s:
        _fill(s)
        first = s.memories(at="e19")
        calls.reset()
        assert s.memories(at="e19") == first
        assert calls.transactions == 1, calls.statements
        assert calls.round_trips <= MAX_ROUND_TRIPS, calls.statements


def test_reads_leave_the_write_counter_alone_and_writes_move_it(schema: str) -> None:
    with _open(schema) as x, _open(schema) as y:
        _fill(x, 5)
        b = y._engine.backend
        y.search("blue", at="e19", embedder="hashing")  # the first one stores vectors
        with b.reading():
            g0 = b.generation("default")
        y.search("blue", at="e19", embedder="hashing")
        y.memories(at="e19")
        with b.reading():
            assert b.generation("default") == g0  # reads write nothing
        x.add_memory("another blue cat", sources=["e3"])
        with b.reading():
            g1 = b.generation("default")
        assert g1.writes != g0.writes and g1.erasures == g0.erasures
        x.add_event("other-ns", namespace="elsewhere")
        with b.reading():
            assert b.generation("default") == g1  # another namespace's write
        x.purge(memories=[x.memories(at="e3")[0].id])
        with b.reading():
            g2 = b.generation("default")
        assert g2.erasures != g1.erasures


def test_a_kept_search_follows_writes_purges_and_rebuilds_by_another_store(schema: str) -> None:
    """Two stores are two connection pools, as two server processes would be."""
    with _open(schema) as x, _open(schema) as y:
        _fill(x, 20)

        def found(q: str) -> list[str]:
            return sorted(h.memory.content for h in y.search(q, at="e19", embedder="hashing", k=50))

        assert len(found("blue cat")) == 20
        x.add_memory("a green parrot", sources=["e5"])
        assert "a green parrot" in found("green parrot")
        mid = next(m.id for m in x.memories(at="e19") if m.content == "a green parrot")
        x.purge(memories=[mid])
        assert "a green parrot" not in found("green parrot")
        x.purge(whole_namespace=True)
        with pytest.raises(KeyError):  # the anchor went with the namespace
            found("blue cat")
        x.add_events(
            [{"id": "e0"}] + [{"id": f"e{i}", "parent": f"e{i - 1}"} for i in range(1, 20)]
        )
        x.add_memory("rebuilt blue fox", sources=["e19"])
        assert found("blue cat") == ["rebuilt blue fox"]  # same ids, other text: nothing stale
