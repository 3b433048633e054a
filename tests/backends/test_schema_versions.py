"""Schema versions: an older store upgrades in one transaction, a newer one is refused."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from branchmem import StorageError, Store
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
    with pytest.raises(StorageError, match=r"schema version 8.*upgrade it to version 9"):
        Store(path, readonly=True)
    with Store(path) as store:
        assert [h.memory.id for h in store.search("fact", at="e1")] == ["m1"]
    with sqlite3.connect(path) as db:
        rows = db.execute("SELECT tokenizer, id FROM terms").fetchall()
    db.close()
    assert rows == [("terms:bigram:1", "m1")]
    assert _versions(path) == (str(CURRENT), [8, 9])
