"""PostgreSQL only: URLs, schema versions, the namespace check, concurrent writer processes.

The rest of the suite runs on PostgreSQL through the ``make_store`` fixture.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_coherence import STEP
from test_coherence import _run as run_steps

from branchmem import StorageError, Store
from branchmem.backends.migrations import CURRENT
from helpers.pg_helpers import PG_URL, SCHEMAS, SKIP_REASON, examples, statement_problem

pytestmark = pytest.mark.skipif(not PG_URL, reason=SKIP_REASON)


@pytest.fixture
def schema() -> Iterator[str]:
    name = SCHEMAS.take()
    yield name
    SCHEMAS.give_back([name])


def _url(schema: str, scheme: str = "postgresql") -> str:
    rest = PG_URL.split("://", 1)[1]
    sep = "&" if "?" in rest else "?"
    return f"{scheme}://{rest}{sep}options={quote(f'-csearch_path={schema}')}"


def _backend(schema: str) -> Store:
    from branchmem.backends.postgres import PostgresBackend

    return Store(backend=PostgresBackend(PG_URL, schema=schema))


def test_both_url_schemes_open_the_same_store(schema: str) -> None:
    _backend(schema).close()  # creates the schema
    with Store(_url(schema)) as a:
        a.add_event("e1", content="你好")
        a.add_memory("fact", sources=["e1"], id="m1")
    with Store(_url(schema, "postgres")) as b:
        assert [m.id for m in b.memories(at="e1")] == ["m1"]


def test_an_unreachable_server_is_a_storage_error() -> None:
    with pytest.raises(StorageError, match=r"(?s)cannot open PostgreSQL store.*check the URL"):
        Store("postgresql://nobody:secret@127.0.0.1:1/none")


def test_the_password_stays_out_of_messages() -> None:
    with pytest.raises(StorageError) as exc:
        Store("postgresql://nobody:secret@127.0.0.1:1/none")
    assert "secret" not in str(exc.value)


def test_create_false_refuses_a_database_without_a_store() -> None:
    with pytest.raises(StorageError, match="no branchmem store"):
        Store(_url("bmt_no_such_schema"), create=False)


def test_a_newer_schema_is_refused(schema: str) -> None:
    import psycopg

    _backend(schema).close()
    with psycopg.connect(PG_URL, autocommit=True) as conn:
        conn.execute(f"INSERT INTO {schema}.schema_version VALUES (99, 0)")
    try:
        with pytest.raises(StorageError, match=r"schema version 99.*newer branchmem"):
            _backend(schema)
    finally:
        with psycopg.connect(PG_URL, autocommit=True) as conn:
            conn.execute(f"DELETE FROM {schema}.schema_version WHERE version = 99")
    with psycopg.connect(PG_URL, autocommit=True) as conn:
        got = conn.execute(f"SELECT version FROM {schema}.schema_version").fetchall()
    assert got == [(CURRENT,)]


def test_a_version_3_store_upgrades_in_place(schema: str) -> None:
    """Version 3 as the first PostgreSQL release made it: no counters, no vectors."""
    import psycopg

    with _backend(schema) as store:
        store.add_event("e1", content="x")
        store.add_memory("fact", sources=["e1"], id="m1")
    with psycopg.connect(PG_URL, autocommit=True) as conn:
        conn.execute(f"DROP TABLE {schema}.counters, {schema}.vectors")
        conn.execute(f"UPDATE {schema}.schema_version SET version = 3")
    with _backend(schema) as store:
        assert [m.id for m in store.memories(at="e1")] == ["m1"]
        store.search("fact", at="e1", embedder="hashing")  # stores a vector
        with psycopg.connect(PG_URL, autocommit=True) as conn:
            assert conn.execute(f"SELECT count(*) FROM {schema}.vectors").fetchone() == (1,)
        store.purge(memories=["m1"])
        assert store._engine.generation().erasures == 1
    with psycopg.connect(PG_URL, autocommit=True) as conn:
        got = conn.execute(f"SELECT version FROM {schema}.schema_version ORDER BY 1").fetchall()
        left = conn.execute(f"SELECT count(*) FROM {schema}.vectors").fetchone()
    assert [v for (v,) in got] == list(range(3, CURRENT + 1)) and left == (0,)


def test_a_version_5_store_numbers_its_events_by_arrival(schema: str) -> None:
    """Version 6 adds ``arrival``: a store without it upgrades in place, on
    Citus too (which refuses a serial column added to a distributed table):
    each namespace's events keep the order the table holds them in, and
    events written later come after them."""
    import psycopg

    with _backend(schema) as store:
        store.add_event("e0")
        for name in ("b", "a", "c"):
            store.add_event(name, parent="e0")
        store.add_event("x0", namespace="other")
    with psycopg.connect(PG_URL, autocommit=True) as conn:
        conn.execute(f"ALTER TABLE {schema}.events DROP COLUMN arrival")
        conn.execute(f"DROP SEQUENCE IF EXISTS {schema}.events_arrival_seq")
        conn.execute(f"DELETE FROM {schema}.schema_version")  # as version 5 made it
        conn.execute(f"INSERT INTO {schema}.schema_version VALUES (5, 0)")
    with _backend(schema) as store:
        store.add_event("d", parent="e0")
        store.add_event("x1", parent="x0", namespace="other")
        assert [e.id for e in store.children("e0")] == ["b", "a", "c", "d"]
        assert [e.id for e in store.children("x0", namespace="other")] == ["x1"]
    with psycopg.connect(PG_URL, autocommit=True) as conn:
        got = conn.execute(f"SELECT version FROM {schema}.schema_version ORDER BY 1").fetchall()
        nulls = conn.execute(
            f"SELECT count(*) FROM {schema}.events WHERE arrival IS NULL"
        ).fetchone()
    assert [v for (v,) in got] == list(range(5, CURRENT + 1)) and nulls == (0,)


def test_a_store_with_its_arrival_column_skips_the_step_that_adds_it(schema: str) -> None:
    """The step that adds ``arrival`` is skipped where the column exists (on
    Citus its ``ADD COLUMN IF NOT EXISTS ... bigserial`` was refused even so)."""
    import psycopg

    with _backend(schema) as store:
        store.add_event("e0")
        store.add_event("a", parent="e0")
    with psycopg.connect(PG_URL, autocommit=True) as conn:
        conn.execute(f"DELETE FROM {schema}.schema_version")
        conn.execute(f"INSERT INTO {schema}.schema_version VALUES (5, 0)")
        before = conn.execute(f"SELECT id, arrival FROM {schema}.events ORDER BY 2").fetchall()
    with _backend(schema) as store:
        store.add_event("b", parent="e0")
        assert [e.id for e in store.children("e0")] == ["a", "b"]
    with psycopg.connect(PG_URL, autocommit=True) as conn:
        after = conn.execute(f"SELECT id, arrival FROM {schema}.events ORDER BY 2").fetchall()
    assert after[:2] == before and after[2][0] == "b" and after[2][1] > before[-1][1]


def test_a_table_made_while_a_connection_waited_is_seen_by_the_schema_check() -> None:
    """`schema.has_table` reads the catalogs in its statement's snapshot: a
    name the connection looked up before another made the table is not
    answered from its cache (``to_regclass`` was: an opener of a new schema
    then made its tables again and recorded their version twice)."""
    import uuid

    import psycopg

    from branchmem.backends.postgres.schema import has_table

    name = "bmt_seen_" + uuid.uuid4().hex[:10]
    opts = f"-c search_path={name}"
    with (
        psycopg.connect(PG_URL, autocommit=True) as a,
        psycopg.connect(PG_URL, autocommit=True, options=opts) as b,
    ):
        a.execute(f"CREATE SCHEMA {name}")
        try:
            assert not has_table(b, "t") and b.execute("SELECT to_regclass('t')").fetchone() == (
                None,
            )
            b.execute("BEGIN")
            a.execute(f"CREATE TABLE {name}.t (x int)")
            a.execute(f"ALTER TABLE {name}.t ADD COLUMN y int")
            assert has_table(b, "t") and has_table(b, "t", "y") and not has_table(b, "t", "z")
            b.execute("ROLLBACK")
        finally:
            a.execute(f"DROP SCHEMA {name} CASCADE")


def test_a_version_7_store_gets_write_counters(schema: str) -> None:
    """Version 8 adds ``ns_counters``: a store without it upgrades, and its
    first write after the upgrade moves the namespace's counter."""
    import psycopg

    with _backend(schema) as store:
        store.add_event("e1", content="x")
    with psycopg.connect(PG_URL, autocommit=True) as conn:
        conn.execute(f"DROP TABLE {schema}.ns_counters")
        conn.execute(f"DELETE FROM {schema}.schema_version")  # as version 7 made it
        conn.execute(f"INSERT INTO {schema}.schema_version VALUES (7, 0)")
    with _backend(schema) as store:
        b = store._engine.backend
        with b.reading():
            before = b.generation("default")
        store.add_memory("fact", sources=["e1"], id="m1")
        with b.reading():
            after = b.generation("default")
        assert after.writes != before.writes
        assert [m.id for m in store.memories(at="e1")] == ["m1"]
    with psycopg.connect(PG_URL, autocommit=True) as conn:
        got = conn.execute(f"SELECT version FROM {schema}.schema_version ORDER BY 1").fetchall()
    assert [v for (v,) in got] == [7, 8, 9, 10, 11, 12] == list(range(7, CURRENT + 1))


def test_a_version_8_store_gets_a_terms_table(schema: str) -> None:
    """Version 9 adds ``terms`` (each record's stored tokens): a store without
    it upgrades, its first search stores tokens there, a purge deletes them."""
    import psycopg

    with _backend(schema) as store:
        store.add_event("e1", content="x")
        store.add_memory("fact", sources=["e1"], id="m1")
    with psycopg.connect(PG_URL, autocommit=True) as conn:
        conn.execute(f"DROP TABLE {schema}.terms")
        conn.execute(f"DELETE FROM {schema}.schema_version")  # as version 8 made it
        conn.execute(f"INSERT INTO {schema}.schema_version VALUES (8, 0)")
    with _backend(schema) as store:
        assert [h.memory.id for h in store.search("fact", at="e1")] == ["m1"]
        with psycopg.connect(PG_URL, autocommit=True) as conn:
            rows = conn.execute(f"SELECT tokenizer, id FROM {schema}.terms").fetchall()
        assert rows == [("terms:stem:1", "m1")]
        store.purge(memories=["m1"])
    with psycopg.connect(PG_URL, autocommit=True) as conn:
        got = conn.execute(f"SELECT version FROM {schema}.schema_version ORDER BY 1").fetchall()
        left = conn.execute(f"SELECT count(*) FROM {schema}.terms").fetchone()
    assert [v for (v,) in got] == [8, 9, 10, 11, 12] == list(range(8, CURRENT + 1)) and left == (0,)


def test_the_namespace_check_catches_a_statement_without_one() -> None:
    ok = "SELECT id FROM records WHERE ns = %(ns)s AND id = ANY(%(ids)s)"
    assert statement_problem(ok, {"ns": "a", "ids": []}) is None
    assert statement_problem("SELECT id FROM records WHERE id = %(x)s", {"ns": "a"}) is not None
    assert statement_problem(ok, {"ids": []}) is not None
    join = "SELECT 1 FROM records c JOIN events e ON e.id = c.id WHERE c.ns = %(ns)s"
    assert statement_problem(join, {"ns": "a"}) is not None


# ------------------------------------------------------------- concurrent writers
WRITERS, PER_WRITER = 4, 12


def _writer(schema: str, k: int, ready: object) -> None:
    from branchmem.backends.postgres import PostgresBackend

    store = Store(backend=PostgresBackend(PG_URL, schema=schema))
    ready.wait()  # type: ignore[attr-defined]
    for i in range(PER_WRITER):
        store.remember(f"w{k}-{i}", branch="main", id=f"m-w{k}-{i}")
        if i % 3 == 0:  # and a private chain that arrives child first
            base = f"w{k}-{i}"
            store.add_event(f"{base}-c2", parent=f"{base}-c1", content="c2")
            store.add_memory(f"on {base}-c2", sources=[f"{base}-c2"], id=f"m-{base}-c2")
            store.add_event(f"{base}-c1", parent="root", content="c1")
    store.close()


def test_four_processes_write_one_branch_without_losing_a_write(schema: str) -> None:
    store = _backend(schema)
    try:
        store.add_event("root")
        store.create_branch("main", at="root")
        ctx = multiprocessing.get_context("spawn")
        ready = ctx.Event()
        procs = [ctx.Process(target=_writer, args=(schema, k, ready)) for k in range(WRITERS)]
        for p in procs:
            p.start()
        ready.set()
        for p in procs:
            p.join(timeout=300)
        assert [p.exitcode for p in procs] == [0] * WRITERS

        n = WRITERS * PER_WRITER
        chain = [e.id for e in store.path("main")]
        assert len(chain) == n + 1 and chain[0] == "root"  # every write built on the last head
        moves = store.history("main")
        assert [m.from_head for m in moves[1:]] == [m.to_head for m in moves[:-1]]
        on_main = {m.id for m in store.memories(at="main")}
        assert len(on_main) == n
        # The same events, written serially, give the same answers everywhere.
        serial = Store()
        serial.add_event("root")
        for eid in chain[1:]:
            ev = store.get_event(eid)
            serial.add_event(eid, parent=list(ev.parents), content=ev.content)
        late = [
            e
            for e in (f"w{k}-{i}" for k in range(WRITERS) for i in range(PER_WRITER))
            if int(e.split("-")[1]) % 3 == 0
        ]
        for base in late:
            serial.add_event(f"{base}-c1", parent="root", content="c1")
            serial.add_event(f"{base}-c2", parent=f"{base}-c1", content="c2")
        for m in store.memories(at="main") + [store.get_memory(f"m-{b}-c2") for b in late]:
            serial.add_memory(m.content, sources=list(m.sources), id=m.id)
        for at in [*chain, *(f"{b}-c2" for b in late), *(f"{b}-c1" for b in late)]:
            assert {m.id for m in store.memories(at=at)} == {m.id for m in serial.memories(at=at)}
        assert {m.id for m in store.memories(at=f"{late[0]}-c2")} == {f"m-{late[0]}-c2"}
    finally:
        store.close()


def test_batches_that_go_in_by_copy_with_a_stored_id_in_the_middle(schema: str) -> None:
    """Batches over COPY_FROM rows: a re-added identical event is a no-op, a
    clashing one refuses the whole batch, and nothing is half-written."""
    from branchmem import ConflictingEvent, UnknownEvent
    from branchmem.backends.postgres.conn import COPY_FROM

    n = COPY_FROM + 100
    with _backend(schema) as store:
        store.add_events([{"id": f"e{i}", "parent": f"e{i - 1}" if i else None} for i in range(n)])
        again = [{"id": f"e{i}", "parent": f"e{i - 1}"} for i in range(n - 50, 2 * n)]
        assert [e.id for e in store.add_events(again)] == [f"e{i}" for i in range(n - 50, 2 * n)]
        assert [e.id for e in store.path(f"e{2 * n - 1}")] == [f"e{i}" for i in range(2 * n)]
        clash = [{"id": f"f{i}", "parent": "e0"} for i in range(n)]
        clash[n // 2] = {"id": "e10", "parent": "e0"}  # e10 exists with another parent
        with pytest.raises(ConflictingEvent):
            store.add_events(clash)
        with pytest.raises(UnknownEvent):
            store.get_event("f0")
        mems = store.add_memories(
            [{"content": f"fact {i}", "sources": [f"e{i}"]} for i in range(2 * n)]
        )
        assert [m.id for m in store.memories(at=f"e{2 * n - 1}")] == [m.id for m in mems]


_AWKWARD = ["a\tb", "back\\slash", "line\nbreak\r\n", "\\N", "", "用户 😀", "'quoted' \"too\""]


def test_copy_batches_store_every_value_as_given(schema: str) -> None:
    """Events and memories in batches over COPY_FROM rows (binary ``COPY``)
    read back exactly as the memory backend keeps them: text that text
    ``COPY`` would escape, JSON meta, merges, missing parents, every field."""
    from branchmem.backends.postgres.conn import COPY_FROM

    n = COPY_FROM + 20
    events = [
        {
            "id": f"e{i}",
            "parent": [f"e{i - 1}", f"e{i - 2}"] if i % 7 == 3 else f"e{i - 1}" if i else None,
            "role": "assistant" if i % 2 else "user",
            "content": _AWKWARD[i % len(_AWKWARD)] * (i % 3),
            "meta": {"k": _AWKWARD[i % len(_AWKWARD)], "n": [i, 0.5, None]} if i % 5 == 0 else None,
        }
        for i in range(n)
    ]
    events.append({"id": "late", "parent": "missing"})  # waits: stored without a position
    memories = [
        {
            "id": f"m{i}",
            "content": _AWKWARD[i % len(_AWKWARD)] + str(i),
            "sources": [f"e{i}", f"e{i // 2}"] if i % 3 else [f"e{i}"],
            "kind": ["episodic", "semantic", "procedural", "working"][i % 4],
            "key": f"k{i % 9} \\" if i % 4 == 1 else None,
            "importance": (i % 11) / 10,
            "meta": {"x": _AWKWARD[i % len(_AWKWARD)]} if i % 6 == 0 else None,
            "expires_at": 2e9 + i if i % 8 == 0 else None,
            "valid_from": 1e9 + 0.25 if i % 10 == 0 else None,
        }
        for i in range(n)
    ]
    from branchmem.backends.postgres import PostgresBackend

    reference = Store(clock=lambda: 1234.5)
    with Store(backend=PostgresBackend(PG_URL, schema=schema), clock=lambda: 1234.5) as store:
        for s in (reference, store):
            s.add_events(events)
            s.add_memories(memories)
        for e in events:
            assert store.get_event(e["id"]) == reference.get_event(e["id"])
        for m in memories:
            got, want = store.get_memory(m["id"]), reference.get_memory(m["id"])
            assert got == want, m["id"]
        tip = f"e{n - 1}"
        assert store.memories(at=tip) == reference.memories(at=tip)


# ------------------------------------------------------------- compare-and-set
def _moving_backend(schema: str, to: str) -> object:
    """A backend on which another connection moves branch ``main`` to ``to``
    right after this one first reads it (as a writer without the lock would)."""
    import psycopg

    from branchmem.backends.postgres import PostgresBackend

    class Interleaved(PostgresBackend):
        moved = 0

        def get_branch_row(self, ns: str, name: str) -> object:
            row = super().get_branch_row(ns, name)
            if not self.moved:
                self.moved += 1
                with psycopg.connect(PG_URL, autocommit=True) as other:
                    other.execute(
                        f"UPDATE {schema}.branches SET head = %s WHERE ns = %s AND name = %s",
                        (to, ns, name),
                    )
            return row

    return Interleaved(PG_URL, schema=schema)


def test_a_head_moved_meanwhile_is_a_conflict_and_a_branch_write_retries(schema: str) -> None:
    from branchmem import BranchConflict, UnknownEvent
    from branchmem.backends.postgres import PostgresBackend

    with Store(backend=PostgresBackend(PG_URL, schema=schema)) as store:
        store.add_event("root")
        store.add_event("x", parent="root")
        store.create_branch("main", at="root")
    raw = PostgresBackend(PG_URL, schema=schema)
    with raw.transaction():
        assert not raw.swap_head("default", "main", "x", "root", 1.0)  # head is root, not x
    with raw.reading():
        assert raw.get_branch("default", "main") == "root"
    raw.close()
    # With expected_head: the conflict reaches the caller, and nothing is written.
    with Store(backend=_moving_backend(schema, "x")) as store:  # type: ignore[arg-type]
        with pytest.raises(BranchConflict):
            store.add_event("a", branch="main", expected_head="root")
        with pytest.raises(UnknownEvent):
            store.get_event("a")
        assert store.branch_head("main") == "x"
        store.set_branch("main", "root")
    # Without it: the write starts over on the head the other writer left.
    with Store(backend=_moving_backend(schema, "x")) as store:  # type: ignore[arg-type]
        ev = store.add_event("b", branch="main", content="on top")
        assert ev.parents == ("x",)
        assert [e.id for e in store.path("main")] == ["root", "x", "b"]
        assert [(m.from_head, m.to_head) for m in store.history("main")][-1] == ("x", "b")


# ------------------------------------------------------------ erasure across processes
def _purge_in_another_process(schema: str, memory_id: str) -> None:
    from branchmem.backends.postgres import PostgresBackend

    with Store(backend=PostgresBackend(PG_URL, schema=schema)) as other:
        other.purge(memories=[memory_id])


def test_a_purge_in_another_process_empties_this_ones_search_cache(schema: str) -> None:
    from branchmem.retrieval.cache import cache_for

    y = _backend(schema)
    try:
        y.add_event("e1", content="我对花生过敏")
        m = y.add_memory("用户对花生过敏", sources=["e1"])
        assert [h.memory.id for h in y.search("花生", at="e1", embedder="hashing")] == [m.id]
        assert any(m.id in {k[1] for k in t} for t in cache_for(y).terms.values())
        p = multiprocessing.get_context("spawn").Process(
            target=_purge_in_another_process, args=(schema, m.id)
        )
        p.start()
        p.join(timeout=120)
        assert p.exitcode == 0
        assert y.search("花生", at="e1", embedder="hashing") == []
        held = [
            k for t in [*cache_for(y).terms.values(), *cache_for(y).vectors.values()] for k in t
        ]
        assert all(k[1] != m.id for k in held)
    finally:
        y.close()


@settings(
    max_examples=examples("postgres", 60),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(steps=st.lists(STEP, min_size=1, max_size=40))
def test_many_stores_on_one_schema_match_the_reference(
    steps: list[tuple[str, int, int, int]],
) -> None:
    """`test_coherence`'s property on PostgreSQL: three stores, three pools."""
    from branchmem.backends.postgres import PostgresBackend

    name = SCHEMAS.take()
    stores = [Store(backend=PostgresBackend(PG_URL, schema=name, durability="normal"))]
    stores += [Store(backend=PostgresBackend(PG_URL, schema=name)) for _ in range(2)]
    try:
        run_steps(stores, steps)
    finally:
        for s in stores:
            s.close()
        SCHEMAS.give_back([name])


def test_key_lookups_give_the_same_rows_either_way(
    schema: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A few keys are looked up one by one, many by one scan (`each_key`):
    events, positions, waiting children (in key order), records and lifecycle
    rows come back alike both ways, repeats and missing keys included."""
    from branchmem.backends.postgres import conn as pg_conn

    with _backend(schema) as store:
        store.add_events([{"id": f"e{i}", "parent": f"e{i - 1}" if i else None} for i in range(30)])
        store.add_events([{"id": f"w{i}", "parent": "late"} for i in (3, 1, 2)])  # waiting
        for i in range(0, 30, 3):
            store.add_memory(f"fact {i}", sources=[f"e{i}"], id=f"m{i}")
        store.touch(["m0", "m3"])
    ids = ["e5", "e0", "e5", "nope", "e29", "w1"]
    mids = ["m3", "m0", "m3", "m99"]

    def answers() -> list[object]:
        with _backend(schema) as store:  # a new one each time: nothing cached
            b = store._engine.backend
            with b.reading():
                return [
                    {k: (r.event, r.pos) for k, r in b.get_events("default", ids).items()},
                    b.event_positions("default", ids),
                    b.waiting_children("default", ["late", "e1", "late"]),
                    {k: r.memory.to_dict() for k, r in b.get_records("default", mids).items()},
                    b.get_life("default", mids),
                ]

    each = answers()
    monkeypatch.setattr(pg_conn, "LATERAL_UP_TO", 0)
    assert answers() == each
    assert set(each[0]) == {"e0", "e5", "e29", "w1"}  # type: ignore[arg-type]
    assert each[2] == {"late": ["w1", "w2", "w3"]}
    assert set(each[3]) == set(each[4]) == {"m0", "m3"}  # type: ignore[arg-type]


def _open_new_schema(name: str, start: Any, out: Any) -> None:
    from branchmem.backends.postgres import PostgresBackend

    start.wait()
    try:
        PostgresBackend(PG_URL, schema=name).close()
        out.put("ok")
    except Exception as exc:  # the failure is what the test reports
        out.put(repr(exc))


def test_several_processes_opening_one_new_schema_at_once_all_open_it() -> None:
    """Servers started together on a fresh schema: each one's ``CREATE SCHEMA
    IF NOT EXISTS`` raced the others' (it is not safe against a concurrent
    one), and all but one could fail to open. Five fresh schemas, six
    processes each."""
    import uuid

    import psycopg

    ctx = multiprocessing.get_context("spawn")
    got: list[str] = []
    names = ["bmt_new_" + uuid.uuid4().hex[:10] for _ in range(5)]
    try:
        for name in names:
            start, out = ctx.Event(), ctx.Queue()
            procs = [
                ctx.Process(target=_open_new_schema, args=(name, start, out)) for _ in range(6)
            ]
            for p in procs:
                p.start()
            start.set()
            for p in procs:
                p.join(60)
            got += [out.get(timeout=5) for _ in procs]
    finally:
        with psycopg.connect(PG_URL, autocommit=True) as conn:
            for name in names:
                conn.execute(f"DROP SCHEMA IF EXISTS {name} CASCADE")
    assert got == ["ok"] * 30, [g for g in got if g != "ok"][:2]
