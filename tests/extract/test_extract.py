"""Store.extract on every backend: gated writes, idempotence, branch isolation, fail closed."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from branchmem import Store
from branchmem.errors import BranchmemError, ExtractionError, InvalidInput, UnknownAnchor
from branchmem.extract import Proposal, RuleExtractor, extract, proposal_id
from branchmem.model import Event, Memory


def contents(store: Store, at: str) -> list[str]:
    return sorted(m.content for m in store.memories(at=at))


def snapshot(store: Store, anchors: list[str]) -> dict[str, list[tuple[str, str]]]:
    """Every record visible at each anchor (the store's observable state)."""
    return {a: sorted((m.id, m.content) for m in store.memories(at=a)) for a in anchors}


class Scripted:
    """An extractor that proposes what it is told (for fail-closed checks)."""

    def __init__(self, proposals: Any) -> None:
        self.proposals = proposals
        self.calls: list[tuple[list[str], list[str]]] = []

    def propose(self, window: list[Event], visible: list[Memory]) -> Any:
        self.calls.append(([e.id for e in window], [m.id for m in visible]))
        return self.proposals


def test_issue_example_change_of_job(store: Store) -> None:
    store.add_event("e1", parent=None, role="user", content="我在腾讯做产品经理。")
    first = store.extract(at="e1")
    assert [m.key for m in first] == ["user.employer", "user.job"]
    store.add_event("e2", parent="e1", role="user", content="我换工作了，现在在阿里巴巴上班。")
    second = store.extract(at="e2")
    assert [m.content for m in second] == ["用户在阿里巴巴工作"]
    assert second[0].sources == ("e2",)
    assert contents(store, "e2") == ["用户在阿里巴巴工作", "用户的职业是产品经理"]
    assert contents(store, "e1") == ["用户在腾讯工作", "用户的职业是产品经理"]
    # the superseding record remembers the value it replaced
    assert second[0].meta is not None and second[0].meta["previous"] == ["腾讯"]


def test_extract_twice_at_the_same_anchor_writes_nothing(store: Store) -> None:
    store.add_event("e1", content="I'm allergic to peanuts and I live in Seattle.")
    store.add_event("e2", parent="e1", content="We just moved to Austin last month.")
    assert store.extract(at="e2")
    before = snapshot(store, ["e1", "e2"])
    audit_before = len(store.audit())
    assert store.extract(at="e2") == []
    again = extract(store, "e2")
    assert again.written == () and again.dropped == ()
    assert snapshot(store, ["e1", "e2"]) == before
    assert len(store.audit()) == audit_before


def test_same_proposal_twice_is_written_once(store: Store) -> None:
    """Ids come from the proposal, so a retry after a fresh proposal is a no-op too."""
    store.add_event("e1", content="x")
    p = Proposal("add", "a fact", ("e1",), key="k")
    done = extract(store, "e1", extractor=Scripted([p]))
    assert [m.id for m in done.written] == [proposal_id(p)]
    again = extract(store, "e1", extractor=Scripted([p, p]))
    assert again.written == () and again.already == 1


def test_window_of_one_reads_only_the_anchor(store: Store) -> None:
    store.add_events([{"id": "e1", "content": "a"}, {"id": "e2", "parent": "e1", "content": "b"}])
    ex = Scripted([])
    store.extract(at="e2", extractor=ex, window=1)
    store.extract(at="e2", extractor=ex, window=8)
    assert [w for w, _ in ex.calls] == [["e2"], ["e1", "e2"]]


def test_change_of_mind_on_one_branch_leaves_the_other_alone(store: Store) -> None:
    store.add_event("e1", content="我住在北京，我对芒果过敏。")
    store.extract(at="e1")
    store.add_event("a2", parent="e1", content="我搬到上海了。")
    store.add_event("a3", parent="a2", content="其实我对芒果不过敏了。")
    store.add_event("b2", parent="e1", content="我养了一只柯基。")
    for at in ("a3", "b2"):
        store.extract(at=at)
    assert contents(store, "a3") == ["用户住在上海"]
    assert contents(store, "b2") == ["用户住在北京", "用户养了柯基", "用户对芒果过敏"]
    assert contents(store, "e1") == ["用户住在北京", "用户对芒果过敏"]
    assert contents(store, "a2") == ["用户住在上海", "用户对芒果过敏"]


def test_multi_valued_keys_accumulate_and_single_valued_supersede(store: Store) -> None:
    store.add_event("e1", content="I have a dog. I live in Oslo.")
    store.add_event("e2", parent="e1", content="We adopted a rabbit. I'm moving to Bergen.")
    store.extract(at="e2")
    got = contents(store, "e2")
    assert got == ["User has a pet: dog", "User has a pet: rabbit", "User is moving to Bergen"]
    # extracting at the parent later gives the parent its own, earlier state
    store.extract(at="e1")
    assert contents(store, "e1") == ["User has a pet: dog", "User lives in Oslo"]
    assert contents(store, "e2") == got


def test_assistant_messages_are_read_only_when_asked(store: Store) -> None:
    store.add_event("e1", role="assistant", content="I live in Paris.")
    assert store.extract(at="e1") == []
    both = RuleExtractor(roles=("user", "assistant"))
    assert [m.content for m in store.extract(at="e1", extractor=both)] == ["User lives in Paris"]


@pytest.mark.parametrize(
    ("proposal", "why"),
    [
        (Proposal("add", "x", ("b2",)), "not events read on the path"),
        (Proposal("add", "x", ("nowhere",)), "not events read on the path"),
        (Proposal("add", "x", ()), "source"),
        (Proposal("update", "x", ("a2",), target="m-b"), "not a memory visible"),
        (Proposal("delete", "", ("a2",), target="m-unknown"), "not a memory visible"),
        (Proposal("update", "", ("a2",), target="m-root"), "non-empty"),
        (Proposal("add", "x", ("a2",), kind="dream"), "kind"),
        (Proposal("add", "x", ("a2",), importance=7.0), "importance"),
        (Proposal("add", "x", ("a2",), target="m-root"), "no target"),
        (Proposal("merge", "x", ("a2",)), "op"),
    ],
)
def test_bad_proposals_are_dropped_and_reported(
    make_store: Callable[[], Store], proposal: Proposal, why: str
) -> None:
    store = make_store()
    store.add_events([{"id": "e1"}, {"id": "a2", "parent": "e1"}, {"id": "b2", "parent": "e1"}])
    store.add_memory("root fact", sources=["e1"], id="m-root")
    store.add_memory("b fact", sources=["b2"], id="m-b")
    before = snapshot(store, ["e1", "a2", "b2"])
    good = Proposal("add", "good", ("a2",))
    done = extract(store, "a2", extractor=Scripted([proposal, good]))
    assert [m.content for m in done.written] == ["good"]
    assert len(done.dropped) == 1 and why in done.dropped[0].reason
    after = snapshot(store, ["e1", "a2", "b2"])
    assert after["e1"] == before["e1"] and after["b2"] == before["b2"]


@pytest.mark.parametrize(
    "garbage", [None, "facts", [{"op": "add"}], [Proposal("add", "x", ("e1",)), 3]]
)
def test_an_extractor_returning_garbage_is_an_error_and_writes_nothing(
    store: Store, garbage: Any
) -> None:
    store.add_event("e1", content="I live in Rome.")
    with pytest.raises(ExtractionError, match="Proposal"):
        store.extract(at="e1", extractor=Scripted(garbage))
    assert store.memories(at="e1") == []
    assert isinstance(ExtractionError("x"), BranchmemError)


def test_bad_arguments(store: Store) -> None:
    store.add_event("e1", content="I live in Rome.")
    for window in (0, -1, True, 2.5, None):
        with pytest.raises(InvalidInput, match="window"):
            store.extract(at="e1", window=window)  # type: ignore[arg-type]
    with pytest.raises(UnknownAnchor):
        store.extract(at="nope")
    with pytest.raises(InvalidInput):
        store.extract(at=["e1"])  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="propose"):
        store.extract(at="e1", extractor=object())  # type: ignore[arg-type]
    assert store.memories(at="e1") == []


def test_an_update_may_target_an_add_of_the_same_batch(store: Store) -> None:
    store.add_events([{"id": "e1"}, {"id": "e2", "parent": "e1"}])
    add = Proposal("add", "budget 3000", ("e1",), key="budget")
    upd = Proposal("update", "budget 4000", ("e2",), target=proposal_id(add))
    done = extract(store, "e2", extractor=Scripted([add, upd]))
    assert [m.content for m in done.written] == ["budget 3000", "budget 4000"]
    assert contents(store, "e1") == ["budget 3000"]
    assert contents(store, "e2") == ["budget 4000"]
    assert store.get_memory(proposal_id(upd)).key == "budget"  # kept from the old record


def test_extract_on_a_branch_name_and_a_waiting_anchor(store: Store) -> None:
    store.add_event("e1", content="I live in Lima.")
    store.create_branch("main", at="e1")
    assert [m.content for m in store.extract(at="main")] == ["User lives in Lima"]
    store.add_event("w2", parent="not-yet", content="I live in Quito.")
    assert store.extract(at="w2") == []  # no path yet: nothing to read, nothing written


def test_path_last_reads_only_the_tail(store: Store) -> None:
    store.add_events([{"id": f"e{i}", "parent": f"e{i - 1}" if i else None} for i in range(6)])
    store.add_event("m", parent=["e5", "e2"])
    assert [e.id for e in store.path("e5", last=2)] == ["e4", "e5"]
    assert [e.id for e in store.path("e5", last=99)] == [e.id for e in store.path("e5")]
    assert store.path("e5", last=0) == []
    assert [e.id for e in store.path("m", last=3)] == ["e2", "e5", "m"]  # nearest first
    for bad in (-1, 1.5, True):
        with pytest.raises(InvalidInput, match="last"):
            store.path("e5", last=bad)  # type: ignore[arg-type]
