"""Purge leaves nothing readable: not in copies, not in the file, not in the log or caches."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from branchmem import InvalidInput, QueryLog, Redactor, Store, UnknownNamespace
from branchmem.retrieval.cache import cache_for
from branchmem.retrieval.querylog import query_hash
from helpers.stored_text import stored_text


def test_purging_a_remembered_memory_blanks_its_note_event(store: Store) -> None:
    store.add_event("root")
    store.create_branch("main", at="root")
    m = store.remember("用户的手机号是13812345678", branch="main")
    note = store.branch_head("main")
    assert store.get_event(note).content == m.content
    removed = store.purge(memories=[m.id])
    assert removed == [note, m.id]
    assert store.get_event(note).content == ""
    assert store.get_event("root").id == "root"  # other events stay


def test_a_source_with_other_text_is_left_alone(store: Store) -> None:
    store.add_event("e1", content="我对花生过敏，记一下")
    m = store.add_memory("用户对花生过敏", sources=["e1"])
    assert store.purge(memories=[m.id]) == [m.id]
    assert store.get_event("e1").content == "我对花生过敏，记一下"


def _bytes(p: Path) -> bytes:
    out = b""
    for suffix in ("", "-wal", "-journal"):
        f = Path(str(p) + suffix)
        if f.exists():
            out += f.read_bytes()
    return out


def test_purged_text_is_in_neither_the_file_nor_the_wal(tmp_path: Path) -> None:
    p = tmp_path / "s.db"
    store = Store(p)
    event_text = "EVENT-SECRET-4471"
    memory_text = "MEMORY-SECRET-9932"
    store.add_event("e1", content=event_text)
    store.add_event("e2", parent="e1", content="harmless")
    m = store.add_memory(memory_text, sources=["e2"])
    store.add_event("x1", content="TENANT-TEXT", namespace="alice@example.com")
    assert event_text.encode() in _bytes(p) and memory_text.encode() in _bytes(p)
    store.purge(events=["e1"])
    store.purge(memories=[m.id])
    store.purge(namespace="alice@example.com", whole_namespace=True)
    raw = _bytes(p)
    for text in (event_text, memory_text, "TENANT-TEXT", "alice@example.com"):
        assert text.encode() not in raw, text
    assert store.get_event("e2").content == "harmless"
    store.close()


def test_whole_namespace_purge_leaves_neither_name_nor_ids(
    backend_name: str, reopen: Callable[[], Store]
) -> None:
    """The SQLite file's bytes, every PostgreSQL row: no name, no id, no text."""
    store = reopen()
    name, ident = "bob@example.com", "EVENT-ID-SECRET-5577"
    store.add_event(ident, content="TENANT-TEXT", namespace=name)
    store.create_branch("main", at=ident, namespace=name)
    store.remember("MEMORY-TEXT", branch="main", namespace=name)
    store.add_event("kept", namespace="bob")
    before = stored_text(backend_name, store)
    assert before is None or (name.encode() in before and ident.encode() in before)
    assert store.purge(namespace=name, whole_namespace=True) == [name]
    store.close()
    again = reopen()
    again.add_event("later", namespace="bob")  # (a later write raises counters)
    raw = stored_text(backend_name, again)
    if raw is not None:
        for text in (name, ident, "TENANT-TEXT", "MEMORY-TEXT"):
            assert text.encode() not in raw, text
    assert again.get_event("kept", namespace="bob").id == "kept"
    again.close()


def test_whole_namespace_purge_of_an_unknown_namespace_is_refused(store: Store) -> None:
    store.add_event("e1")
    before = store.audit()
    with pytest.raises(UnknownNamespace):
        store.purge(namespace="nosuch", whole_namespace=True)
    assert store.audit("nosuch") == [] and store.audit() == before


def test_query_log_can_hash_queries_and_is_private(store: Store, tmp_path: Path) -> None:
    store.add_event("e1", content="我对花生过敏")
    store.add_memory("用户对花生过敏", sources=["e1"])
    path = tmp_path / "q.jsonl"
    store.search("花生过敏", at="e1", embedder="hashing", log=QueryLog(path, hash_queries=True))
    text = path.read_text(encoding="utf-8")
    assert "花生" not in text
    assert json.loads(text)["query_sha256"] == query_hash("花生过敏")
    assert os.stat(path).st_mode & 0o777 == 0o600


def test_query_log_purge_drops_the_searches_of_purged_records(
    make_store: Callable[[], Store], tmp_path: Path
) -> None:
    store = make_store()
    store.add_event("e1", content="花生")
    store.add_event("u1", content="x", namespace="u")
    a = store.add_memory("用户对花生过敏", sources=["e1"])
    store.add_memory("用户喜欢猫", sources=["e1"])
    store.add_memory("花生 tenant", sources=["u1"], namespace="u")
    log = QueryLog(tmp_path / "q.jsonl")
    for q in ("花生", "猫"):
        store.search(q, at="e1", embedder="hashing", k=1, log=log)
    store.search("花生", at="u1", namespace="u", embedder="hashing", log=log)
    store.purge(memories=[a.id])  # the store's own log: purged with the records
    assert [e["query"] for e in log.entries()] == ["猫", "花生"]
    assert log.purge(namespace="default", ids=[a.id]) == 0  # nothing left of it
    assert log.purge(namespace="u") == 1
    assert [e["query"] for e in log.entries()] == ["猫"]
    assert os.stat(log.path).st_mode & 0o777 == 0o600


def test_search_under_concurrent_purge_raises_nothing_raw(make_store: Callable[[], Store]) -> None:
    store = make_store()
    store.add_event("e1")
    errors: list[BaseException] = []
    stop = threading.Event()

    def searcher() -> None:
        try:
            while not stop.is_set():
                store.search("fact", at="e1", embedder="hashing", k=50)
        except BaseException as exc:  # any escape fails the test
            errors.append(exc)

    threads = [threading.Thread(target=searcher) for _ in range(2)]
    for t in threads:
        t.start()
    try:
        for round_ in range(15):
            ids = [store.add_memory(f"fact {round_} {i}", sources=["e1"]).id for i in range(20)]
            store.purge(memories=ids)
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert errors == []
    store.search("fact", at="e1", embedder="hashing")  # a last search settles the cache
    cache = cache_for(store)
    held = [k for t in [*cache.terms.values(), *cache.vectors.values()] for k in t]
    assert held == []


def test_with_a_redactor_the_query_log_holds_hashes(tmp_path: Path) -> None:
    store = Store(redactor=Redactor())
    store.add_event("e1", content="我对花生过敏")
    store.add_memory("用户对花生过敏", sources=["e1"])
    path = tmp_path / "q.jsonl"
    store.search("花生过敏", at="e1", embedder="hashing", log=path)
    (entry,) = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert "query" not in entry and entry["query_sha256"] == query_hash("花生过敏")


def test_purge_reaches_the_query_logs_it_is_given(
    make_store: Callable[[], Store], tmp_path: Path
) -> None:
    store = make_store()
    store.add_event("e1", content="花生")
    store.add_event("u1", namespace="u")
    a = store.add_memory("用户对花生过敏", sources=["e1"])
    store.add_memory("用户喜欢猫", sources=["e1"])
    store.add_memory("tenant fact", sources=["u1"], namespace="u")
    path = tmp_path / "q.jsonl"
    for q in ("花生", "猫"):
        store.search(q, at="e1", embedder="hashing", k=1, log=path)
    store.search("fact", at="u1", namespace="u", embedder="hashing", log=path)
    store.purge(events=["e1"], query_logs=[path])  # takes a's source, so a goes
    assert [e["query"] for e in QueryLog(path).entries()] == ["fact"]
    assert store.purge(namespace="u", whole_namespace=True, query_logs=[QueryLog(path)])
    assert list(QueryLog(path).entries()) == []
    assert a.id not in path.read_text(encoding="utf-8")
    with pytest.raises(InvalidInput):
        store.purge(events=["e1"], query_logs=str(path))  # type: ignore[arg-type]
