"""Consolidation keeps its evidence, on every backend: merges, contradictions
and profiles are gated records sourced from all of their inputs, visible only
where every input is, falling with any input retracted, superseded or purged;
a second run writes nothing."""

from __future__ import annotations

import pytest

from branchmem import Store
from branchmem.errors import InvalidInput


def ids(store: Store, at: str) -> set[str]:
    return {m.id for m in store.memories(at=at)}


def chain(store: Store) -> None:
    """e1 -> e2 -> e3, and e1 -> x2 (an edit of e2)."""
    store.add_events(
        [{"id": "e1", "content": "我对花生过敏。"}, {"id": "e2", "parent": "e1"},
         {"id": "e3", "parent": "e2"}, {"id": "x2", "parent": "e1"}]
    )  # fmt: skip


def test_duplicates_merge_into_one_record_from_all_their_sources(store: Store) -> None:
    chain(store)
    store.add_memories(
        [{"content": "用户对花生过敏", "sources": ["e1"], "id": "a"},
         {"content": "用户对花生过敏。", "sources": ["e2"], "id": "b"},
         {"content": "用户对花生过敏症", "sources": ["e3"], "id": "c"},
         {"content": "用户喜欢跑步", "sources": ["e3"], "id": "run"}]
    )  # fmt: skip
    done = store.consolidate(at="e3", profile=False)
    (m,) = done.merged
    assert m.sources == ("e1", "e2", "e3") and m.content == "用户对花生过敏症"
    assert m.meta == {"consolidated_from": ["a", "b", "c"], "consolidation": "merge"}
    assert ids(store, "e3") == {m.id, "run"}
    # Where not every input is, the merge is hidden and the inputs stay.
    assert ids(store, "e2") == {"a", "b"} and ids(store, "x2") == {"a"}
    assert store.consolidate(at="e3", profile=False).written == 0
    with pytest.raises(InvalidInput, match="contradictions must be one of"):
        store.consolidate(at="e3", contradictions="vote")


def test_a_consolidation_fed_by_a_branch_leaves_with_it_and_returns_on_switch(
    store: Store,
) -> None:
    chain(store)
    store.add_memories(
        [{"content": "用户住在成都", "sources": ["e1"], "id": "city1", "key": "city"},
         {"content": "用户住在成都。", "sources": ["e2"], "id": "city2", "key": "city"},
         {"content": "用户的职业是医生", "sources": ["e3"], "id": "job", "key": "job"}]
    )  # fmt: skip
    store.create_branch("chat", at="e3")
    done = store.consolidate(at="chat")
    assert done.profile is not None and len(done.merged) == 1
    assert store.profile("chat").facts == {"city": "用户住在成都。", "job": "用户的职业是医生"}
    # The user edits e2: the branch moves to the other tip.
    store.set_branch("chat", "x2")
    assert store.profile("chat").facts == {}
    assert ids(store, "chat") == {"city1"}
    store.set_branch("chat", "e3")  # and back
    assert store.profile("chat").record == done.profile
    assert ids(store, "chat") == {done.merged[0].id, "job", done.profile.id}


def test_contradictions_by_recency_or_flagged(store: Store) -> None:
    chain(store)
    store.add_memories(
        [{"content": "用户住在成都", "sources": ["e1"], "id": "old", "key": "city"},
         {"content": "用户住在杭州", "sources": ["e3"], "id": "new", "key": "city"}]
    )  # fmt: skip
    flagged = store.consolidate(at="e3", contradictions="flag", profile=False)
    (note,) = flagged.conflicts
    assert note.sources == ("e1", "e3") and note.meta["consolidated_from"] == ["new", "old"]
    assert ids(store, "e3") == {"old", "new", note.id}
    done = store.consolidate(at="e3")
    assert [r.target for r in done.retractions] == ["old"]
    assert done.retractions[0].sources == ("e1", "e3")
    # The note listed the loser: resolved, it falls with it.
    assert ids(store, "e3") == {"new", done.profile.id} and ids(store, "e1") == {"old"}
    assert store.profile("e3").facts == {"city": "用户住在杭州"}


def test_an_input_retracted_superseded_or_purged_takes_the_consolidation_down(
    store: Store,
) -> None:
    chain(store)
    store.add_events([{"id": "e4", "parent": "e3"}, {"id": "e5", "parent": "e4"}])
    store.add_memories(
        [{"content": "用户对花生过敏", "sources": ["e1"], "id": "a"},
         {"content": "用户对花生过敏。", "sources": ["e2"], "id": "b"},
         {"content": "用户住在成都", "sources": ["e2"], "id": "city", "key": "city"}]
    )  # fmt: skip
    done = store.consolidate(at="e3")
    merged, prof = done.merged[0], done.profile
    assert prof is not None and prof.meta["consolidated_from"] == ["city"]
    # The city is superseded at e4: the profile falls there (not at e3).
    store.supersede("city", "用户住在杭州", sources=["e4"], id="city2")
    assert prof.id in ids(store, "e3") and prof.id not in ids(store, "e4")
    assert store.profile("e4").facts == {}
    again = store.consolidate(at="e4")
    assert store.profile("e4").facts == {"city": "用户住在杭州"} and again.profile is not None
    # An input of the merge is retracted at e5: the merge falls there too.
    store.retract("a", sources=["e5"])
    assert merged.id in ids(store, "e4") and merged.id not in ids(store, "e5")
    assert "b" not in ids(store, "e5")  # still replaced, by the merge's own retraction
    # Purging an input deletes what holds its text.
    removed = store.purge(memories=["b"])
    assert merged.id in removed
    assert all(r.id != merged.id for r in store.records())
