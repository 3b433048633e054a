"""`Store(redactor=...)`: raw personal data never reaches the stored rows or the file.

Every write path (events one by one, in batches and on branches, memories,
supersede, remember, merge) and the query log are checked on every backend,
through the public reads and: in memory, the backend's own objects; on
SQLite, the tables and the bytes of the database, WAL and shared-memory
files; on PostgreSQL, every parameter of every statement sent to the server
and every table's rows.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from branchmem import ConflictingEvent, Redactor, Store
from branchmem.retrieval.querylog import query_hash
from helpers.pg_helpers import Tracer, open_backend
from helpers.raw_state import raw_state
from helpers.redact_held import strings_in

PHONE, ID, CARD = "138-1234-5678", "11010519491231002X", "6222 0212 3456 7890 128"
EMAIL, IP = "zhang.wei@example.com", "192.168.31.7"
RAW = [PHONE, "13812345678", ID, CARD, "6222021234567890128", EMAIL, IP]
TEXT = f"我的手机{PHONE}，身份证{ID}，卡号 {CARD}，邮箱 {EMAIL}，IP {IP}"
MASKED = "我的手机138****5678，身份证[身份证号]，卡号 [银行卡号]，邮箱 [邮箱]，IP [IP地址]"
KEY = Redactor.generate_key()

OpenStore = Callable[..., Store]


class Sent:
    """Every parameter of every statement sent to PostgreSQL, as text."""

    def __init__(self) -> None:
        self.tracer = Tracer()
        self.texts: list[str] = []

    def __call__(self, sql: str, params: Any) -> None:
        self.tracer(sql, params)
        self.texts.append(repr(params))


@pytest.fixture
def sent() -> Sent:
    return Sent()


@pytest.fixture
def open_store(backend_name: str, tmp_path: Path, sent: Sent) -> Iterator[OpenStore]:
    """Opens a store on the chosen backend with the given ``redactor``."""
    opened: list[Store] = []

    def factory(redactor: Redactor | None = None, name: str = "r.db") -> Store:
        if backend_name == "postgres":
            s = Store(backend=open_backend(sent), redactor=redactor)  # type: ignore[arg-type]
        else:
            s = Store(None if backend_name == "memory" else tmp_path / name, redactor=redactor)
        opened.append(s)
        return s

    yield factory
    for s in opened:
        with contextlib.suppress(Exception):
            s.close()
    assert not sent.tracer.problems


def write_everywhere(store: Store, log: Path, text: str = TEXT) -> None:
    """One write through every path that stores text."""
    store.add_event("e1", content=text)
    store.add_events(
        [
            {"id": "e2", "parent": "e1", "content": "second " + text},
            {"id": "o1", "namespace": "other", "content": text},
        ]
    )
    m = store.add_memory(text, sources=["e2"], key="profile")
    store.add_memories([{"content": "batch " + text, "sources": ["e1"]}])
    store.supersede(m.id, "new " + text, sources=["e2"])
    store.create_branch("main", at="e2")
    store.add_event("e3", branch="main", content=text)
    store.remember("remembered " + text, branch="main", key="contact")
    store.create_branch("side", at="e2")
    store.remember("side " + text, branch="side", key="contact")
    store.merge("side", "main", strategy="keep_both")
    store.search(text, at="main", embedder="hashing", log=log)


def public_texts(store: Store) -> list[str]:
    out = []
    for ns, at in (("default", "main"), ("default", "side"), ("other", "o1")):
        out += [e.content for e in store.path(at, namespace=ns)]
        out += [m.content for m in store.memories(at=at, namespace=ns, include_archived=True)]
    return out


def assert_no_raw(texts: list[str]) -> None:
    for raw in RAW:
        assert not [t for t in texts if raw in t], raw


def file_bytes(path: Path) -> bytes:
    return b"".join(
        p.read_bytes() for p in (path, Path(f"{path}-wal"), Path(f"{path}-shm")) if p.exists()
    )


@pytest.mark.parametrize("mode", ["mask", "drop", "vault"])
def test_raw_personal_data_is_never_stored(
    open_store: OpenStore, backend_name: str, tmp_path: Path, mode: str, sent: Sent
) -> None:
    redactor = Redactor(mode, key=KEY if mode == "vault" else None)
    store = open_store(redactor)
    write_everywhere(store, tmp_path / "q.jsonl")
    texts = public_texts(store)
    assert len(texts) > 10
    assert_no_raw(texts)
    if mode == "mask":
        assert MASKED in store.get_event("e1").content
    if mode == "vault":
        assert redactor.restore(store.get_event("e1").content) == TEXT
    logged = (tmp_path / "q.jsonl").read_text(encoding="utf-8")
    assert_no_raw([logged])
    # with a redactor, a log given by path holds the (redacted) query's hash
    assert json.loads(logged)["query_sha256"] == query_hash(redactor.redact(TEXT))
    if backend_name == "memory":
        assert_no_raw(list(strings_in(store._engine.backend)))
        return
    if backend_name == "postgres":
        # Raw text never reaches the server: no statement carries it, no row holds
        # it. (The server's files are not ours to read; see docs/scaling.md.)
        assert len(sent.texts) > 50
        assert_no_raw(sent.texts)
        cells = [repr(rows) for rows in raw_state(store).values()]
        assert_no_raw(cells)
        return
    db = tmp_path / "r.db"
    assert_no_raw([file_bytes(db).decode("utf-8", "replace")])  # while open (WAL)
    store.close()
    with contextlib.closing(sqlite3.connect(db)) as con:
        tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        cells = [str(v) for t in tables for row in con.execute(f'SELECT * FROM "{t}"') for v in row]
    assert len(cells) > 50
    assert_no_raw(cells)
    data = file_bytes(db)
    for raw in RAW:
        assert raw.encode("utf-8") not in data, raw


def test_the_checks_see_raw_data_when_no_redactor_is_set(
    open_store: OpenStore, backend_name: str, tmp_path: Path, sent: Sent
) -> None:
    """The same checks fail on a store without a redactor: they can see raw data."""
    store = open_store()
    write_everywhere(store, tmp_path / "q.jsonl")
    with pytest.raises(AssertionError):
        assert_no_raw(public_texts(store))
    with pytest.raises(AssertionError):
        assert_no_raw([(tmp_path / "q.jsonl").read_text(encoding="utf-8")])
    if backend_name == "memory":
        with pytest.raises(AssertionError):
            assert_no_raw(list(strings_in(store._engine.backend)))
    elif backend_name == "postgres":
        with pytest.raises(AssertionError):
            assert_no_raw(sent.texts)
        with pytest.raises(AssertionError):
            assert_no_raw([repr(rows) for rows in raw_state(store).values()])
    else:
        store.close()
        assert PHONE.encode() in file_bytes(tmp_path / "r.db")


@pytest.mark.parametrize("mode", ["mask", "vault"])
def test_re_adding_the_same_raw_text_is_a_no_op(open_store: OpenStore, mode: str) -> None:
    store = open_store(Redactor(mode, key=KEY if mode == "vault" else None))
    first = store.add_event("e1", content=TEXT)
    again = store.add_event("e1", content=TEXT)
    assert first == again
    m = store.add_memory(TEXT, sources=["e1"], id="m1")
    assert store.add_memory(TEXT, sources=["e1"], id="m1") == m
    with pytest.raises(ConflictingEvent):
        store.add_event("e1", content=TEXT + "!")


def test_a_refused_batch_stores_nothing(open_store: OpenStore) -> None:
    store = open_store(Redactor())
    store.add_event("e1", content="hello")
    with pytest.raises(ConflictingEvent):
        store.add_events([{"id": "e2", "content": TEXT}, {"id": "e1", "content": "other"}])
    assert [e.id for e in store.path("e1")] == ["e1"]
    with pytest.raises(KeyError):
        store.get_event("e2")


def test_the_store_shows_its_redactor(open_store: OpenStore) -> None:
    r = Redactor(lang="en")
    assert open_store(r).redactor is r
    assert open_store(name="plain.db").redactor is None
