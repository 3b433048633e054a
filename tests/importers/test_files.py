"""Store files: foreign files refused untouched, read-only opens, private modes,
a clear lock error, durability settings."""

from __future__ import annotations

import os
import sqlite3
import stat
from pathlib import Path

import pytest

from branchmem import InvalidInput, ReadOnlyStore, StorageError, Store, StoreLocked


def _foreign(path: Path) -> bytes:
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE customers (name TEXT)")
        db.execute("INSERT INTO customers VALUES ('alice')")
    db.close()
    return path.read_bytes()


def test_another_apps_database_is_refused_and_left_unchanged(tmp_path: Path) -> None:
    path = tmp_path / "app.db"
    before = _foreign(path)
    with pytest.raises(StorageError, match="not one that branchmem wrote"):
        Store(path)
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["app.db"]


def test_a_file_that_is_not_sqlite_is_refused_and_left_unchanged(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("just some notes\n" * 20)
    before = path.read_bytes()
    with pytest.raises(StorageError):
        Store(path)
    assert path.read_bytes() == before


def test_an_empty_file_becomes_a_store(tmp_path: Path) -> None:
    path = tmp_path / "empty.db"
    path.touch()
    with Store(path) as s:
        s.add_event("e1")
    with Store(path) as s:
        assert s.get_event("e1").id == "e1"


def test_new_files_are_private(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        path = tmp_path / "s.db"
        with Store(path) as s:
            s.add_event("e1")
            modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in tmp_path.iterdir()}
    finally:
        os.umask(old)
    assert modes["s.db"] == 0o600
    assert all(m == 0o600 for m in modes.values()), modes


def test_readonly_reads_and_refuses_writes(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    with Store(path) as s:
        s.add_event("e1", content="x")
        s.add_memory("fact", sources=["e1"], id="m1")
    os.chmod(path, 0o400)
    try:
        with Store(path, readonly=True) as r:
            assert [m.id for m in r.memories(at="e1")] == ["m1"]
            assert r.search("fact", at="e1", embedder="hashing")[0].memory.id == "m1"
            with pytest.raises(ReadOnlyStore, match="read-only"):
                r.add_event("e2", parent="e1")
            with pytest.raises(ReadOnlyStore):
                r.purge(events=["e1"])
    finally:
        os.chmod(path, 0o600)
    with Store(path) as s:
        assert [e.id for e in s.path("e1")] == ["e1"]


def test_readonly_never_creates(tmp_path: Path) -> None:
    with pytest.raises(StorageError, match="does not exist"):
        Store(tmp_path / "none.db", readonly=True)
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(InvalidInput):
        Store(readonly=True)


def test_a_held_write_lock_gives_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    with Store(path) as s:
        s.add_event("e1")
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        with Store(path, busy_timeout=0.05) as s:
            with pytest.raises(StoreLocked, match="another process") as err:
                s.add_event("e2", parent="e1")
            assert isinstance(err.value, TimeoutError)
            assert [e.id for e in s.path("e1")] == ["e1"]  # reads go on
    finally:
        holder.execute("ROLLBACK")
        holder.close()


@pytest.mark.parametrize(("durability", "level"), [("full", 2), ("normal", 1)])
def test_durability(tmp_path: Path, durability: str, level: int) -> None:
    with Store(tmp_path / "s.db", durability=durability) as s:
        (got,) = s._engine.backend._db.execute("PRAGMA synchronous").fetchone()  # type: ignore[attr-defined]
    assert got == level


@pytest.mark.parametrize(
    "kwargs",
    [{"durability": "fast"}, {"busy_timeout": -1}, {"busy_timeout": float("nan")},
     {"readonly": "yes"}],
)  # fmt: skip
def test_bad_open_options(tmp_path: Path, kwargs: dict[str, object]) -> None:
    with pytest.raises(InvalidInput):
        Store(tmp_path / "s.db", **kwargs)  # type: ignore[arg-type]
    assert list(tmp_path.iterdir()) == []
