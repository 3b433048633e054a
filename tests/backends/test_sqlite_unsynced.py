"""SQLite's unsynced write transactions (`UnsyncedCommits`), what a read
that raised leaves cached, and the count of other connections' commits
(`OtherWriters`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from branchmem import Store
from branchmem.backends.base import OtherWriters, UnsyncedCommits
from branchmem.backends.sqlite.backend import SQLiteBackend
from branchmem.errors import UnknownAnchor


def _sync_level(b: SQLiteBackend) -> int:
    return int(b._db.execute("PRAGMA synchronous").fetchone()[0])


def test_an_unsynced_commit_lands_and_the_level_comes_back(tmp_path: Path) -> None:
    p = tmp_path / "s.db"
    s = Store(p)
    b = s._engine.backend
    assert isinstance(b, UnsyncedCommits) and isinstance(b, SQLiteBackend)
    assert _sync_level(b) == 2  # FULL
    seen: list[int] = []
    with b.unsynced_transaction():
        seen.append(_sync_level(b))
        s.add_event("e1")
        s.add_memory("m", sources=["e1"])
    assert seen == [1]  # NORMAL while it runs
    assert _sync_level(b) == 2
    assert [m.content for m in Store(p).memories(at="e1")] == ["m"]


def test_an_unsynced_transaction_rolls_back_whole(tmp_path: Path) -> None:
    p = tmp_path / "s.db"
    s = Store(p)
    b = s._engine.backend
    assert isinstance(b, SQLiteBackend)
    s.add_event("e1")
    with pytest.raises(RuntimeError), b.unsynced_transaction():
        s.add_memory("gone", sources=["e1"])
        raise RuntimeError("boom")
    assert _sync_level(b) == 2
    assert Store(p).memories(at="e1") == []


def test_inside_a_transaction_it_joins_at_the_outer_level(tmp_path: Path) -> None:
    s = Store(tmp_path / "s.db")
    b = s._engine.backend
    assert isinstance(b, SQLiteBackend)
    levels: list[int] = []
    with b.transaction():
        s.add_event("e1")
        with b.unsynced_transaction():
            levels.append(_sync_level(b))
            s.add_memory("m", sources=["e1"])
    assert levels == [2]
    assert [m.content for m in s.memories(at="e1")] == ["m"]


def test_a_store_opened_normal_stays_normal(tmp_path: Path) -> None:
    s = Store(tmp_path / "s.db", durability="normal")
    b = s._engine.backend
    assert isinstance(b, SQLiteBackend)
    with b.unsynced_transaction():
        s.add_event("e1")
    assert _sync_level(b) == 1


def test_a_read_that_raised_keeps_what_was_cached(tmp_path: Path) -> None:
    s = Store(tmp_path / "s.db")
    b = s._engine.backend
    assert isinstance(b, SQLiteBackend)
    s.add_event("e1")
    s.add_memory("m", sources=["e1"])
    with pytest.raises(UnknownAnchor):
        s.memories(at="nowhere")
    statements: list[str] = []
    b._db.set_trace_callback(statements.append)
    s.add_event("e2", parent="e1")
    b._db.set_trace_callback(None)
    # the namespace id and the kept facts held: no look-up of the namespace again
    assert not [q for q in statements if "FROM namespaces" in q]


def test_a_write_that_raised_drops_what_was_cached(tmp_path: Path) -> None:
    s = Store(tmp_path / "s.db")
    b = s._engine.backend
    assert isinstance(b, SQLiteBackend)
    with pytest.raises(RuntimeError), b.transaction():
        s.add_event("e1", namespace="fresh")
        raise RuntimeError("boom")
    statements: list[str] = []
    b._db.set_trace_callback(statements.append)
    s.add_event("e1", namespace="fresh")  # the rolled-back namespace id is not reused
    b._db.set_trace_callback(None)
    assert [q for q in statements if "FROM namespaces" in q]
    assert [e.id for e in s.path("e1", namespace="fresh")] == ["e1"]


def test_others_version_moves_for_other_connections_only(tmp_path: Path) -> None:
    p = tmp_path / "s.db"
    x, y = Store(p), Store(p)
    b = x._engine.backend
    assert isinstance(b, OtherWriters)
    v = b.others_version(["default"])
    x.add_event("e1")
    x.add_memory("m", sources=["e1"])
    assert b.others_version(["default"]) == v  # its own commits
    y.add_event("e2", namespace="elsewhere")  # (any commit to the file moves it)
    moved = b.others_version(["default"])
    assert moved != v
    assert b.others_version(["default"]) == moved  # until the next commit elsewhere
