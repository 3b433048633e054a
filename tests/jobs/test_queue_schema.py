"""Version 11 adds the extraction queue's table: an SQLite store of version 10
gets it when opened, and a read-only open of one reads an empty queue."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from branchmem import Store


def _as_version_10(path: Path) -> None:
    with sqlite3.connect(path) as db:
        db.execute("DROP TABLE jobs")
        db.execute("DELETE FROM schema_version")
        db.execute("INSERT INTO schema_version VALUES (10, 0)")
        db.execute("UPDATE store_info SET value = '10' WHERE key = 'schema'")
        db.commit()
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()


def _versions(path: Path) -> list[int]:
    with sqlite3.connect(path) as db:
        got = [int(v) for (v,) in db.execute("SELECT version FROM schema_version ORDER BY 1")]
    db.close()
    return got


def test_a_version_10_store_gets_the_queue(tmp_path: Path) -> None:
    path = tmp_path / "v10.db"
    with Store(path) as store:
        store.add_event("e1", content="我对花生过敏。")
    _as_version_10(path)
    with Store(path, readonly=True) as store:  # read as it is
        assert store.pending() == []
        assert store.memories(at="e1", wait=1) == []
    assert _versions(path) == [10]
    with Store(path) as store:  # upgraded on open
        store.add_event("e2", parent="e1", content="我住在成都。", extract=True)
        assert [j.tip for j in store.pending()] == ["e2"]
    assert _versions(path) == [10, 11, 12]
