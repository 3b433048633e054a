"""Device changes, pets, diet changes and sport (`RuleExtractor`), measured on
`tests/data/rules_kinds.jsonl` (written before the patterns, kept apart from
`rules_heldout.jsonl`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from branchmem import Store
from branchmem.extract import RuleExtractor
from branchmem_eval.extract import load, score

KINDS = Path(__file__).resolve().parents[1] / "data" / "rules_kinds.jsonl"


def test_the_kinds_set_floors() -> None:
    items = load(KINDS)
    assert len(items) >= 30
    s = score(RuleExtractor().parse, items)
    assert s.precision >= 0.9, s.misses
    assert s.recall >= 0.9, s.misses


@pytest.mark.parametrize(
    ("old", "new", "gone", "kept"),
    [
        ("我用的是iPhone 12。", "我上周换了小米14。", "iPhone 12", "小米14"),
        ("I use an iPhone 12.", "I switched to a Pixel 8.", "iPhone 12", "Pixel 8"),
        ("I use a MacBook Air.", "I replaced my old laptop with a Dell XPS 13.", "MacBook", "XPS"),
    ],
)
def test_a_change_of_device_replaces_the_old_one_of_its_kind_on_that_path(
    old: str, new: str, gone: str, kept: str
) -> None:
    store = Store()
    store.add_event("e1", role="user", content=old)
    store.add_event("e1b", parent="e1", role="user", content="我用的是iPad Air。")
    store.extract(at="e1b")
    store.add_event("e2", parent="e1b", role="user", content=new)
    store.extract(at="e2")
    there = "\n".join(m.content for m in store.memories(at="e2"))
    assert gone not in there and kept in there
    assert "iPad" in there  # another kind of device stays
    assert gone in "\n".join(m.content for m in store.memories(at="e1b"))  # off the change


def test_a_new_device_without_a_change_adds() -> None:
    store = Store()
    store.add_event("e1", role="user", content="我用的是iPhone 12。")
    store.add_event("e2", parent="e1", role="user", content="I use a MacBook Air.")
    store.extract(at="e2")
    assert len([m for m in store.memories(at="e2") if m.key == "user.device"]) == 2


def test_sport_accumulates_and_a_diet_change_supersedes() -> None:
    store = Store()
    store.add_event("e1", role="user", content="I'm vegetarian. I play tennis on Saturdays.")
    store.add_event("e2", parent="e1", role="user", content="I went vegan. I go swimming too.")
    store.extract(at="e2")
    by_key = {}
    for m in store.memories(at="e2"):
        by_key.setdefault(m.key, []).append(m.content)
    assert by_key["user.diet"] == ["User's diet: vegan"]
    assert sorted(by_key["user.sport"]) == ["User does sport: swimming", "User does sport: tennis"]
