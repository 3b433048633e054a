"""Several `Store` objects (or processes) on one SQLite file see one store.

Every cache that outlives a transaction (segment fork points, namespace ids,
the search cache, scope-chain copies) is checked against the file's state
(`Backend.generation`) at the start of each transaction.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from branchmem import Store
from helpers.pg_helpers import PG_URL, SKIP_REASON, examples
from helpers.reference import Reference, RefRecord


def _rebuilt_elsewhere(p: Path) -> tuple[Store, Store]:
    """The issue's story: ``y`` caches a forked tree's segments, then ``x`` purges
    the namespace and rebuilds it with two roots (segments 0 and 1 again)."""
    x, y = Store(p), Store(p)
    x.add_events([{"id": "e1"}, {"id": "e2", "parent": "e1"}, {"id": "e2b", "parent": "e1"}])
    assert y.memories(at="e2b") == []
    x.purge(whole_namespace=True)
    x.add_events([{"id": "r1"}, {"id": "q1"}])
    return x, y


def test_stale_segments_after_a_namespace_purge_elsewhere(tmp_path: Path) -> None:
    x, y = _rebuilt_elsewhere(tmp_path / "s.db")
    x.add_memory("SECRET", sources=["r1"])
    assert [e.id for e in y.path("q1")] == ["q1"]
    assert y.memories(at="q1") == []
    assert [m.content for m in y.memories(at="r1")] == ["SECRET"]


def test_a_write_through_a_stale_store_indexes_at_the_right_place(tmp_path: Path) -> None:
    p = tmp_path / "s.db"
    x, y = _rebuilt_elsewhere(p)
    # written by the store that cached the old tree's segments: r1 is not an
    # ancestor of q1, so the record must carry both positions
    y.add_memory("SECRET", sources=["r1", "q1"])
    z = Store(p)
    assert z.memories(at="q1") == [] and x.memories(at="q1") == []


def test_search_cache_drops_text_purged_by_another_store(tmp_path: Path) -> None:
    from branchmem.retrieval.cache import cache_for

    p = tmp_path / "s.db"
    x, y = Store(p), Store(p)
    x.add_event("e1", content="我对花生过敏")
    m = x.add_memory("用户对花生过敏", sources=["e1"])
    assert [h.memory.id for h in y.search("花生", at="e1", embedder="hashing")] == [m.id]
    assert any(m.id in {k[1] for k in t} for t in cache_for(y).terms.values())
    x.purge(memories=[m.id])
    assert y.search("花生", at="e1", embedder="hashing") == []
    held = [k for t in [*cache_for(y).terms.values(), *cache_for(y).vectors.values()] for k in t]
    assert all(k[1] != m.id for k in held)


def test_generation_moves_with_writes_and_erasures(tmp_path: Path) -> None:
    p = tmp_path / "s.db"
    x, y = Store(p), Store(p)
    with y._engine.backend.reading():
        g0 = y._engine.backend.generation()
    x.add_event("e1", content="a")
    with y._engine.backend.reading():
        g1 = y._engine.backend.generation()
    assert g1.writes != g0.writes and g1.erasures == g0.erasures
    x.purge(events=["e1"])
    with y._engine.backend.reading():
        g2 = y._engine.backend.generation()
    assert g2.writes != g1.writes and g2.erasures != g1.erasures
    with y._engine.backend.reading():
        assert y._engine.backend.generation() == g2  # nothing happened in between


# ---------------------------------------------------------------- property
ROOTS = ["a", "b", "c"]
PARENT = st.integers(-1, 3)  # -1: a new root; else the n-th latest event (0: extend)
STEP = st.one_of(
    st.tuples(st.just("event"), st.integers(0, 2), st.integers(0, 40), PARENT),
    st.tuples(st.just("event"), st.integers(0, 2), st.integers(0, 40), PARENT),
    st.tuples(st.just("memory"), st.integers(0, 2), st.integers(0, 6), st.integers(-1, 6)),
    st.tuples(st.just("memory"), st.integers(0, 2), st.integers(0, 6), st.integers(-1, 6)),
    st.tuples(st.just("purge_event"), st.integers(0, 2), st.integers(0, 40), st.just(0)),
    st.tuples(st.just("purge_ns"), st.integers(0, 2), st.just(0), st.just(0)),
    st.tuples(st.just("purge_ns"), st.integers(0, 2), st.just(0), st.just(0)),
    st.tuples(st.just("read"), st.integers(0, 2), st.integers(0, 40), st.just(0)),
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(steps=st.lists(STEP, min_size=1, max_size=40))
def test_many_stores_on_one_file_match_the_reference(
    tmp_path_factory: object, steps: list[tuple[str, int, int, int]]
) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "s.db"
        stores = [Store(p) for _ in range(3)]
        try:
            _run(stores, steps)
        finally:
            for s in stores:
                s.close()


@pytest.fixture(scope="module")
def pg_schema() -> Iterator[str]:
    import psycopg

    name = f"bmt_coh_{uuid.uuid4().hex[:12]}"
    yield name
    with psycopg.connect(PG_URL, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {name} CASCADE")


@pytest.mark.skipif(not PG_URL, reason=SKIP_REASON)
@settings(
    max_examples=examples("postgres", 25),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(steps=st.lists(STEP, min_size=1, max_size=30))
def test_many_stores_on_one_postgres_schema_match_the_reference(
    pg_schema: str, steps: list[tuple[str, int, int, int]]
) -> None:
    """The same on PostgreSQL, each store its own pool (as processes are): the
    kept search answers are checked against the namespace's write counter."""
    import psycopg

    from branchmem.backends.postgres import PostgresBackend
    from helpers.pg_helpers import empty_schema

    Store(backend=PostgresBackend(PG_URL, schema=pg_schema)).close()  # made, if new
    with psycopg.connect(PG_URL, autocommit=True) as conn:
        conn.execute(empty_schema(pg_schema))
    stores = [Store(backend=PostgresBackend(PG_URL, schema=pg_schema)) for _ in range(3)]
    try:
        _run(stores, steps)
    finally:
        for s in stores:
            s.close()


def _run(stores: list[Store], steps: list[tuple[str, int, int, int]]) -> None:
    ref = Reference()
    erased: set[str] = set()
    gen = 0  # event ids are never reused within one namespace's life
    nmem = 0
    for op, who, a, b in steps:
        s = stores[who]
        events = list(ref.parents)
        if op == "event":
            eid = f"g{gen}e{len(events)}"
            parent = events[-1 - b % len(events)] if events and b >= 0 else None
            s.add_event(eid, parent=parent, content=f"text {eid}")
            ref.add_event(eid, (parent,) if parent else ())
        elif op == "memory" and events:
            picks = [a] if b < 0 else [a, b]  # one source, or two
            srcs = tuple(dict.fromkeys(events[i % len(events)] for i in picks))
            mid = f"m{nmem}"
            nmem += 1
            s.add_memory(f"fact {mid}", sources=list(srcs), id=mid)
            ref.add_record(RefRecord(mid, srcs))
        elif op == "purge_event" and events:
            eid = events[a % len(events)]
            s.purge(events=[eid])
            erased.add(eid)
            ref.records = [r for r in ref.records if eid not in r.sources]
        elif op == "purge_ns" and events:
            s.purge(whole_namespace=True)
            ref = Reference()
            erased.clear()
            gen += 1
        # after every step, every store agrees with the reference
        events = list(ref.parents)
        for r in stores:
            for anchor in events:
                got = [m.id for m in r.memories(at=anchor)]
                assert got == ref.memories(anchor), (anchor, got)
                assert {e.id for e in r.path(anchor)} == ref.ancestors(anchor)
        if events:
            # One store searches one anchor after every step, whoever wrote:
            # its kept answer is extended by appends, read again otherwise.
            deep = stores[0].search("fact", at=events[0], k=1000, embedder="hashing")
            assert sorted(h.memory.id for h in deep) == sorted(ref.memories(events[0]))
        if op == "read" and events:
            anchor = events[a % len(events)]
            assert [m.id for m in s.memories(at=anchor)] == ref.memories(anchor)
            for eid in erased & ref.ancestors(anchor):
                assert s.get_event(eid).content == ""


@pytest.mark.skipif(not PG_URL, reason=SKIP_REASON)
def test_two_stores_on_one_postgres_schema_after_a_purge_and_rebuild() -> None:
    """The issue's snippet on PostgreSQL: each store is its own connection pool,
    as two server processes would be."""
    import psycopg

    from branchmem.backends.postgres import PostgresBackend

    schema = f"bmt_coh_{uuid.uuid4().hex[:12]}"
    x = Store(backend=PostgresBackend(PG_URL, schema=schema))
    y = Store(backend=PostgresBackend(PG_URL, schema=schema))
    try:
        x.add_events([{"id": "e1"}, {"id": "e2", "parent": "e1"}, {"id": "e2b", "parent": "e1"}])
        assert y.memories(at="e2b") == []
        x.purge(whole_namespace=True)
        x.add_events([{"id": "r1"}, {"id": "q1"}])
        x.add_memory("SECRET", sources=["r1"])
        assert [e.id for e in y.path("q1")] == ["q1"]
        assert y.memories(at="q1") == []
        y.add_memory("BOTH", sources=["r1", "q1"])  # written by the store that read the old tree
        assert x.memories(at="q1") == [] and y.memories(at="q1") == []
    finally:
        x.close()
        y.close()
        with psycopg.connect(PG_URL, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


def test_numbers_and_heads_kept_between_writes_follow_other_stores(tmp_path: Path) -> None:
    """A store keeps a namespace's last audit number, segment tips, branch heads
    and the rows it just wrote between its transactions: another store writing
    in between must be seen, and a purge in between must drop them."""
    p = tmp_path / "s.db"
    x, y = Store(p), Store(p)
    x.add_event("e0")
    x.create_branch("main", at="e0")
    for i in range(1, 7):
        s, other = (x, y) if i % 2 else (y, x)
        s.add_event(f"e{i}", parent=f"e{i - 1}")  # each extends the other's tip
        s.add_memory(f"fact {i}", sources=[f"e{i}"], id=f"m{i}")
        assert [b.head for b in other.branches()] == ["e0"]
        assert [b.name for b in s.branches()] == ["main"]
    x.add_event("on-main", branch="main", content="x")
    assert {b.head for b in y.branches()} == {b.head for b in x.branches()} != {"e0"}
    for s in (x, y, Store(p)):
        assert [a.seq for a in s.audit()] == list(range(1, len(s.audit()) + 1))
        assert [e.id for e in s.path("e6")] == [f"e{i}" for i in range(7)]
        assert [m.id for m in s.memories(at="e6")] == [f"m{i}" for i in range(1, 7)]
    # the same store purges and rebuilds: segment 0 and its tip start again
    x.purge(whole_namespace=True)
    x.add_event("r0")
    x.add_event("r1", parent="r0")
    y.add_event("r2", parent="r1")
    x.add_event("r3", parent="r2")
    x.add_memory("after", sources=["r3"], id="n1")
    for s in (x, y, Store(p)):
        assert [e.id for e in s.path("r3")] == ["r0", "r1", "r2", "r3"]
        assert [m.id for m in s.memories(at="r3")] == ["n1"]
        assert [m.id for m in s.memories(at="r1")] == []
        assert [a.seq for a in s.audit()] == list(range(1, len(s.audit()) + 1))


def test_branch_rows_kept_between_reads_follow_other_stores_and_rollbacks(
    tmp_path: Path,
) -> None:
    """A SQLite store keeps the branch rows it read or wrote between its
    transactions (a LangGraph step reads its latest pointer in every call):
    another store's move must be seen, a rolled-back move must not, and a row
    handed out and changed by its reader changes nothing kept."""
    from branchmem.backends.sqlite.backend import SQLiteBackend

    p = tmp_path / "s.db"
    x, y = Store(p), Store(p)
    x.add_events([{"id": "e0"}, {"id": "e1", "parent": "e0"}, {"id": "e2", "parent": "e1"}])
    x.create_branch("main", at="e0")
    b = x._engine.backend
    assert isinstance(b, SQLiteBackend)
    statements: list[str] = []
    b._db.set_trace_callback(statements.append)
    with b.reading():
        first = b.get_branch_row("default", "main")
    with b.reading():
        assert b.get_branch_row("default", "main") == first
        assert b.get_branch("default", "main") == "e0"
    b._db.set_trace_callback(None)
    assert sum("FROM branches" in s for s in statements) <= 1  # the second read is kept
    y.set_branch("main", "e1")  # another store moves it
    with b.reading():
        row = b.get_branch_row("default", "main")
        assert row is not None and row.head == "e1"
        assert b.get_branch("default", "main") == "e1"
    row.head = "changed by the reader"
    with b.reading():
        again = b.get_branch_row("default", "main")
        assert again is not None and again.head == "e1"
    with pytest.raises(RuntimeError), b.transaction():
        moved = b.get_branch_row("default", "main")
        assert moved is not None
        moved.head = "e2"
        b.put_branch_row("default", moved)
        raise RuntimeError("rolled back")
    for s in (x, y, Store(p)):
        assert {br.name: br.head for br in s.branches()} == {"main": "e1"}
    with b.reading():
        kept = b.get_branch_row("default", "main")
        assert kept is not None and kept.head == "e1"
    x.purge(whole_namespace=True)
    with y._engine.backend.reading():
        assert y._engine.backend.get_branch_row("default", "main") is None


def test_a_segment_made_by_a_rolled_back_write_is_not_kept(tmp_path: Path) -> None:
    """A new segment's fork points are kept as it is written; a rollback drops
    them, so the number, taken again by another fork, reads its own."""
    p = tmp_path / "s.db"
    x = Store(p)
    x.add_events([{"id": "a0"}, {"id": "a1", "parent": "a0"}, {"id": "b0"}])
    b = x._engine.backend
    with pytest.raises(RuntimeError), b.transaction():
        x.add_events([{"id": "fork", "parent": "a0"}])  # a new segment forking at a0
        raise RuntimeError("rolled back")
    x.add_events([{"id": "other", "parent": "b0"}, {"id": "c0"}])
    x.add_memory("on b", sources=["b0"], id="mb")
    x.add_memory("on a", sources=["a0"], id="ma")
    for s in (x, Store(p)):
        assert [m.id for m in s.memories(at="other")] == ["mb"]
        assert [e.id for e in s.path("other")] == ["b0", "other"]
        with pytest.raises(KeyError):
            s.get_event("fork")
