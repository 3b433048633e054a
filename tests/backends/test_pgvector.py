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
from branchmem.backends.postgres.vector import table_name, table_statements
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
    assert got["tables"] == [{"embedder": EMB.name, "dim": 64, "table": tab, "type": "halfvec"}]
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


@pgv
def test_a_table_made_as_vector_stays_in_use(
    opened: Callable[[], Store], hnsw_always: list[str]
) -> None:
    """A store whose table an older version made with ``vector`` columns keeps
    it (the registry names it): written to, erased from and searched as before."""
    store = opened()
    b: Any = store._engine.backend
    ext = b.pgvector()
    old = table_name(EMB.name, 64, "vector")
    with psycopg.connect(PGV_SCHEMAS.url, options=f"-c search_path={b.schema}") as conn:
        for sql in table_statements(ext.schema, EMB.name, 64, "vector"):
            conn.execute(sql)
        conn.execute(
            "INSERT INTO vector_tables (ns, embedder, dim, tab) VALUES ('', %s, 64, %s)",
            (EMB.name, old),
        )
    b.__dict__["_pgv_tables"] = {}  # a reused test backend: looked up again
    fill(store)
    hits = store.search("花生", at="e39", embedder=EMB, explain=True)
    assert hits and "vectors from pgvector HNSW" in (hits[0].explanation.scoring or "")  # type: ignore[union-attr]
    assert store.info()["vectors"]["tables"] == [
        {"embedder": EMB.name, "dim": 64, "table": old, "type": "vector"}
    ]
    assert len(vector_rows(store, old)) == 40
    store.purge(memories=["m3"])
    assert ("default", "m3") not in vector_rows(store, old)


@pytest.mark.skipif(not PG_URL, reason=SKIP_REASON)
def test_without_the_extension_nothing_changes(hnsw_always: list[str]) -> None:
    """The system PostgreSQL has no pgvector: no table, no pgvector path, no
    explanation of one, and the same hits as the in-process ranking."""
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
