"""Redaction on every write path of `Store`: meta keys and values, batches
(plain and streamed), records, branch writes, merge and resolve, the query
log, audit actors; identifiers holding personal data are refused.

Each check reads what the store holds (`redact_held.stored_text`: the SQLite
file, WAL and shared memory as bytes, every PostgreSQL row as text, the
memory backend's strings) for the held identifiers of `redact_held.held`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from branchmem import InvalidInput, Redactor, Store
from branchmem.ops import stream as streaming
from helpers.raw_state import stored_state
from helpers.redact_held import Held, assert_absent, assert_present, held, meta_of, stored_text

OpenStore = Callable[..., Store]
KEY = Redactor.generate_key()


def write_everywhere(store: Store, h: Held, log: Path) -> None:
    """One write through each `Store` path that stores text, with ``h`` in
    content, meta keys and values, and the actor."""
    meta, actor = meta_of(h), f"ops {h.email}"
    store.add_event("e1", content=h.text, meta=meta, actor=actor)
    store.add_events(
        [
            {"id": "e2", "parent": "e1", "content": h.text, "meta": meta},
            {"id": "o1", "namespace": "other", "meta": meta},
        ],
        actor=actor,
    )
    m = store.add_memory(h.text, sources=["e2"], key="profile", meta=meta, actor=actor)
    store.add_memories([{"content": h.text, "sources": ["e1"], "meta": meta}], actor=actor)
    store.supersede(m.id, h.text, sources=["e2"], meta=meta, actor=actor)
    store.create_branch("main", at="e2", actor=actor)
    store.add_event("e3", branch="main", content=h.text, meta=meta, actor=actor)
    store.remember(h.text, branch="main", key="contact", meta=meta, actor=actor)
    store.create_branch("side", at="e2")
    theirs = store.remember(h.phone, branch="side", key="contact", meta=meta)
    conflict = store.merge("side", "main", strategy="keep_both", actor=actor).conflict_ids[0]
    store.resolve(conflict, keep=theirs.id, branch="main", actor=actor)
    store.snapshot("main", "v1", actor=actor)
    store.search(h.text, at="main", embedder="hashing", meta={"note": h.text}, log=log)


@pytest.mark.parametrize("mode", ["mask", "vault"])
def test_no_store_write_path_stores_a_held_identifier(
    open_store: OpenStore, tmp_path: Path, mode: str
) -> None:
    h = held(1)
    redactor = Redactor(mode, key=KEY if mode == "vault" else None)
    store = open_store(redactor=redactor)
    write_everywhere(store, h, tmp_path / "q.jsonl")
    assert_absent(stored_text(store), h)
    assert_absent((tmp_path / "q.jsonl").read_text(encoding="utf-8"), h, "the query log")
    # What was stored is what reads give back, redacted, keys included.
    e1 = store.get_event("e1")
    assert e1.meta == redactor.redact_value(meta_of(h))
    assert_absent(repr(e1.meta), h)
    if mode == "vault":
        assert redactor.restore(e1.content) == h.text
    # A meta filter is compared with meta as stored, so the raw value finds it.
    hits = store.search(h.text, at="main", embedder="hashing", meta={"note": h.text})
    assert hits
    # Re-adding the same raw event (meta and all) is still a no-op.
    assert store.add_event("e1", content=h.text, meta=meta_of(h)) == e1


def test_the_checks_see_held_identifiers_in_a_store_without_a_redactor(
    open_store: OpenStore, tmp_path: Path
) -> None:
    h = held(1)
    store = open_store()
    write_everywhere(store, h, tmp_path / "q.jsonl")
    assert_present(stored_text(store), h)
    store.add_event("m", meta={h.email: 1})
    assert h.email in stored_text(store)


def test_a_streamed_batch_redacts_meta(
    open_store: OpenStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The path a large batch takes on PostgreSQL (a chunk at a time), made to
    take small ones; elsewhere, the plain path."""
    monkeypatch.setattr(streaming, "STREAM_FROM", 4)
    monkeypatch.setattr(streaming, "CHUNK", 2)
    h = held(2)
    store = open_store(redactor=Redactor())
    rows = [{"id": f"s{i}", "parent": f"s{i - 1}" if i else None, "meta": meta_of(h)}
            for i in range(6)]  # fmt: skip
    added = store.add_events(rows)
    assert [e.meta for e in added] == [Redactor().redact_value(meta_of(h))] * 6
    assert_absent(stored_text(store), h)


REFUSED: list[tuple[str, Callable[[Store, str], Any]]] = [
    ("event id", lambda s, x: s.add_event(f"u-{x}")),
    ("parent id", lambda s, x: s.add_event("e9", parent=f"u-{x}")),
    ("namespace", lambda s, x: s.add_event("e9", namespace=f"user/{x}")),
    ("event id", lambda s, x: s.add_events([{"id": "ok"}, {"id": x, "parent": "ok"}])),
    ("record id", lambda s, x: s.add_memory("a", sources=["e1"], id=x)),
    ("source event id", lambda s, x: s.add_memory("a", sources=[x])),
    ("key", lambda s, x: s.add_memory("a", sources=["e1"], key=f"contact:{x}")),
    ("key", lambda s, x: s.remember("a", branch="main", key=x)),
    ("event id", lambda s, x: s.remember("a", branch="main", event_id=x)),
    ("branch name", lambda s, x: s.create_branch(f"user/{x}", at="e1")),
    ("branch name", lambda s, x: s.set_branch(f"user/{x}", "e1")),
    ("snapshot name", lambda s, x: s.snapshot("main", f"v-{x}")),
    ("event id", lambda s, x: s.merge("side", "main", event_id=x, fast_forward=False)),
]


@pytest.mark.parametrize(("what", "call"), REFUSED, ids=[f"{w}-{i}" for i, (w, _) in
                                                          enumerate(REFUSED)])  # fmt: skip
@pytest.mark.parametrize("kind", ["phone", "email", "id_card"])
def test_an_identifier_holding_personal_data_is_refused_and_nothing_is_written(
    open_store: OpenStore, what: str, call: Callable[[Store, str], Any], kind: str
) -> None:
    """Ids, keys, namespaces and names are referred to by their value, so a
    redacting store refuses one holding personal data rather than rewrite it;
    the same call on a store without a redactor succeeds."""
    value = getattr(held(3), kind)
    for redactor in (Redactor(), None):
        store = open_store(redactor=redactor)
        store.add_event("e1")
        store.create_branch("main", at="e1")
        store.create_branch("side", at="e1")
        store.add_event("e2", branch="side")
        if redactor is None:
            call(store, value)
            continue
        before = stored_state(store)
        with pytest.raises(InvalidInput, match=f"{what} .* holds personal data") as err:
            call(store, value)
        assert value not in str(err.value)  # the error shows it redacted
        assert stored_state(store) == before


def test_an_actor_is_text_redacted_in_the_audit_log_and_branch_history(
    open_store: OpenStore,
) -> None:
    h = held(4)
    store = open_store(redactor=Redactor())
    store.add_event("e1", actor=h.email)
    store.create_branch("main", at="e1", actor=h.email)
    store.add_event("e2", branch="main", actor=h.phone)
    assert [a.actor for a in store.audit()] == ["[邮箱]", "[邮箱]", Redactor().redact(h.phone)]
    assert {m.actor for m in store.history("main")} == {"[邮箱]", Redactor().redact(h.phone)}
    assert_absent(stored_text(store), h)


def test_two_meta_keys_that_redact_alike_are_both_kept(open_store: OpenStore) -> None:
    store = open_store(redactor=Redactor())
    a, b = "li.lei@example.com", "han.mei@example.com"
    e = store.add_event("e1", meta={a: 1, b: 2, "[邮箱]": 0})
    assert e.meta == {"[邮箱]": 0, "[邮箱]#2": 2, "[邮箱]#3": 1}  # han.mei sorts before li.lei
    assert store.add_event("e1", meta={b: 2, "[邮箱]": 0, a: 1}) == e  # any order: a no-op


def test_a_store_given_a_redactor_later_can_still_erase_what_it_held(tmp_path: Path) -> None:
    """Ids written before a redactor was set are refused for new writes, never for
    erasure; the purge's audit line names them redacted."""
    h = held(5)
    path, ns, eid = tmp_path / "old.db", f"user/{h.email}", f"u-{h.phone}"
    with Store(path) as old:
        old.add_event(eid, content=h.text, namespace=ns)
    with Store(path, redactor=Redactor()) as store:
        with pytest.raises(InvalidInput, match="holds personal data"):
            store.add_event("e2", parent=eid, namespace=ns)
        assert store.purge(events=[eid], namespace=ns) == [eid]
        last = store.audit(ns)[-1]
        assert last.op == "purge" and last.ids == (Redactor().redact(eid),)
        assert store.purge(whole_namespace=True, namespace=ns) == [ns]
