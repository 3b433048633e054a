"""What a distributed PostgreSQL (Citus) needs of the backend, checked on
plain PostgreSQL: custom plans on every connection, statements that a shard
can run alone. On a Citus coordinator (``BRANCHMEM_TEST_CITUS``), every test
schema is distributed by namespace; the checks of that skip elsewhere.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from branchmem import Store
from branchmem.backends.postgres.schema import DISTRIBUTED, REFERENCE, TABLES, citus_statements
from helpers.pg_helpers import (
    CITUS_SKIP,
    CITUS_URL,
    PG_URL,
    SKIP_REASON,
    Tracer,
    open_backend,
    statement_problem,
)

pg = pytest.mark.skipif(not PG_URL, reason=SKIP_REASON)
citus = pytest.mark.skipif(not CITUS_URL, reason=CITUS_SKIP)
DOCS = Path(__file__).resolve().parents[2] / "docs" / "scaling.md"


def test_the_distribution_statements_name_every_table_and_are_the_documented_ones() -> None:
    made = set(re.findall(r"CREATE TABLE IF NOT EXISTS (\w+)", TABLES)) - {"schema_version"}
    assert sorted(made) == sorted((*DISTRIBUTED, *REFERENCE))
    block = DOCS.read_text(encoding="utf-8").split("```sql\n", 1)[1].split("```", 1)[0]
    documented = [line for line in block.splitlines() if line.startswith("SELECT ")]
    assert documented == citus_statements()
    # The steps that count them say how many there are.
    counts = re.findall(r"run the (\d+)\s+statements above", DOCS.read_text(encoding="utf-8"))
    assert counts and {int(n) for n in counts} == {len(citus_statements())}


@pytest.fixture
def store() -> Iterator[Store]:
    tracer = Tracer()
    s = Store(backend=open_backend(tracer))
    yield s
    s.close()
    assert not tracer.problems


@pg
def test_backend_connections_plan_every_statement_for_its_values(store: Store) -> None:
    """A generic plan (chosen after a prepared statement's fifth run) cannot
    route to one shard on Citus: the backend's connections are pinned to
    custom plans, new ones included."""
    store.add_event("e0")
    pool = store._engine.backend._pool  # type: ignore[attr-defined]
    with pool.connection() as a, pool.connection() as b:
        for conn in (a, b):
            assert conn.execute("SHOW plan_cache_mode").fetchone() == ("force_custom_plan",)


def test_the_statement_check_catches_an_insert_that_reads_a_table() -> None:
    """Inserts as they were: rows checked or numbered by a subquery."""
    numbered = (
        "INSERT INTO audit (ns, seq, at, actor, op, ids) SELECT %(ns)s, (SELECT coalesce("
        "max(seq), 0) FROM audit WHERE ns = %(ns)s) + u.i, u.at, u.actor, u.op, u.ids FROM "
        "unnest(%(c0)s::float8[], %(c1)s::text[], %(c2)s::text[], %(c3)s::text[]) WITH "
        "ORDINALITY AS u(at, actor, op, ids, i)"
    )
    checked = (
        "INSERT INTO vectors (ns, embedder, id, digest, vec) SELECT %(ns)s, %(e)s, u.* FROM "
        "unnest(%(c0)s::text[], %(c1)s::text[], %(c2)s::bytea[]) AS u(id, digest, vec) WHERE "
        "EXISTS (SELECT 1 FROM records c WHERE c.ns = %(ns)s AND c.id = u.id)"
    )
    for sql in (numbered, checked):
        assert "an INSERT that reads" in (statement_problem(sql, {"ns": "a"}) or "")
    plain = "INSERT INTO audit (ns, seq, at) VALUES (%(ns)s, %(v0_0)s, %(v0_1)s)"
    arrays = "INSERT INTO waits (ns, parent, child) SELECT %(ns)s, u.* FROM unnest(%(c0)s::text[])"
    assert statement_problem(plain, {"ns": "a"}) is None
    assert statement_problem(arrays, {"ns": "a"}) is None


class _Seen(Tracer):
    def __init__(self) -> None:
        super().__init__()
        self.sql: list[str] = []

    def __call__(self, sql: str, params: Mapping[str, Any]) -> None:
        super().__call__(sql, params)
        self.sql.append(sql)


@pg
def test_a_single_write_inserts_its_rows_as_values() -> None:
    """The rows of one write go as ``INSERT ... VALUES``, which Citus routes
    to the namespace's shard (``INSERT ... SELECT`` goes by the coordinator),
    with nothing looked up inside (the statement check)."""
    seen = _Seen()
    store = Store(backend=open_backend(seen))
    try:
        store.add_event("e0")
        store.create_branch("main", at="e0")
        seen.sql.clear()
        store.add_event("e1", parent="e0", content="x")
        store.add_memory("fact", sources=["e1"], id="m1")
        store.remember("note", branch="main")
        store.add_events([{"id": f"b{i}", "parent": "e1"} for i in range(3)])
        inserts = [s for s in seen.sql if s.startswith("INSERT")]
        tables = {s.split()[2] for s in inserts}
        assert {"events", "records", "audit", "head_moves", "segments"} <= tables
        assert all(" VALUES (" in s and "unnest(" not in s for s in inserts), inserts
    finally:
        store.close()
    assert not seen.problems


@citus
def test_each_test_schema_is_distributed_by_namespace(store: Store) -> None:
    """With ``BRANCHMEM_TEST_CITUS``, every PostgreSQL test runs on tables
    distributed as docs/scaling.md says: by ``ns``, in one colocation group,
    ``counters`` a reference table, ``schema_version`` local."""
    store.add_event("e0")
    pool = store._engine.backend._pool  # type: ignore[attr-defined]
    with pool.connection() as conn:
        rows = conn.execute(
            "SELECT c.relname, p.partmethod, p.colocationid, "
            "column_to_column_name(p.logicalrelid, p.partkey) FROM pg_dist_partition p "
            "JOIN pg_class c ON c.oid = p.logicalrelid "
            "WHERE c.relnamespace = current_schema()::regnamespace"
        ).fetchall()
    found = {name: (method, group, key) for name, method, group, key in rows}
    # pgvector tables (made when first needed, kept in a reused test schema)
    # go beside ``vectors``, in its group.
    vec = {t for t in found if t.startswith(("hvec_", "vec_"))}
    assert set(found) - vec == {*DISTRIBUTED, *REFERENCE}
    assert {found[t][0] for t in (*DISTRIBUTED, *vec)} == {"h"}
    assert {found[t][2] for t in (*DISTRIBUTED, *vec)} == {"ns"}
    assert len({found[t][1] for t in (*DISTRIBUTED, *vec)}) == 1
    assert {found[t][0] for t in REFERENCE} == {"n"}


@pg
def test_head_moves_numbered_per_branch_follow_namespace_wide_numbers(store: Store) -> None:
    """Moves were numbered across the namespace before; numbered per branch
    now, a branch's next move still comes after every earlier one of it."""
    store.add_event("e0")
    store.create_branch("a", at="e0")
    store.create_branch("b", at="e0")
    for i in range(1, 4):
        store.add_event(f"a{i}", branch="a")
        store.add_event(f"b{i}", branch="b")
    pool = store._engine.backend._pool  # type: ignore[attr-defined]
    with pool.connection() as conn:
        # As the older code numbered them: 1, 2, 3, ... across both branches.
        conn.execute(
            "UPDATE head_moves h SET n = w.k + 100 FROM (SELECT branch, n, row_number() "
            "OVER (ORDER BY at, n, branch) AS k FROM head_moves) w "
            "WHERE h.branch = w.branch AND h.n = w.n"
        )
        conn.execute("UPDATE head_moves SET n = n - 100")
    store.add_event("a4", branch="a")
    store.add_event("b4", branch="b")
    for name in ("a", "b"):
        moves = store.history(name)
        assert [m.to_head for m in moves] == ["e0", *(f"{name}{i}" for i in range(1, 5))]
