"""Opening a store: clear errors for bad paths, and read-only opens that create nothing."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest

from branchmem import InvalidInput, StorageError, Store


def test_missing_folder_says_what_to_do(tmp_path: Path) -> None:
    with pytest.raises(StorageError, match="does not exist; create it first"):
        Store(tmp_path / "no" / "such" / "mem.db")


def test_a_url_of_no_backend_is_refused_by_its_scheme(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    for url in (
        "mysql://app:s3cret@db/memory",
        "postgresql+psycopg://app@db/memory",
        "file:///x.db",
    ):
        scheme = url.partition("://")[0]
        with pytest.raises(
            InvalidInput, match=re.escape(f"no backend opens {scheme}:// URLs; pass an SQLite")
        ) as e:
            Store(url)
        assert "s3cret" not in str(e.value)  # the rest of a URL may hold a password
    assert list(tmp_path.iterdir()) == []  # nothing made where it ran
    Store("a:b.db").close()  # a colon in a file name is still a file
    assert (tmp_path / "a:b.db").exists()


def test_bad_arguments_are_invalid_input() -> None:
    with pytest.raises(InvalidInput, match="file path"):
        Store(5)  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="callable"):
        Store(clock=5)  # type: ignore[arg-type]


def test_create_false_refuses_what_is_not_a_store(tmp_path: Path) -> None:
    missing = tmp_path / "missing.db"
    with pytest.raises(StorageError, match="does not exist"):
        Store(missing, create=False)
    assert not missing.exists()
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as db:
        db.execute("CREATE TABLE t (x)")
    db.close()
    with pytest.raises(StorageError, match="not one that branchmem wrote"):
        Store(other, create=False)
    with sqlite3.connect(other) as db:
        tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
    db.close()
    assert tables == ["t"], "the foreign file must be left untouched"


def test_create_false_opens_an_existing_store(tmp_path: Path) -> None:
    path = tmp_path / "mem.db"
    with Store(path) as s:
        s.add_event("e1")
    with Store(path, create=False) as s:
        assert [e.id for e in s.path("e1")] == ["e1"]
