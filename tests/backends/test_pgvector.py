"""pgvector on the PostgreSQL backend: found and used without configuration,
the vectors mirrored and erased with their records, and the gate first on the
HNSW path (a property test), with its fallback to exact ranking.

Runs on the session's own PostgreSQL 18 with pgvector (pg_helpers.PGSERVER);
the checks that a server without the extension is left as it was run on the
system PostgreSQL (BRANCHMEM_TEST_POSTGRES), which has none.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_search_properties import build, check_search

from branchmem import HashingEmbedder, Store
from branchmem.backends.postgres import vector_tables
from branchmem.backends.postgres.vector_tables import table_name
from branchmem.gate import ranges
from branchmem.retrieval import ann, fastfuse, server_ann
from helpers.pg_helpers import (
    PG_URL,
    PGSERVER,
    PGSERVER_SKIP,
    PGV_SCHEMAS,
    SKIP_REASON,
    Tracer,
    open_backend,
)
from helpers.strategies import histories

pgv = pytest.mark.skipif(not PGSERVER.available(), reason=PGSERVER_SKIP)
EMB = HashingEmbedder(64)


@pytest.fixture
def opened() -> Iterator[Callable[[], Store]]:
    tracer = Tracer()
    stores: list[Store] = []

    def make() -> Store:
        s = Store(backend=open_backend(tracer, PGV_SCHEMAS))
        stores.append(s)
        return s

    yield make
    for s in stores:
        s.close()
    assert not tracer.problems, tracer.problems[:3]


@pytest.fixture
def hnsw_always(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every search with vectors takes the pgvector path (a pool of 4 or 4k),
    however few records are visible; the paths taken are collected."""
    monkeypatch.setattr(fastfuse, "FAST_MIN", 1)
    monkeypatch.setattr(server_ann.SETTINGS, "min_visible", 1)
    monkeypatch.setattr(server_ann.SETTINGS, "min_gain", 0)
    monkeypatch.setattr(server_ann.SETTINGS, "pool", 4)
    monkeypatch.setattr(ann.SETTINGS, "far_share", 0)
    paths: list[str] = []
    real = server_ann._pool

    def noted(*args: Any) -> Any:
        out = real(*args)
        paths.append(server_ann.PATH.get() or "")
        return out

    monkeypatch.setattr(server_ann, "_pool", noted)
    return paths


def fill(store: Store, n: int = 40) -> None:
    store.add_events([{"id": "e0"}] + [{"id": f"e{i}", "parent": f"e{i - 1}"} for i in range(1, n)])
    store.add_events([{"id": "x0", "parent": "e5"}, {"id": "x1", "parent": "x0"}])
    words = ["杭州", "成都", "花生", "过敏", "预算", "搬家"]
    mems = [
        {
            "id": f"m{i}",
            "content": f"用户说{words[i % 6]}和{words[(i * 5) % 6]}{i}",
            "sources": [f"e{i}"],
        }
        for i in range(n)
    ]
    mems += [
        {"id": f"h{i}", "content": f"用户说{words[i % 6]}{i}", "sources": ["x1"]} for i in range(20)
    ]
    store.add_memories(mems)


def vector_rows(store: Store, table: str) -> list[tuple[str, str]]:
    b: Any = store._engine.backend
    with psycopg.connect(PGV_SCHEMAS.url, options=f"-c search_path={b.schema}") as conn:
        rows = conn.execute(f"SELECT ns, id FROM {table} ORDER BY ns, id").fetchall()
    return [(r[0], r[1]) for r in rows]


@pgv
def test_a_store_on_a_server_with_pgvector_uses_it_and_says_so(opened: Callable[[], Store]) -> None:
    store = opened()
    fill(store)
    store.search("花生", at="e39", embedder=EMB)
    got = store.info()["vectors"]
    assert got["pgvector"] and got["pgvector"] >= "0.5"
    tab = table_name(EMB.name, 64, "halfvec")  # pgvector 0.7 and later: half precision
    assert got["tables"] == [
        {"embedder": EMB.name, "dim": 64, "table": tab, "type": "halfvec", "partitions": 16}
    ]
    # Every vector the search wrote is in the pgvector table too (the visible ones).
    assert vector_rows(store, tab) == sorted(("default", f"m{i}") for i in range(40))


@pgv
def test_pgvector_rows_go_with_their_records(opened: Callable[[], Store]) -> None:
    store = opened()
    fill(store)
    store.search("花生", at="x1", embedder=EMB)
    tab = table_name(EMB.name, 64, "halfvec")
    assert ("default", "m3") in vector_rows(store, tab)
    store.purge(memories=["m3"])
    assert ("default", "m3") not in vector_rows(store, tab)
    store.purge(events=["x1"])  # the records naming x1 go, and their vectors
    assert not [r for r in vector_rows(store, tab) if r[1].startswith("h")]


@pgv
def test_a_new_table_is_filled_from_the_vectors_already_stored(
    opened: Callable[[], Store], monkeypatch: pytest.MonkeyPatch, hnsw_always: list[str]
) -> None:
    """Vectors stored while pgvector was off: the first search that wants the
    index makes the table from them (nothing is embedded again)."""
    monkeypatch.setenv("BRANCHMEM_PGVECTOR", "off")
    store = opened()
    b: Any = store._engine.backend
    b.__dict__.pop("_pgv_ext", None)  # a reused test backend: looked up again
    fill(store)
    store.search("花生", at="e39", embedder=HashingEmbedder(48))
    assert store.info()["vectors"]["pgvector"] is None and not hnsw_always
    monkeypatch.delenv("BRANCHMEM_PGVECTOR")
    b.__dict__.pop("_pgv_ext", None)  # as a process started without the setting sees it
    hits = store.search("花生", at="e39", embedder=HashingEmbedder(48), explain=True)
    assert len(vector_rows(store, table_name("hashing-48", 48, "halfvec"))) == 40
    assert hits[0].explanation is not None
    assert "vectors from pgvector HNSW" in hits[0].explanation.scoring


def old_table(store: Store, kind: str) -> str:
    """The table of `EMB` as an older version made it and registered it: one
    plain table, without ``seg`` and ``pos``."""
    b: Any = store._engine.backend
    s = b.pgvector().schema
    tab = table_name(EMB.name, 64, kind)
    with psycopg.connect(PGV_SCHEMAS.url, options=f"-c search_path={b.schema}") as conn:
        conn.execute(f"DROP TABLE IF EXISTS {tab}")  # left by an earlier test on this schema
        conn.execute(
            f"CREATE TABLE {tab} (ns text NOT NULL, embedder text NOT NULL, id text NOT NULL, "
            f"digest text NOT NULL, vec {s}.{kind}(64) NOT NULL, PRIMARY KEY (ns, id))"
        )
        conn.execute(
            f"ALTER TABLE {tab} ADD CONSTRAINT {tab}_vectors FOREIGN KEY (ns, embedder, id) "
            "REFERENCES vectors (ns, embedder, id) ON DELETE CASCADE"
        )
        conn.execute(f"CREATE INDEX {tab}_hnsw ON {tab} USING hnsw (vec {s}.{kind}_cosine_ops)")
        conn.execute(
            "INSERT INTO vector_tables (ns, embedder, dim, tab) VALUES ('', %s, 64, %s)",
            (EMB.name, tab),
        )
    b.__dict__["_pgv_tables"] = {}  # a reused test backend: looked up again
    return tab


def positions(store: Store, table: str) -> dict[str, tuple[Any, Any]]:
    """Each row's copy of its record's position, by id."""
    b: Any = store._engine.backend
    with psycopg.connect(PGV_SCHEMAS.url, options=f"-c search_path={b.schema}") as conn:
        rows = conn.execute(f"SELECT id, seg, pos FROM {table}").fetchall()
    return {r[0]: (r[1], r[2]) for r in rows}


def record_positions(store: Store) -> dict[str, tuple[Any, Any]]:
    b: Any = store._engine.backend
    with psycopg.connect(PGV_SCHEMAS.url, options=f"-c search_path={b.schema}") as conn:
        rows = conn.execute("SELECT id, seg, pos FROM records").fetchall()
    return {r[0]: (r[1], r[2]) for r in rows}


@pgv
def test_a_table_made_as_vector_stays_in_use(
    opened: Callable[[], Store], hnsw_always: list[str]
) -> None:
    """A store whose table an older version made with ``vector`` columns keeps
    it (the registry names it): written to, erased from and searched as before,
    given the position columns it lacked."""
    store = opened()
    old = old_table(store, "vector")
    fill(store)
    hits = store.search("花生", at="e39", embedder=EMB, explain=True)
    assert hits and "vectors from pgvector HNSW" in (hits[0].explanation.scoring or "")  # type: ignore[union-attr]
    assert store.info()["vectors"]["tables"] == [
        {"embedder": EMB.name, "dim": 64, "table": old, "type": "vector", "partitions": 0}
    ]
    assert len(vector_rows(store, old)) == 40
    assert positions(store, old) == {k: v for k, v in record_positions(store).items() if k in
                                     positions(store, old)}  # fmt: skip
    store.purge(memories=["m3"])
    assert ("default", "m3") not in vector_rows(store, old)


@pgv
def test_rows_carry_their_records_positions_and_rows_without_are_tested_against_records(
    opened: Callable[[], Store], hnsw_always: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each pgvector row copies its record's index position, which the search's
    range test reads. Rows without one (an older version's, or a record not yet
    placed when its vector was written) are tested against ``records``: the
    same hits either way, and never one the gate hides."""
    store = opened()
    fill(store)
    tab = table_name(EMB.name, 64, "halfvec")
    store.search("花生", at="x1", embedder=EMB)  # every record visible at x1 embedded
    store.search("花生", at="e39", embedder=EMB)
    got = positions(store, tab)
    assert len(got) == 60 and all(seg is not None for seg, _ in got.values())
    assert got == {k: v for k, v in record_positions(store).items() if k in got}
    queries = ["花生 过敏", "成都", "预算 搬家"]
    with_pos = {
        (a, q): [h.memory.id for h in store.search(q, at=a, k=5, embedder=EMB, mode="vector")]
        for a in ("e39", "x1", "e3")
        for q in queries
    }
    b: Any = store._engine.backend
    trunk = ranges(store._engine, "default", "e39")
    q = [1.0] + [0.0] * 63
    assert {i for i, _ in b.nearest("default", EMB.name, q, trunk, 100)} == {
        f"m{i}" for i in range(40)
    }  # the side branch's records (h*) are out of the trunk's ranges
    with psycopg.connect(PGV_SCHEMAS.url, options=f"-c search_path={b.schema}") as conn:
        conn.execute(f"UPDATE {tab} SET seg = NULL, pos = NULL")
    assert {i for i, _ in b.nearest("default", EMB.name, q, trunk, 100)} == {
        f"m{i}" for i in range(40)
    }
    b._fresh_state()
    without = {
        (a, q): [h.memory.id for h in store.search(q, at=a, k=5, embedder=EMB, mode="vector")]
        for a in ("e39", "x1", "e3")
        for q in queries
    }
    assert without == with_pos
    assert not {i for (a, _), ids in with_pos.items() if a != "x1" for i in ids if i[0] == "h"}
    assert all("vectors from pgvector HNSW" in p for p in hnsw_always), hnsw_always


@pgv
def test_a_record_placed_after_its_vector_is_found_where_the_gate_shows_it(
    opened: Callable[[], Store], hnsw_always: list[str]
) -> None:
    """A record whose source event arrives after it (and after its vector) is
    placed then; its pgvector row, written unplaced, is range-tested against
    ``records``: found at the anchors that see the event, nowhere else."""
    store = opened()
    fill(store)
    store.add_memory("用户说花生过敏很严重", sources=["late"], id="late-m")
    b: Any = store._engine.backend
    with b.transaction():
        from branchmem.retrieval.vectors import digest, unit_vector

        vec = unit_vector(EMB.embed_passages(["用户说花生过敏很严重"])[0], EMB)
        b.put_vectors(
            "default", EMB.name, [("late-m", digest("用户说花生过敏很严重"), vec.tobytes())]
        )
    tab = table_name(EMB.name, 64, "halfvec")
    assert positions(store, tab)["late-m"] == (None, None)
    store.add_events([{"id": "late", "parent": "x1"}])
    seen = store.search("花生过敏很严重", at="late", k=3, embedder=EMB, mode="vector")
    assert seen and seen[0].memory.id == "late-m"
    for anchor in ("x1", "e39"):
        hits = store.search("花生过敏很严重", at=anchor, k=3, embedder=EMB, mode="vector")
        assert "late-m" not in [h.memory.id for h in hits]
    assert any("vectors from pgvector HNSW" in p for p in hnsw_always), hnsw_always


@pgv
def test_a_namespace_reads_its_own_partition_only(opened: Callable[[], Store]) -> None:
    """The table is hash-partitioned by namespace: the search's statement,
    planned as the backend sends it, scans one partition's HNSW index."""
    store = opened()
    fill(store)
    store.search("花生", at="e39", embedder=EMB)
    b: Any = store._engine.backend
    sent: list[tuple[str, Any]] = []
    b._trace = lambda sql, params: sent.append((sql, params))
    b.nearest("default", EMB.name, [1.0] + [0.0] * 63, {0: 100}, 5)
    sql, params = sent[-1]
    tab = table_name(EMB.name, 64, "halfvec")
    with psycopg.connect(PGV_SCHEMAS.url, options=f"-c search_path={b.schema},public") as conn:
        conn.execute("SET enable_seqscan = off")
        plan = "\n".join(r[0] for r in conn.execute("EXPLAIN " + sql, params).fetchall())
        parts = conn.execute(
            "SELECT count(*) FROM pg_inherits WHERE inhparent = %s::regclass", (tab,)
        ).fetchone()[0]
    assert parts == vector_tables.PARTITIONS == 16
    scanned = set(re.findall(rf"on ({tab}_\d+) ", plan))
    assert len(scanned) == 1, plan
    assert re.search(rf"Index Scan using \S+ on {tab}_\d+", plan), plan


class _Conn:
    """A connection that records statements and fails the first index build
    asked with more memory, as a container's small shared memory makes it fail."""

    def __init__(self, have_kb: int) -> None:
        self.sent: list[str] = []
        self.have_kb = have_kb
        self.failed = False

    def execute(self, sql: str) -> Any:
        self.sent.append(sql)
        more = any(x.startswith("SET LOCAL maintenance_work_mem") for x in self.sent)
        if sql.startswith("CREATE INDEX") and more and not self.failed:
            self.failed = True
            raise psycopg.errors.DiskFull("could not resize shared memory segment")
        return self

    def fetchone(self) -> tuple[int]:
        return (self.have_kb * 1024,)

    def transaction(self) -> Any:
        import contextlib

        conn = self

        @contextlib.contextmanager
        def savepoint() -> Iterator[None]:
            try:
                yield
            except Exception:
                conn.sent.append("ROLLBACK TO SAVEPOINT")
                raise

        return savepoint()


def test_an_index_build_asks_for_the_memory_its_graph_needs_and_falls_back() -> None:
    """Built with enough ``maintenance_work_mem`` for the graph (the in-memory
    build); where that fails (a parallel build's shared memory), built again
    with the server's own settings. Small tables keep the server's setting."""
    index = "CREATE INDEX t_hnsw ON t USING hnsw (vec halfvec_cosine_ops)"
    conn = _Conn(have_kb=64 * 1024)
    vector_tables.build_index(conn, "hvec_t_256", index, 1_000_000, 256)
    need_kb = vector_tables.build_memory(1_000_000, 256, "halfvec") // 1024
    assert need_kb > 64 * 1024
    assert conn.sent[1:] == [
        f"SET LOCAL maintenance_work_mem = '{need_kb}kB'",
        index,
        "ROLLBACK TO SAVEPOINT",
        index,
    ]
    small = _Conn(have_kb=64 * 1024)
    vector_tables.build_index(small, "hvec_t_256", index, 1_000, 256)
    assert small.sent[1:] == [index]
    fine = _Conn(have_kb=64 * 1024)
    fine.failed = True  # the build with more memory succeeds
    vector_tables.build_index(fine, "hvec_t_256", index, 1_000_000, 256)
    assert fine.sent[1:] == [f"SET LOCAL maintenance_work_mem = '{need_kb}kB'", index]


@pgv
def test_a_small_share_of_the_namespace_is_ranked_exactly_and_says_why(
    opened: Callable[[], Store], hnsw_always: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The index scan steps through the namespace's rows of its part, the
    visible and the hidden: where the candidates times their share of those
    rows is below ``min_gain``, the search ranks exactly, and says why."""
    store = opened()
    fill(store)  # 60 records: 40 visible at e39, 27 at x1
    store.search("花生", at="x1", embedder=EMB)
    store.search("花生", at="e39", embedder=EMB)
    b: Any = store._engine.backend
    assert b.vector_part_rows("default", EMB.name, 64) >= 60
    monkeypatch.setattr(server_ann.SETTINGS, "min_gain", 40 * 40 / 60 + 1)
    hits = store.search("花生", at="e39", embedder=EMB, explain=True, mode="vector")
    assert hits[0].explanation is not None
    assert "too small a share for its index" in hits[0].explanation.scoring
    assert "40 gated of about 60 rows" in hits[0].explanation.scoring
    monkeypatch.setattr(server_ann.SETTINGS, "min_gain", 40 * 40 / 60 - 1)
    hits = store.search("花生", at="e39", embedder=EMB, explain=True, mode="vector")
    assert "vectors from pgvector HNSW" in (hits[0].explanation.scoring or "")  # type: ignore[union-attr]


@pytest.mark.skipif(not PG_URL, reason=SKIP_REASON)
def test_without_the_extension_nothing_changes(hnsw_always: list[str]) -> None:
    """The system PostgreSQL has no pgvector: no table, no pgvector path, no
    explanation of one, and the same hits as the in-process ranking."""
    with psycopg.connect(PG_URL) as conn:
        if conn.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'").fetchone():
            pytest.skip("this server offers pgvector (a Citus cluster with it, say)")
    tracer = Tracer()
    store = Store(backend=open_backend(tracer))
    try:
        fill(store)
        assert store.info()["vectors"]["pgvector"] is None
        hits = store.search("花生", at="e39", embedder=EMB, explain=True, mode="vector")
        assert hits and not hnsw_always
        assert all("pgvector" not in (h.explanation.scoring if h.explanation else "") for h in hits)
        assert store.info()["vectors"].get("tables") is None
    finally:
        store.close()
    assert not tracer.problems


@pgv
def test_explain_names_the_path_and_hnsw_matches_exact(
    opened: Callable[[], Store], hnsw_always: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    store = opened()
    fill(store)
    for mode in ("vector", "hybrid"):
        hits = store.search("成都 预算", at="e39", k=3, embedder=EMB, explain=True, mode=mode)
        assert hits[0].explanation is not None
        assert "vectors from pgvector HNSW" in hits[0].explanation.scoring
        # What the server's plan did, asked since the search explains itself.
        assert "(the plan: Index Scan using " in hits[0].explanation.scoring
        monkeypatch.setattr(server_ann.SETTINGS, "enabled", False)
        exact = store.search("成都 预算", at="e39", k=3, embedder=EMB, explain=True, mode=mode)
        monkeypatch.setattr(server_ann.SETTINGS, "enabled", True)
        assert exact[0].explanation is not None
        assert "vectors ranked exactly in process" in exact[0].explanation.scoring
        # 40 visible vectors: the index finds the true neighbours, so the same hits.
        assert [h.memory.id for h in hits] == [h.memory.id for h in exact]


@pgv
def test_too_few_gated_neighbours_fall_back_to_exact(
    opened: Callable[[], Store], hnsw_always: list[str]
) -> None:
    """A filter that keeps few of the visible records: the neighbours the index
    gives are mostly filtered out here, so the search ranks exactly, or the
    neighbours it kept already cover every record the gate and filter let
    through (``pool N of N gated``), which is the exact answer too."""
    store = opened()
    fill(store)
    store.add_memory("用户说花生过敏很严重", sources=["e2"], id="ep", kind="episodic")
    store.search("花生", at="e39", embedder=EMB)  # every visible record embedded
    hits = store.search("花生", at="e39", k=1, embedder=EMB, kind="episodic", explain=True)
    assert [h.memory.id for h in hits] == ["ep"]
    assert hits[0].explanation is not None
    scoring = hits[0].explanation.scoring
    assert "ranked exactly: pgvector HNSW gave" in scoring or re.search(
        r"pool (\d+) of \1 gated", scoring
    ), scoring


@pgv
def test_search_on_the_hnsw_path_never_returns_what_the_gate_hides(
    opened: Callable[[], Store], hnsw_always: list[str]
) -> None:
    """tests/retrieval/test_search_properties.py's property, every search with vectors
    taking the pgvector path: each hit is in ``memories(at=)`` at its ``via``."""

    @settings(
        max_examples=25,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    )
    @given(histories(), st.data())
    def prop(hist: Any, data: st.DataObject) -> None:
        store = build(opened, hist, ["杭州", "成都", "花生", "过敏", "预算", "Python"])
        check_search(store, hist, EMB, data)
        store.close()

    prop()
    assert any("vectors from pgvector HNSW" in p for p in hnsw_always), hnsw_always[:5]


def test_on_citus_the_table_is_one_plain_table_distributed_beside_vectors() -> None:
    """Citus shards by namespace already: the operator's statements make one
    plain table (no hash parts), distribute it beside ``vectors``, then add
    its key, index and registry row, in that order."""
    made = vector_tables.citus_table_statements("public", EMB.name, 64)
    tab = table_name(EMB.name, 64, "halfvec")
    assert made[0].startswith(f"CREATE TABLE IF NOT EXISTS {tab} (") and "PARTITION" not in made[0]
    assert "seg bigint, pos bigint" in made[0]
    assert made[1] == (
        f"SELECT create_distributed_table('{tab}', 'ns', colocate_with => 'vectors');"
    )
    assert made[2].startswith(f"ALTER TABLE {tab} ADD CONSTRAINT {tab}_vectors FOREIGN KEY")
    assert made[3].startswith(f"CREATE INDEX IF NOT EXISTS {tab}_hnsw ON {tab} USING hnsw")
    assert made[4].startswith("INSERT INTO vector_tables") and len(made) == 5
    parts = vector_tables.table_statements("public", EMB.name, 64).make
    assert parts[0].endswith("PARTITION BY HASH (ns)") and len(parts) == 1 + 16
