"""Merge (append, overwrite, keep_both), conflicts and resolve, on every backend."""

from __future__ import annotations

import pytest

from branchmem import (
    BranchConflict,
    ConflictClosed,
    InvalidInput,
    Store,
    UnknownAnchor,
    UnknownBranch,
    UnknownConflict,
    UnknownEvent,
)
from helpers.branch_state import state


def contents(store: Store, at: str) -> list[str]:
    return sorted(m.content for m in store.memories(at=at))


@pytest.fixture
def two(store: Store) -> Store:
    """main and chat fork at root; each then writes its own budget and one more fact."""
    store.add_event("root")
    store.create_branch("main", at="root")
    store.remember("城市北京", branch="main", key="city", id="city")
    store.create_branch("chat", at="main")
    store.remember("预算3000", branch="main", key="budget", id="b_main")
    store.remember("喜欢猫", branch="main", id="cat")
    store.remember("预算4000", branch="chat", key="budget", id="b_chat")
    store.remember("学日语", branch="chat", id="jp")
    return store


def test_append_keeps_both_sides(two: Store) -> None:
    old_main, chat_head = two.branch_head("main"), two.branch_head("chat")
    r = two.merge("chat", "main")
    assert r.event is not None and r.head == r.event == two.branch_head("main")
    assert set(two.get_event(r.event).parents) == {old_main, chat_head}
    assert (r.added, r.overwritten, r.conflicts, r.fast_forward) == (2, 0, 0, False)
    assert contents(two, "main") == ["喜欢猫", "城市北京", "学日语", "预算3000", "预算4000"]
    assert contents(two, "chat") == ["城市北京", "学日语", "预算4000"]  # source unchanged
    assert two.history("main")[-1].why == "merge"


def test_overwrite_retracts_the_targets_value_from_the_merge_event(two: Store) -> None:
    r = two.merge("chat", "main", strategy="overwrite")
    assert (r.added, r.overwritten, r.conflicts) == (2, 1, 0)
    assert contents(two, "main") == ["喜欢猫", "城市北京", "学日语", "预算4000"]
    assert not two.visible("b_main", at="main")
    assert two.explain("b_main", at="main").hidden_by  # a gated retraction did it
    # The retraction is sourced from the merge event: the old head still sees the value.
    assert two.visible("b_main", at=two.get_event(r.head).parents[0])
    assert contents(two, "chat") == ["城市北京", "学日语", "预算4000"]


def test_keep_both_flags_a_conflict_and_resolve_closes_it(two: Store) -> None:
    r = two.merge("chat", "main", strategy="keep_both")
    assert (r.added, r.overwritten, r.conflicts) == (2, 0, 1)
    assert "预算3000" in contents(two, "main") and "预算4000" in contents(two, "main")
    (c,) = two.conflicts(at="main")
    assert (c.id, c.key, c.members, c.event) == (
        r.conflict_ids[0],
        "budget",
        ("b_main", "b_chat"),
        r.event,
    )
    assert two.conflicts(at="chat") == []
    # conflict records are not memories
    assert all(m.id != c.id for m in two.memories(at="main"))
    two.create_branch("review", at="main")
    ev = two.resolve(c.id, keep="b_chat", branch="main", actor="alice")
    assert two.branch_head("main") == ev.id
    assert contents(two, "main") == ["喜欢猫", "城市北京", "学日语", "预算4000"]
    assert two.conflicts(at="main") == []
    # still open on a branch that forked before the resolution
    assert [x.id for x in two.conflicts(at="review")] == [c.id]
    before = state(two)
    with pytest.raises(ConflictClosed):
        two.resolve(c.id, keep="b_chat", branch="main")
    with pytest.raises(ConflictClosed):  # not visible from chat at all
        two.resolve(c.id, keep="b_chat", branch="chat")
    with pytest.raises(InvalidInput):
        two.resolve(c.id, keep="cat", branch="review")
    with pytest.raises(UnknownConflict):
        two.resolve("cat", keep="cat", branch="review")
    with pytest.raises(UnknownConflict):
        two.resolve("nope", keep="cat", branch="review")
    with pytest.raises(UnknownBranch):
        two.resolve(c.id, keep="b_chat", branch="nope")
    with pytest.raises(BranchConflict):
        two.resolve(c.id, keep="b_chat", branch="review", expected_head="root")
    assert state(two) == before
    two.resolve(c.id, keep="b_main", branch="review")
    assert "预算3000" in contents(two, "review") and "预算4000" not in contents(two, "review")


def test_same_content_is_no_conflict(store: Store) -> None:
    store.add_event("root")
    store.create_branch("main", at="root")
    store.create_branch("chat", at="root")
    store.remember("预算3000", branch="main", key="budget")
    store.remember("预算3000", branch="chat", key="budget")
    r = store.merge("chat", "main", strategy="keep_both")
    assert r.conflicts == 0 and store.conflicts(at="main") == []


def test_merging_an_ancestor_is_a_noop(two: Store) -> None:
    two.merge("chat", "main")
    before = state(two)
    r = two.merge("chat", "main")
    assert r.noop and r.event is None and r.head == two.branch_head("main")
    assert state(two) == before


def test_fast_forward(store: Store) -> None:
    store.add_event("root")
    store.create_branch("main", at="root")
    store.create_branch("chat", at="main")
    store.remember("a", branch="chat")
    r = store.merge("chat", "main")
    assert r.fast_forward and r.event is None and r.added == 1
    assert store.branch_head("main") == store.branch_head("chat")


def test_fast_forward_can_be_refused(store: Store) -> None:
    store.add_event("root")
    store.create_branch("main", at="root")
    store.create_branch("chat", at="main")
    store.remember("a", branch="chat")
    r = store.merge("chat", "main", fast_forward=False)
    assert not r.fast_forward and r.event is not None
    assert store.get_event(r.event).parents == ("root", store.branch_head("chat"))
    assert contents(store, "main") == ["a"]


def test_overwrite_on_a_fast_forward_path_still_overwrites(store: Store) -> None:
    store.add_event("root")
    store.create_branch("main", at="root")
    store.remember("预算3000", branch="main", key="budget", id="old")
    store.create_branch("chat", at="main")
    store.remember("预算4000", branch="chat", key="budget", id="new")
    r = store.merge("chat", "main", strategy="overwrite")
    assert not r.fast_forward and r.overwritten == 1
    assert contents(store, "main") == ["预算4000"]


def test_merge_an_event_path(store: Store) -> None:
    """The source may be an event: the conversation's current node."""
    store.add_events([{"id": "root"}, {"id": "u1", "parent": "root"}])
    store.create_branch("main", at="root")
    store.add_memory("fact", sources=["u1"], id="f")
    r = store.merge("u1", "main")
    assert r.fast_forward and [m.id for m in store.memories(at="main")] == ["f"]


def test_merge_bad_input_changes_nothing(two: Store) -> None:
    before = state(two)
    with pytest.raises(InvalidInput):
        two.merge("main", "main")
    with pytest.raises(InvalidInput):
        two.merge("chat", "main", strategy="rebase")
    with pytest.raises(UnknownBranch):
        two.merge("chat", "nope")
    with pytest.raises(UnknownAnchor):
        two.merge("nope", "main")
    with pytest.raises(InvalidInput):
        two.merge("chat", "main", event_id="root")  # an existing event id
    with pytest.raises(BranchConflict):
        two.merge("chat", "main", expected_head="root")
    assert state(two) == before


def test_merge_is_audited(two: Store) -> None:
    r = two.merge("chat", "main", strategy="keep_both", actor="bob")
    last = two.audit("default")[-1]
    assert last.op == "merge" and last.actor == "bob"
    assert r.event in last.ids and r.conflict_ids[0] in last.ids


def test_conflicts_bad_anchor(two: Store) -> None:
    assert two.conflicts(at=None) == []
    with pytest.raises(UnknownAnchor):
        two.conflicts(at="nope")


def test_merge_of_a_waiting_event_is_refused(store: Store) -> None:
    store.add_event("root")
    store.create_branch("main", at="root")
    store.add_event("orphan", parent="not_yet")
    before = state(store)
    with pytest.raises(InvalidInput, match="waiting"):
        store.merge("orphan", "main")
    assert state(store) == before


def test_merge_into_a_waiting_head_is_refused(store: Store) -> None:
    store.add_event("root")
    store.create_branch("main", at="root")
    store.remember("x", branch="main")
    store.add_event("orphan", parent="not_yet")
    store.create_branch("w", at="orphan")
    before = state(store)
    for strategy in ("append", "overwrite", "keep_both"):
        with pytest.raises(InvalidInput, match="waiting"):
            store.merge("main", "w", strategy=strategy, event_id="mrg")
    assert state(store) == before
    with pytest.raises(UnknownEvent):
        store.get_event("mrg")
