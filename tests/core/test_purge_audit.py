"""Erasure (purge) and the audit log, on every backend."""

from __future__ import annotations

import pytest

from branchmem import InvalidInput, Store, UnknownEvent, UnknownMemory
from helpers.branch_state import state


@pytest.fixture
def chat(store: Store) -> Store:
    store.add_events(
        [
            {"id": "e1", "content": "你好"},
            {"id": "e2", "parent": "e1", "content": "我的手机号是 138……"},
            {"id": "e3", "parent": "e2", "content": "我住在北京"},
        ]
    )
    store.add_memory("用户手机号 138……", sources=["e2"], id="phone")
    store.add_memory("用户住在北京", sources=["e3"], id="city")
    store.add_memory("用户手机号和住址", sources=["e2", "e3"], id="profile")
    return store


def test_purge_an_event(chat: Store) -> None:
    chat.retract("city", sources=["e3"], id="r_city")
    removed = chat.purge(events=["e2"], actor="dpo")
    assert removed == ["e2", "phone", "profile"]
    assert chat.get_event("e2").content == ""
    for gone in ("phone", "profile"):
        with pytest.raises(UnknownMemory):
            chat.get_memory(gone)
    # the lineage is intact: the descendant's own records keep their visibility
    assert [e.id for e in chat.path("e3")] == ["e1", "e2", "e3"]
    assert chat.visible("r_city", at="e3")
    entry = chat.audit("default")[-1]
    assert (entry.op, entry.actor, entry.ids) == ("purge", "dpo", ("e2", "phone", "profile"))
    # the entry names what went, never what it said (its time is a number, not text)
    assert not any(
        "138" in str(field) for field in (entry.op, entry.actor, entry.ids, entry.namespace)
    )


def test_purge_a_memory_takes_what_derives_from_it(chat: Store) -> None:
    chat.retract("phone", sources=["e3"], id="r_phone")
    assert chat.purge(memories=["phone"]) == ["phone", "r_phone"]
    assert [m.id for m in chat.memories(at="e3")] == ["city", "profile"]
    assert [m.id for m in chat.memories(at="e3", kind="retraction")] == []


def test_purge_reports_records_in_write_order_on_every_backend(store: Store) -> None:
    store.add_event("e1", content="私人信息")
    written = []
    for i in range(6):
        m = store.add_memory(f"fact {i}", sources=["e1"], id=f"m{i}")
        r = store.retract(m.id, sources=["e1"], id=f"r{i}")
        written += [m.id, r.id]
    assert store.purge(events=["e1"]) == ["e1", *written]


def test_purge_takes_conflicts_naming_the_memory(store: Store) -> None:
    store.add_event("root")
    store.create_branch("main", at="root")
    store.create_branch("chat", at="root")
    a = store.remember("预算3000", branch="main", key="budget")
    store.remember("预算4000", branch="chat", key="budget")
    r = store.merge("chat", "main", strategy="keep_both")
    assert store.conflicts(at="main")
    removed = store.purge(memories=[a.id])
    assert r.conflict_ids[0] in removed
    assert store.conflicts(at="main") == []


def test_purge_a_namespace(store: Store) -> None:
    store.add_event("e1", namespace="tenant_a", content="secret")
    store.create_branch("main", at="e1", namespace="tenant_a")
    store.remember("secret fact", branch="main", namespace="tenant_a")
    store.add_event("e1", namespace="tenant_b")
    assert store.purge(namespace="tenant_a", whole_namespace=True, actor="dpo") == ["tenant_a"]
    with pytest.raises(UnknownEvent):
        store.get_event("e1", namespace="tenant_a")
    assert store.branches(namespace="tenant_a") == []
    assert store.get_event("e1", namespace="tenant_b").id == "e1"
    # the name is gone with the namespace: its audit lines (ids only) are kept
    # under an internal number that no name leads to
    assert store.audit("tenant_a") == []
    # the namespace can be used again afterwards
    store.add_event("e9", namespace="tenant_a")
    assert store.memories(at="e9", namespace="tenant_a") == []


def test_purge_bad_input_changes_nothing(chat: Store) -> None:
    chat.create_branch("main", at="e3")
    before = state(chat)
    with pytest.raises(UnknownEvent):
        chat.purge(events=["e2", "nope"])
    with pytest.raises(UnknownMemory):
        chat.purge(memories=["phone", "nope"])
    with pytest.raises(InvalidInput):
        chat.purge()
    with pytest.raises(InvalidInput):
        chat.purge(events="e2")
    with pytest.raises(InvalidInput):
        chat.purge(events=["e2"], whole_namespace=True)
    assert state(chat) == before
    assert chat.get_event("e2").content.startswith("我的手机号")
    assert chat.get_memory("phone").id == "phone"


def test_audit_records_every_write() -> None:
    clock = [100.0]
    store = Store(clock=lambda: clock[0])
    store.add_event("e1", actor="alice")
    m = store.add_memory("x", sources=["e1"], actor="bob")
    clock[0] = 200.0
    store.add_events([{"id": "e2", "parent": "e1"}])
    r = store.retract(m.id, sources=["e2"], actor="carol")
    store.create_branch("main", at="e2")
    n = store.remember("y", branch="main")
    s = store.supersede(n.id, "z", sources=["e2"])
    log = store.audit("default")
    assert [(a.op, a.actor) for a in log] == [
        ("add_events", "alice"),
        ("add_memories", "bob"),
        ("add_events", None),
        ("retract", "carol"),
        ("create_branch", None),
        ("remember", None),
        ("supersede", None),
    ]
    assert log[1].ids == (m.id,) and log[3].ids == (r.id, m.id)
    assert s.id in log[-1].ids
    late = store.audit("default", since=200.0)
    assert len(late) == 5 and late[0].op == "add_events"
    assert store.audit("other") == []
    with pytest.raises(InvalidInput):
        store.audit("default", since="yesterday")  # type: ignore[arg-type]
    with pytest.raises(InvalidInput):
        store.add_event("e3", actor="")


def test_a_re_add_that_changes_nothing_writes_no_audit_line(store: Store) -> None:
    store.add_events([{"id": "e1"}, {"id": "e2", "parent": "e1"}])
    store.add_memory("x", sources=["e1"], id="m1")
    before = store.audit()
    store.add_events([{"id": "e1"}, {"id": "e2", "parent": "e1"}])
    store.add_event("e1")
    store.add_memory("x", sources=["e1"], id="m1")
    assert store.audit() == before
    store.add_events([{"id": "e1"}, {"id": "e3", "parent": "e1"}])  # one is new
    assert len(store.audit()) == len(before) + 1
    store.retract("m1", sources=["e2"], id="r1")
    store.create_branch("main", at="e2")
    store.snapshot("main", "v1")
    before = store.audit()
    store.add_memories([{"content": "x", "sources": ["e1"], "id": "m1"}])
    store.retract("m1", sources=["e2"], id="r1")  # the same retraction again
    store.snapshot("main", "v1")
    store.set_branch("main", "e2")  # where it is already
    store.add_events([])
    store.add_memories([])
    assert store.audit() == before


def test_audit_seq_counts_within_the_namespace(store: Store) -> None:
    store.add_event("a1", namespace="A")
    for i in range(5):
        store.add_event(f"b{i}", namespace="B")
    store.add_event("a2", parent="a1", namespace="A")
    assert [e.seq for e in store.audit("A")] == [1, 2]
    assert [e.seq for e in store.audit("B")] == [1, 2, 3, 4, 5]
