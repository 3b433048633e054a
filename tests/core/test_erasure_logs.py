"""Purge reaches what lies outside the tables: the store's query logs (found by
the store itself) and, on SQLite, the write-ahead log while another
connection reads."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from branchmem import QueryLog, Store

SECRET_QUERY = "QUERY-SECRET-5521 花生"


def _store_with_a_logged_search(store: Store, log: Path) -> str:
    store.add_event("e1", content="我对花生过敏")
    m = store.add_memory("用户对花生过敏 QUERY-SECRET-5521", sources=["e1"])
    store.add_memory("用户喜欢猫", sources=["e1"], id="cat")
    store.search(SECRET_QUERY, at="e1", embedder="hashing", k=1, log=log)
    store.search("猫", at="e1", embedder="hashing", k=1, log=str(log))
    assert SECRET_QUERY.encode() in log.read_bytes()
    return m.id


def test_purge_reaches_the_stores_query_log_unasked(store: Store, tmp_path: Path) -> None:
    log = tmp_path / "q.jsonl"
    mid = _store_with_a_logged_search(store, log)
    store.purge(memories=[mid])  # no query_logs=
    raw = log.read_bytes()
    assert SECRET_QUERY.encode() not in raw and mid.encode() not in raw
    assert [e["query"] for e in QueryLog(log).entries()] == ["猫"]  # the rest stays


def test_a_whole_namespace_purge_empties_the_stores_logs_of_it(
    store: Store, tmp_path: Path
) -> None:
    log = tmp_path / "q.jsonl"
    store.add_event("u1", content="x", namespace="alice")
    store.add_memory("QUERY-SECRET-5521 fact", sources=["u1"], namespace="alice")
    store.add_event("e1", content="y")
    store.add_memory("other fact", sources=["e1"])
    store.search(SECRET_QUERY, at="u1", namespace="alice", embedder="hashing", log=log)
    store.search("fact", at="e1", embedder="hashing", log=log)
    store.purge(namespace="alice", whole_namespace=True)
    raw = log.read_bytes()
    assert b"QUERY-SECRET-5521" not in raw and b"alice" not in raw
    assert [e["query"] for e in QueryLog(log).entries()] == ["fact"]


def test_a_later_process_finds_the_log_in_the_store_file(tmp_path: Path) -> None:
    """The log is kept in the store: a store opened afterwards (as another
    process would) purges it without being told."""
    path, log = tmp_path / "s.db", tmp_path / "q.jsonl"
    with Store(path) as first:
        mid = _store_with_a_logged_search(first, log)
    with Store(path) as later:
        later.purge(memories=[mid])
    assert SECRET_QUERY.encode() not in log.read_bytes()


def test_extra_logs_are_still_purged_and_a_removed_log_is_skipped(
    make_store: Callable[[], Store], tmp_path: Path
) -> None:
    store = make_store()
    own, extra = tmp_path / "own.jsonl", tmp_path / "extra.jsonl"
    mid = _store_with_a_logged_search(store, own)
    QueryLog(extra).write({"namespace": "default", "query": SECRET_QUERY, "hits": [{"id": mid}]})
    own.unlink()  # a log removed since: nothing to purge there, and no error
    store.purge(memories=[mid], query_logs=[extra])
    assert SECRET_QUERY.encode() not in extra.read_bytes()
    assert not own.exists()


# --------------------------------------------------------------- the WAL on SQLite
SECRET = "WAL-SECRET-8812"


def _file_bytes(p: Path) -> bytes:
    return b"".join(
        Path(str(p) + suffix).read_bytes()
        for suffix in ("", "-wal")
        if Path(str(p) + suffix).exists()
    )


def _follow_up(how: str, store: Store, path: Path) -> None:
    if how == "write":
        store.add_event("later", parent="e1")
    elif how == "checkpoint":
        assert store.checkpoint()
    elif how == "close":
        store.close()
    else:  # a write through another store on the same file (another process)
        with Store(path) as other:
            other.add_event("elsewhere", parent="e1")
    if how != "close":
        store.close()


@pytest.mark.parametrize("how", ["write", "checkpoint", "close", "other store"])
def test_a_reader_holding_the_wal_leaves_the_purge_pending_until_a_follow_up(
    tmp_path: Path, how: str
) -> None:
    path = tmp_path / "s.db"
    store = Store(path)
    store.add_event("e1", content="harmless")
    m = store.add_memory(SECRET, sources=["e1"])
    reader = sqlite3.connect(path, isolation_level=None)
    reader.execute("BEGIN")
    assert reader.execute("SELECT count(*) FROM records").fetchone() == (1,)  # holds a snapshot
    started = time.monotonic()
    store.purge(memories=[m.id])
    assert time.monotonic() - started < 10  # waits a little, not the busy timeout
    assert store.erasure_pending()  # the WAL could not be truncated, and says so
    assert SECRET.encode() in _file_bytes(path)
    reader.execute("ROLLBACK")
    reader.close()
    assert store.erasure_pending()  # nothing retried yet
    _follow_up(how, store, path)
    assert SECRET.encode() not in _file_bytes(path)
    with Store(path) as after:
        assert not after.erasure_pending()
        assert after.get_event("e1").content == "harmless"


def test_no_reader_no_pending_erasure(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    with Store(path) as store:
        store.add_event("e1")
        m = store.add_memory(SECRET, sources=["e1"])
        store.purge(memories=[m.id])
        assert not store.erasure_pending()
        assert Path(str(path) + "-wal").stat().st_size == 0
        assert SECRET.encode() not in _file_bytes(path)


def test_backends_without_a_log_file_have_nothing_pending() -> None:
    store = Store()
    store.add_event("e1")
    store.purge(events=["e1"])
    assert not store.erasure_pending() and store.checkpoint()
