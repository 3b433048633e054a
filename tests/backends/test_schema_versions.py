"""Schema versions: an older store upgrades in one transaction, a newer one is refused."""

from __future__ import annotations

import multiprocessing
import shutil
import sqlite3
from pathlib import Path

import pytest

from branchmem import HashingEmbedder, StorageError, Store
from branchmem.backends.migrations import CURRENT
from branchmem.backends.sqlite import schema as sqlite_schema

FIXTURE = Path(__file__).parents[1] / "fixtures" / "store-schema2.db"


def _copy(tmp_path: Path) -> Path:
    path = tmp_path / "old.db"
    shutil.copyfile(FIXTURE, path)
    return path


def _versions(path: Path) -> tuple[str, list[int]]:
    with sqlite3.connect(path) as db:
        info = db.execute("SELECT value FROM store_info WHERE key='schema'").fetchone()[0]
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        rows = (
            [r[0] for r in db.execute("SELECT version FROM schema_version ORDER BY version")]
            if "schema_version" in tables
            else []
        )
    db.close()
    return info, rows


def test_the_fixture_is_a_version_2_store() -> None:
    assert _versions(FIXTURE) == ("2", [])


def test_a_version_2_store_upgrades_and_answers_the_same(tmp_path: Path) -> None:
    path = _copy(tmp_path)
    with Store(path) as store:
        assert [m.id for m in store.memories(at="e2")] == ["f-chengdu"]
        assert [m.id for m in store.memories(at="e2b")] == ["f-hangzhou"]
        assert [m.id for m in store.memories(at="main")] == ["f-hangzhou"]
        assert store.branch_head("main") == "e2b"
        assert store.memories(at="late-child") == []
        store.add_event("late-parent", parent="e1")  # the waiting child connects
        assert [e.id for e in store.path("late-child")] == ["e1", "late-parent", "late-child"]
        assert store.get_event("x1", namespace="other").content == "other tenant"
    upgraded = (str(CURRENT), list(range(3, CURRENT + 1)))  # every step, one row each
    assert _versions(path) == upgraded
    with Store(path) as again:  # a current store opens as it is
        assert [m.id for m in again.memories(at="e2")] == ["f-chengdu"]
    assert _versions(path) == upgraded


def test_a_failed_upgrade_leaves_the_old_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _copy(tmp_path)
    steps = {3: [*sqlite_schema.STEPS[3], "CREATE TABLE broken (x"]}
    monkeypatch.setattr(sqlite_schema, "STEPS", steps)
    with pytest.raises(StorageError):
        Store(path)
    assert _versions(path) == ("2", [])
    monkeypatch.undo()
    with Store(path) as store:
        assert [m.id for m in store.memories(at="e2")] == ["f-chengdu"]


def test_a_newer_store_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "new.db"
    Store(path).close()
    with sqlite3.connect(path) as db:
        db.execute("INSERT INTO schema_version VALUES (99, 0)")
    db.close()
    with pytest.raises(StorageError, match=r"schema version 99.*newer branchmem.*upgrade"):
        Store(path)
    assert _versions(path) == (str(CURRENT), [CURRENT, 99])


def test_a_version_8_store_gets_a_terms_table(tmp_path: Path) -> None:
    """Version 9 adds ``terms`` (each record's stored tokens), from the schema."""
    path = tmp_path / "v8.db"
    with Store(path) as store:
        store.add_event("e1")
        store.add_memory("fact", sources=["e1"], id="m1")
    with sqlite3.connect(path) as db:
        db.execute("DROP TABLE terms")
        db.execute("DELETE FROM schema_version")  # as version 8 made it
        db.execute("INSERT INTO schema_version VALUES (8, 0)")
        db.execute("UPDATE store_info SET value = '8' WHERE key = 'schema'")
    db.close()
    with pytest.raises(StorageError, match=rf"schema version 8.*upgrade it to version {CURRENT}"):
        Store(path, readonly=True)
    with Store(path) as store:
        assert [h.memory.id for h in store.search("fact", at="e1")] == ["m1"]
    with sqlite3.connect(path) as db:
        rows = db.execute("SELECT tokenizer, id FROM terms").fetchall()
    db.close()
    assert rows == [("terms:stem:1", "m1")]
    assert _versions(path) == (str(CURRENT), list(range(8, CURRENT + 1)))


def _as_version_9(path: Path) -> None:
    """Turn a current store back into version 9's layout: the large-row tables
    clustered by their key (WITHOUT ROWID), their indexes made again."""
    with sqlite3.connect(path) as db:
        for name, (ddl, _) in sqlite_schema.ROWID_TABLES.items():
            old = ddl.format(name=f"{name}_v9").rstrip().rstrip(";") + " WITHOUT ROWID"
            db.execute(old)
            db.execute(f"INSERT INTO {name}_v9 SELECT * FROM {name}")
            db.execute(f"DROP TABLE {name}")
            db.execute(f"ALTER TABLE {name}_v9 RENAME TO {name}")
        db.executescript(sqlite_schema.SCHEMA)  # the indexes, as version 9 had them
        db.execute("DELETE FROM schema_version")
        db.execute("INSERT INTO schema_version VALUES (9, 0)")
        db.execute("UPDATE store_info SET value = '9' WHERE key = 'schema'")
        db.commit()
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()


def _clustered(path: Path) -> dict[str, bool]:
    with sqlite3.connect(path) as db:
        names = ", ".join(f"'{n}'" for n in sqlite_schema.ROWID_TABLES)
        rows = db.execute(f"SELECT name, sql FROM sqlite_master WHERE name IN ({names})")
        out = {name: "WITHOUT ROWID" in sql for name, sql in rows}
    db.close()
    return out


def _file_bytes(path: Path) -> bytes:
    return b"".join(
        Path(f"{path}{suffix}").read_bytes()
        for suffix in ("", "-wal")
        if Path(f"{path}{suffix}").exists()
    )


def test_a_version_9_store_gets_rowid_tables_and_keeps_every_answer(tmp_path: Path) -> None:
    """Version 10 rebuilds records, audit, vectors and tokens as rowid tables
    (large rows no longer slow every lookup that passes them): every answer
    stays, and a record purged after the upgrade leaves no copy behind."""
    from branchmem import HashingEmbedder

    path, N = tmp_path / "v9.db", range(300)
    secret = "UPGRADE-SECRET-5521 " + "长文本" * 20_000  # a row far larger than a page
    with Store(path) as store:
        store.add_events([{"id": f"e{i}", "parent": f"e{i - 1}" if i else None} for i in N])
        kept = store.add_memories([{"content": f"fact {i}", "sources": [f"e{i}"]} for i in N])
        gone = store.add_memory(secret, sources=["e5"])
        store.search("fact", at="e299", embedder=HashingEmbedder())  # vectors and tokens stored
        before = (
            [m.id for m in store.memories(at="e299")],
            [h.memory.id for h in store.search("fact 7", at="e299", embedder=HashingEmbedder())],
            [(a.op, a.ids) for a in store.audit()],
        )
    _as_version_9(path)
    assert set(_clustered(path).values()) == {True}
    with Store(path) as store:
        after = (
            [m.id for m in store.memories(at="e299")],
            [h.memory.id for h in store.search("fact 7", at="e299", embedder=HashingEmbedder())],
            [(a.op, a.ids) for a in store.audit()],
        )
        assert after == before
        assert [m.seq for m in store.records()] == sorted(m.seq for m in [*kept, gone])
        store.purge(memories=[gone.id])
        assert b"UPGRADE-SECRET-5521" not in _file_bytes(path)
        nxt = store.add_memory("after the upgrade", sources=["e1"])
        assert nxt.seq > max(m.seq for m in kept)  # each namespace's count goes on
    assert set(_clustered(path).values()) == {False}
    assert _versions(path) == (str(CURRENT), list(range(9, CURRENT + 1)))
    assert b"UPGRADE-SECRET-5521" not in _file_bytes(path)
    with sqlite3.connect(path) as db:
        rows = {name: db.execute(f"SELECT count(*) FROM {name}").fetchone()[0]
                for name in sqlite_schema.ROWID_TABLES}  # fmt: skip
    db.close()
    assert rows["records"] == 301 and rows["vectors"] == rows["terms"] == 300


def test_a_record_purged_after_the_version_10_upgrade_leaves_no_copy(tmp_path: Path) -> None:
    """The upgrade copies each table: the old table's pages are zeroed as they
    are freed, or a record purged later would live on in the file's free pages."""
    path = tmp_path / "v9.db"
    with Store(path) as store:
        store.add_event("e1")
        gone = store.add_memory("FREED-PAGE-SECRET-8830 " + "x" * 100_000, sources=["e1"])
    _as_version_9(path)
    with Store(path) as store:
        assert b"FREED-PAGE-SECRET-8830" in _file_bytes(path)
        store.purge(memories=[gone.id])
        assert b"FREED-PAGE-SECRET-8830" not in _file_bytes(path)


def _open_and_count(path: Path, out: object) -> None:
    with Store(path) as store:
        out.put((len(store.memories(at="e9")), len(store.audit())))  # type: ignore[attr-defined]


def test_processes_opening_a_version_9_store_at_once_upgrade_it_once(tmp_path: Path) -> None:
    """Three processes open one version-9 file together: one upgrades it (the
    others wait for its transaction, then find it current), all read the same."""
    path = tmp_path / "v9.db"
    with Store(path) as store:
        store.add_events([{"id": f"e{i}", "parent": f"e{i - 1}" if i else None} for i in range(10)])
        store.add_memories(
            [{"content": f"f{i} " + "x" * 5000, "sources": [f"e{i}"]} for i in range(10)]
        )
    _as_version_9(path)
    ctx = multiprocessing.get_context("spawn")
    out = ctx.Queue()
    procs = [ctx.Process(target=_open_and_count, args=(path, out)) for _ in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    assert [p.exitcode for p in procs] == [0, 0, 0]
    assert [out.get(timeout=5) for _ in procs] == [(10, 2)] * 3
    assert _versions(path) == (str(CURRENT), list(range(9, CURRENT + 1)))
    assert set(_clustered(path).values()) == {False}


def test_a_version_9_store_opens_read_only_as_it_is(tmp_path: Path) -> None:
    """Version 10 changes only how rows are laid out: a read-only open of a
    version-9 file reads it without upgrading (a read-only open of version 8
    is refused: `test_a_version_8_store_gets_a_terms_table`)."""
    path = tmp_path / "v9.db"
    n = 2100  # enough for the one-pass read of stored vectors and tokens
    with Store(path) as store:
        store.add_event("e1")
        store.add_memory("fact", sources=["e1"], id="m1")
        store.add_memories([{"content": f"other {i}", "sources": ["e1"]} for i in range(n)])
        want = [h.memory.id for h in store.search("fact", at="e1", embedder=HashingEmbedder())]
    _as_version_9(path)
    before = path.read_bytes()
    with Store(path, readonly=True) as store:
        assert len(store.memories(at="e1")) == n + 1
        got = store.search("fact", at="e1", embedder=HashingEmbedder())
        assert [h.memory.id for h in got] == want and want[0] == "m1"
    assert path.read_bytes() == before
    assert set(_clustered(path).values()) == {True} and _versions(path) == ("9", [9])
