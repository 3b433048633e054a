"""pgvector on a Citus coordinator (``BRANCHMEM_TEST_CITUS``, the extension on
every node): the backend makes each vector table distributed beside
``vectors``, a purge leaves no copy on any node (a table left on the
coordinator by an earlier version included), and the HNSW scan runs on the
namespace's worker, as ``explain`` reports from the plan. Skipped, with the
reason, without a coordinator or without pgvector there.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from test_pgvector import EMB, fill, hnsw_always  # noqa: F401 (a fixture)

from branchmem import Store
from branchmem.backends.postgres import vector_tables
from helpers.pg_helpers import CITUS_SKIP, CITUS_URL, Tracer, open_backend

psycopg = pytest.importorskip("psycopg")


def _offers_pgvector() -> bool:
    if not CITUS_URL:
        return False
    with psycopg.connect(CITUS_URL) as conn:
        row = conn.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'")
        return row.fetchone() is not None


pytestmark = [
    pytest.mark.skipif(not CITUS_URL, reason=CITUS_SKIP),
    pytest.mark.skipif(
        not _offers_pgvector(), reason="the Citus coordinator does not offer pgvector"
    ),
]


@pytest.fixture
def opened() -> Iterator[Callable[[], Store]]:
    """Stores on the coordinator, each schema distributed by namespace."""
    tracer = Tracer()
    stores: list[Store] = []

    def make() -> Store:
        stores.append(Store(backend=open_backend(tracer)))
        return stores[-1]

    yield make
    for s in stores:
        s.close()
    assert not tracer.problems, tracer.problems[:3]


def _coordinator(store: Store) -> Any:
    b: Any = store._engine.backend
    return psycopg.connect(CITUS_URL, autocommit=True, options=f"-c search_path={b.schema}")


def copies(store: Store, tab: str) -> list[tuple[str, str, str]]:
    """Every row of the pgvector table ``tab``, read where it is stored: the
    coordinator's own table (``coordinator``; of a distributed table, its size
    if not empty), and each shard on its worker, connected to directly
    (``host:port``)."""
    b: Any = store._engine.backend
    out: list[tuple[str, str, str]] = []
    with _coordinator(store) as conn:
        shards = conn.execute(
            "SELECT s.shardid, n.nodename, n.nodeport FROM pg_dist_shard s JOIN "
            "pg_dist_placement p USING (shardid) JOIN pg_dist_node n ON n.groupid = p.groupid "
            "WHERE s.logicalrelid = %s::regclass ORDER BY 1",
            (tab,),
        ).fetchall()
        if not shards:
            rows = conn.execute(f"SELECT ns, id FROM {tab}").fetchall()
            out += [("coordinator", ns, i) for ns, i in rows]
        else:  # the coordinator's own table, made empty and distributed: no bytes
            size = conn.execute("SELECT pg_relation_size(%s::regclass)", (tab,)).fetchone()[0]
            out += [("coordinator", "", f"{size} bytes")] if size else []
    for shard, host, port in shards:
        with psycopg.connect(CITUS_URL, host=host, port=port) as conn:
            rows = conn.execute(f"SELECT ns, id FROM {b.schema}.{tab}_{shard}").fetchall()
        out += [(f"{host}:{port}", ns, i) for ns, i in rows]
    return sorted(out)


def _ids(found: list[tuple[str, str, str]], ns: str = "default") -> set[str]:
    return {i for _, n, i in found if n == ns}


def _fresh(store: Store) -> str:
    """The pgvector table's name, none of it left in the store's schema (an
    earlier test's store may have made one there)."""
    tab = vector_tables.table_name(EMB.name, 64, "halfvec")
    with _coordinator(store) as conn:
        conn.execute(f"DROP TABLE IF EXISTS {tab}")
    return tab


def _on_the_coordinator(store: Store) -> str:
    """A pgvector table as an earlier version made it on Citus: local to the
    coordinator, hash-partitioned, its key to the distributed ``vectors``;
    known to this process already, as it was to the process that made it."""
    b: Any = store._engine.backend
    tab = vector_tables.ensure(b._pool, b.pgvector(), EMB.name, 64, citus=False)
    b.__dict__["_pgv_tables"][(EMB.name, 64)] = tab
    return tab


def _written(store: Store) -> None:
    fill(store)
    store.add_event("o0", namespace="other")
    store.add_memory("用户说花生", sources=["o0"], id="m3", namespace="other")
    store.search("花生", at="e39", embedder=EMB)
    store.search("花生", at="x1", embedder=EMB)
    store.search("花生", at="o0", embedder=EMB, namespace="other")


@pytest.mark.parametrize("layout", ["distributed", "coordinator"])
def test_a_purge_leaves_no_vector_row_on_any_node(opened: Callable[[], Store], layout: str) -> None:
    """The table the backend makes is distributed beside ``vectors``: its
    foreign key cascades on each worker. From a table an earlier version made
    on the coordinator the workers' deletes never took a row: the purge
    deletes its rows itself."""
    store = opened()
    tab = _fresh(store)
    if layout == "coordinator":
        _on_the_coordinator(store)
    _written(store)
    with _coordinator(store) as conn:
        assert vector_tables.distributed(conn, tab) == (layout == "distributed")
    found = copies(store, tab)
    assert _ids(found) == {f"m{i}" for i in range(40)} | {f"h{i}" for i in range(20)}
    where = {w for w, _, _ in found}
    assert where == {"coordinator"} if layout == "coordinator" else "coordinator" not in where

    store.purge(memories=["m3"])
    store.purge(events=["x1"])  # the records naming x1 go, and their vectors
    found = copies(store, tab)
    assert _ids(found) == {f"m{i}" for i in range(40) if i != 3}
    assert _ids(found, "other") == {"m3"}  # the other namespace's m3 stays

    store.purge(namespace="default", whole_namespace=True)
    found = copies(store, tab)
    assert [r for r in found if r[1] != "other"] == []
    assert _ids(found, "other") == {"m3"}
    with _coordinator(store) as conn:
        left = conn.execute("SELECT count(*) FROM vectors WHERE ns = 'default'").fetchone()
    assert left == (0,)


def test_a_table_left_on_the_coordinator_is_made_again_distributed(
    opened: Callable[[], Store],
) -> None:
    """The first time a process needs the table, one an earlier version left
    on the coordinator (holding vectors its purges left behind) is dropped
    and made again distributed, from the vectors stored: nothing purged
    comes back, and the search runs on the shards."""
    store = opened()
    b: Any = store._engine.backend
    tab = _fresh(store)
    _on_the_coordinator(store)
    _written(store)
    b._citus = False  # purged as the earlier version did: by the foreign key
    store.purge(memories=["m3"])
    b._citus = True
    assert ("coordinator", "default", "m3") in copies(store, tab)  # left behind

    b.__dict__["_pgv_tables"] = {}  # a process that has not asked for the table yet
    assert b.vector_table(EMB.name, 64) == tab  # as a search asks for it
    used, words = b.nearest_plan("default", EMB.name, [1.0] + [0.0] * 63, {0: 100}, 5)
    assert used and words.endswith(" on a worker"), words
    with _coordinator(store) as conn:
        assert vector_tables.distributed(conn, tab)
        stored = conn.execute("SELECT ns, id FROM vectors ORDER BY 1, 2").fetchall()
    found = copies(store, tab)
    assert "coordinator" not in {w for w, _, _ in found}
    assert sorted((ns, i) for _, ns, i in found) == [tuple(r) for r in stored]
    assert _ids(found) == {f"m{i}" for i in range(40) if i != 3} | {f"h{i}" for i in range(20)}


def test_the_hnsw_scan_runs_on_the_worker_and_explain_says_so(
    opened: Callable[[], Store],
    hnsw_always: list[str],  # noqa: F811 (the fixture)
) -> None:
    """The search's settings (``hnsw.ef_search``, the scans turned off) reach
    the worker with ``citus.propagate_set_commands = 'local'``: its plan
    scans the shard's HNSW index. Without it the worker scanned and sorted,
    and ``explain`` now says which plan ran."""
    store = opened()
    _fresh(store)
    fill(store)
    hits = store.search("成都 预算", at="e39", k=3, embedder=EMB, explain=True, mode="vector")
    assert hits[0].explanation is not None
    scoring = hits[0].explanation.scoring
    tab = vector_tables.table_name(EMB.name, 64, "halfvec")
    assert "vectors from pgvector HNSW" in scoring, scoring
    assert f"(the plan: Index Scan using {tab}_hnsw_" in scoring and "on a worker)" in scoring
    b: Any = store._engine.backend
    q = [1.0] + [0.0] * 63
    used, words = b.nearest_plan("default", EMB.name, q, {0: 100}, 5)
    assert used and words.startswith(f"Index Scan using {tab}_hnsw_"), words
    # The settings left on the coordinator, as before: the worker sorts.
    b._citus = False
    try:
        used, words = b.nearest_plan("default", EMB.name, q, {0: 100}, 5)
    finally:
        b._citus = True
    assert not used and "Sort" in words, words
