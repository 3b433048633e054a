"""The core contract of `Store`, example by example, on every backend."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings

from branchmem import (
    Branch,
    ConflictingEvent,
    Event,
    Memory,
    NameClash,
    Store,
    UnknownAnchor,
    UnknownBranch,
    UnknownEvent,
    UnknownMemory,
)
from helpers.strategies import History, histories


def chengdu(store: Store) -> Memory:
    store.add_event("e1", parent=None, role="user", content="你好，我在准备搬家。")
    store.add_event("e2", parent="e1", role="user", content="我下个月搬去成都。")
    fact = store.add_memory(
        "用户下个月搬去成都", sources=["e2"], kind="semantic", key="user.move.city"
    )
    store.add_event("e2b", parent="e1", role="user", content="我下个月搬去杭州。")
    return fact


def test_the_issue_example(store: Store) -> None:
    fact = chengdu(store)
    assert store.memories(at="e2b") == []
    assert store.memories(at="e2") == [fact]
    why = store.explain(fact.id, at="e2b")
    assert not why.visible
    assert "'e2' is not on the path to 'e2b'" in why.reason
    assert [s.state for s in why.sources] == ["off_path"]
    assert store.explain(fact.id, at="e2").visible


def test_no_anchor_no_memories(store: Store) -> None:
    fact = chengdu(store)
    assert store.memories(at=None) == []
    assert store.visible(fact.id, at=None) is False
    assert store.path(None) == []
    assert not store.explain(fact.id, at=None).visible


def test_unknown_anchor_is_a_key_error(store: Store) -> None:
    chengdu(store)
    with pytest.raises(UnknownAnchor) as info:
        store.memories(at="nope")
    assert isinstance(info.value, KeyError)
    assert "nope" in str(info.value)


def test_shared_prefix_fact_is_visible_on_every_branch(store: Store) -> None:
    chengdu(store)
    prefix = store.add_memory("用户在准备搬家", sources=["e1"])
    assert prefix in store.memories(at="e2")
    assert prefix in store.memories(at="e2b")


def test_one_source_off_path_hides_the_whole_record(store: Store) -> None:
    chengdu(store)
    mixed = store.add_memory("摘要：成都和杭州", sources=["e1", "e2", "e2b"], kind="episodic")
    for at in ("e1", "e2", "e2b"):
        assert not store.visible(mixed.id, at=at)
    store.add_event("m", parent=["e2", "e2b"], content="merge")
    assert store.visible(mixed.id, at="m")


def test_retraction_is_gated(store: Store) -> None:
    store.add_events([{"id": "e1"}, {"id": "e2", "parent": "e1"}, {"id": "e2b", "parent": "e1"}])
    allergy = store.add_memory("用户对花生过敏", sources=["e1"], key="allergy")
    r = store.retract(allergy.id, sources=["e2"])
    assert r.target == allergy.id and r.kind == "retraction"
    assert not store.visible(allergy.id, at="e2")
    assert store.visible(allergy.id, at="e2b")
    assert store.visible(allergy.id, at="e1")
    assert store.memories(at="e2", kind="retraction") == [r]
    why = store.explain(allergy.id, at="e2")
    assert why.hidden_by == (r.id,)


def test_supersede(store: Store) -> None:
    store.add_events([{"id": "e1"}, {"id": "e2", "parent": "e1"}])
    old = store.add_memory("预算3000元", sources=["e1"], key="budget", importance=0.8)
    new = store.supersede(old.id, "预算4000元", sources=["e2"])
    assert new.key == "budget" and new.importance == 0.8 and new.sources == ("e2",)
    assert [m.content for m in store.memories(at="e2")] == ["预算4000元"]
    assert [m.content for m in store.memories(at="e1")] == ["预算3000元"]


def test_out_of_order_arrival_connects_later(store: Store) -> None:
    store.add_event("c", parent="b", content="child first")
    fact = store.add_memory("from c", sources=["c"])
    assert store.memories(at="c") == []  # waiting for b (and a)
    assert store.explain(fact.id, at="c").visible is False
    store.add_event("b", parent="a")
    assert store.memories(at="c") == []
    assert "waiting for a parent" in store.explain(fact.id, at="b").reason
    store.add_event("d")
    assert [s.state for s in store.explain(fact.id, at="d").sources] == ["not_connected"]
    store.add_event("a")
    assert store.memories(at="c") == [fact]
    assert [e.id for e in store.path("c")] == ["a", "b", "c"]


def test_sources_that_never_arrive_keep_a_record_hidden(store: Store) -> None:
    store.add_event("e1")
    ghost = store.add_memory("x", sources=["e1", "ghost"])
    assert store.memories(at="e1") == []
    assert [s.state for s in store.explain(ghost.id, at="e1").sources] == ["on_path", "missing"]


def test_readding_an_identical_event_or_record_is_a_noop(store: Store) -> None:
    e = store.add_event("e1", content="hi", meta={"a": 1})
    assert store.add_event("e1", content="hi", meta={"a": 1}) == e
    m = store.add_memory("x", sources=["e1"], id="m1")
    assert store.add_memory("x", sources=["e1"], id="m1") == m
    assert store.memories(at="e1") == [m]


def test_path_of_a_merge_is_topological(store: Store) -> None:
    store.add_events(
        [
            {"id": "r"},
            {"id": "a", "parent": "r"},
            {"id": "b", "parent": "r"},
            {"id": "m", "parent": ["a", "b"]},
            {"id": "n", "parent": "m"},
        ]
    )
    ids = [e.id for e in store.path("n")]
    assert ids[0] == "r" and ids[-2:] == ["m", "n"] and set(ids) == {"r", "a", "b", "m", "n"}
    assert store.get_event("m").parent == ["a", "b"]


def test_branches_as_anchors(store: Store) -> None:
    fact = chengdu(store)
    assert store.set_branch("main", "e2") == Branch("main", "e2", "default")
    assert store.branch_head("main") == "e2"
    assert store.memories(at="main") == [fact]
    store.set_branch("main", "e2b")  # switching only moves the pointer
    assert store.memories(at="main") == []
    assert [b.name for b in store.branches()] == ["main"]
    assert "head 'e2b'" in store.explain(fact.id, at="main").reason
    with pytest.raises(UnknownBranch):
        store.branch_head("nope")
    with pytest.raises(UnknownEvent):
        store.set_branch("other", "nope")


def test_branch_names_and_event_ids_never_clash(store: Store) -> None:
    store.add_event("e1")
    with pytest.raises(NameClash):
        store.set_branch("e1", "e1")
    store.set_branch("main", "e1")
    with pytest.raises(NameClash):
        store.add_event("main", parent="e1")
    assert store.branches() == [Branch("main", "e1")]


def test_namespaces_are_isolated(store: Store) -> None:
    store.add_event("e1", namespace="alice", content="alice")
    store.add_event("e1", namespace="bob", content="bob")
    a = store.add_memory("alice fact", sources=["e1"], namespace="alice")
    b = store.add_memory("bob fact", sources=["e1"], namespace="bob")
    assert store.memories(at="e1", namespace="alice") == [a]
    assert store.memories(at="e1", namespace="bob") == [b]
    with pytest.raises(UnknownAnchor):
        store.memories(at="e1")  # the default namespace holds nothing
    with pytest.raises(UnknownMemory):
        store.visible(a.id, at="e1", namespace="bob")
    store.add_memory("cross", sources=["e1"], namespace="carol", id="c1")
    with pytest.raises(UnknownAnchor):
        store.memories(at="e1", namespace="carol")


def test_memories_filter_by_kind_and_keep_write_order(store: Store) -> None:
    store.add_event("e1")
    kinds = ["working", "semantic", "procedural", "episodic", "semantic"]
    made = [store.add_memory(f"m{i}", sources=["e1"], kind=k) for i, k in enumerate(kinds)]
    assert store.memories(at="e1") == made
    assert store.memories(at="e1", kind="semantic") == [made[1], made[4]]


def test_dataclasses_round_trip(store: Store) -> None:
    e = store.add_event("e1", content="你好", meta={"k": [1, 2]})
    m = store.add_memory("x", sources=["e1"], meta={"lang": "zh"}, key="k")
    assert Event.from_dict(e.to_dict()) == e
    assert Memory.from_dict(m.to_dict()) == m
    merge = Event("m", parents=("a", "b"))
    assert Event.from_dict(merge.to_dict()).parents == ("a", "b")
    assert store.explain(m.id, at="e1").to_dict()["visible"] is True


def test_add_events_accepts_event_objects(store: Store) -> None:
    out = store.add_events([Event("b", parents=("a",)), Event("a")])
    assert [e.id for e in out] == ["b", "a"]
    assert [e.id for e in store.path("b")] == ["a", "b"]


def test_sqlite_reopen_gives_the_same_answers(tmp_path: Path) -> None:
    path = tmp_path / "mem.db"
    with Store(path) as store:
        fact = chengdu(store)
        store.set_branch("main", "e2")
        before = {a: store.memories(at=a) for a in ("e1", "e2", "e2b", "main")}
    with Store(path) as store:
        after = {a: store.memories(at=a) for a in ("e1", "e2", "e2b", "main")}
        assert after == before
        assert store.explain(fact.id, at="e2b").reason == (
            "hidden at 'e2b': source 'e2' is not on the path to 'e2b'"
        )
        # and writing continues where it stopped
        store.add_event("e3", parent="e2")
        assert store.memories(at="e3") == [fact]


@settings(max_examples=40, deadline=None, database=None)
@given(hist=histories(max_events=14, max_ops=8))
def test_sqlite_reopen_property(hist: History) -> None:
    import tempfile

    from helpers.reference import Reference
    from helpers.strategies import apply_op

    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "s.db"
        ref = Reference()
        with Store(path) as store:
            ops = list(hist.ops)
            for i, eid in enumerate(hist.arrival, 1):
                store.add_event(eid, parent=list(hist.parents[eid]) or None)
                ref.add_event(eid, hist.parents[eid])
                while ops and ops[0].after <= i:
                    apply_op(store, ref, ops.pop(0))
            while ops:
                apply_op(store, ref, ops.pop(0))
            before = {a: store.memories(at=a) for a in hist.arrival}
        with Store(path) as store:
            after = {a: store.memories(at=a) for a in hist.arrival}
        assert after == before
        assert {a: [m.id for m in ms] for a, ms in after.items()} == {
            a: ref.memories(a) for a in hist.arrival
        }


def test_store_is_a_context_manager(make_store: Callable[[], Store]) -> None:
    with make_store() as s:
        s.add_event("e1")
        assert s.path("e1")[0].id == "e1"


def test_large_batches_with_a_stored_id_in_the_middle(store: Store) -> None:
    """Batches longer than one multi-row statement: a re-added identical event is
    a no-op, a clashing one refuses the whole batch, and nothing is half-written."""
    store.add_events([{"id": f"e{i}", "parent": f"e{i - 1}" if i else None} for i in range(300)])
    batch = [{"id": f"e{i}", "parent": f"e{i - 1}"} for i in range(250, 600)]  # e250..e299 again
    got = store.add_events(batch)
    assert [e.id for e in got] == [f"e{i}" for i in range(250, 600)]
    assert [e.id for e in store.path("e599")] == [f"e{i}" for i in range(600)]
    clash = [{"id": f"f{i}", "parent": "e599"} for i in range(200)]
    clash[150] = {"id": "e10", "parent": "e599"}  # e10 exists with another parent
    with pytest.raises(ConflictingEvent):
        store.add_events(clash)
    with pytest.raises(UnknownEvent):
        store.get_event("f0")
    mems = store.add_memories(
        [{"content": f"fact {i}", "sources": [f"e{i}"], "key": f"k{i}"} for i in range(600)]
    )
    assert [m.id for m in store.memories(at="e599")] == [m.id for m in mems]
    assert [m.content for m in store.memories(at="e99")] == [f"fact {i}" for i in range(100)]


def test_ids_made_for_a_write_are_not_looked_up_and_given_ones_are(store: Store) -> None:
    """Records written without an id get one made for them (`new_record_id`),
    which no stored record can hold: such a write looks nothing up (on SQLite,
    no statement reads the records table by id). An id the caller gives is
    still checked: the same record again is a no-op, other content a conflict."""
    from branchmem import ConflictingRecord

    store.add_event("e1")
    b = store._engine.backend
    db = getattr(b, "_db", None)
    seen: list[str] = []
    if db is not None:
        db.set_trace_callback(seen.append)
    made = store.add_memories([{"content": "a", "sources": ["e1"]}] * 2)
    new = store.supersede(made[0].id, "a2", sources=["e1"])  # reads the one it replaces
    if db is not None:
        db.set_trace_callback(None)
        lookups = [s for s in seen if "FROM records" in s and "records_id" in s]
        assert [s for s in lookups if made[0].id not in s or new.id in s] == [], lookups
    assert len({m.id for m in made} | {new.id}) == 3
    assert [m.content for m in store.memories(at="e1")] == ["a", "a2"]
    given = store.add_memories([{"content": "b", "sources": ["e1"], "id": "given"}])
    assert store.add_memories([given[0]]) == given  # the same record again
    with pytest.raises(ConflictingRecord):
        store.add_memories([{"content": "other", "sources": ["e1"], "id": "given"}])
    with pytest.raises(ConflictingRecord):
        store.supersede(made[1].id, "c", sources=["e1"], id="given")
