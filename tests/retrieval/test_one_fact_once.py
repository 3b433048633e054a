"""One fact once: a repeated keyed fact writes nothing, and context lists a text once."""

from __future__ import annotations

from branchmem import Store


def test_the_same_fact_under_the_same_key_is_written_once(store: Store) -> None:
    store.add_events([{"id": "e1", "content": "我对花生过敏。"}, {"id": "e2", "parent": "e1"}])
    first = store.add_memory("用户对花生过敏", sources=["e1"], key="user.allergy")
    again = store.add_memory(" 用户对花生过敏。", sources=["e2"], key="user.allergy")
    assert again == first
    # a caller's own id is written under it (the caller will name it later)
    assert store.add_memory("用户对花生过敏", sources=["e2"], key="user.allergy", id="x").id == "x"
    store.retract("x", sources=["e2"])
    assert len(store.memories(at="e2")) == 1
    # extraction of the same statement adds no second record
    store.extract(at="e2")
    assert [m.content for m in store.memories(at="e2")].count("用户对花生过敏") == 1
    assert store.context(at="e2", query="过敏", embedder="hashing").text().count("花生") == 2


def test_other_keys_branches_and_unkeyed_records_are_still_written(store: Store) -> None:
    store.add_events([{"id": "e1"}, {"id": "a", "parent": "e1"}, {"id": "b", "parent": "e1"}])
    m = store.add_memory("用户喜欢猫", sources=["a"], key="user.pets")
    # on a sibling branch the first is not visible: written
    other = store.add_memory("用户喜欢猫", sources=["b"], key="user.pets")
    assert other.id != m.id
    assert store.add_memory("用户喜欢猫", sources=["a"], key="user.likes").id != m.id
    assert store.add_memory("用户喜欢猫", sources=["a"]).id != m.id
    # a source that has not arrived yet: nothing is visible there, so it is written
    assert store.add_memory("用户喜欢猫", sources=["later"], key="user.pets").id != m.id


def test_context_lists_a_text_once(store: Store) -> None:
    store.add_events([{"id": "e1"}])
    store.add_memory("用户对花生过敏", sources=["e1"])
    store.add_memory("用户对花生过敏", sources=["e1"])
    ctx = store.context(at="e1", query="花生", embedder="hashing")
    assert [m.content for m in ctx.memories] == ["用户对花生过敏"]
    assert [m.content for m in store.context(at="e1").memories] == ["用户对花生过敏"]
