"""RuleExtractor: patterns on worked examples, and its floors on the held-apart set."""

from __future__ import annotations

from pathlib import Path

import pytest

from branchmem.errors import InvalidInput
from branchmem.extract import RuleExtractor
from branchmem_eval.extract import load, score

HELDOUT = Path(__file__).parents[1] / "data" / "rules_heldout.jsonl"
parse = RuleExtractor().parse


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "我在腾讯做产品经理。",
            [("add", "user.employer", "腾讯"), ("add", "user.job", "产品经理")],
        ),
        ("我换工作了，现在在阿里巴巴上班。", [("add", "user.employer", "阿里巴巴")]),
        ("其实我对芒果不过敏了", [("delete", "user.allergy", "芒果")]),
        (
            "我叫张伟，住在南京，养了一只布偶猫。",
            [
                ("add", "user.name", "张伟"),
                ("add", "user.location", "南京"),
                ("add", "user.pet", "布偶猫"),
            ],
        ),
        ("我下个月搬去成都。", [("add", "user.location", "成都")]),
        (
            "actually I'm not allergic to shellfish anymore",
            [("delete", "user.allergy", "shellfish")],
        ),
        (
            "I'm Maria and I live in Lisbon.",
            [("add", "user.name", "Maria"), ("add", "user.location", "Lisbon")],
        ),
        ("I work at Acme Corp as a designer.", [("add", "user.employer", "Acme Corp")]),
        ("我朋友叫小李，住在上海。", []),
        ("你住在哪里？", []),
        ("If I moved to Rome, would I like it?", []),
        ("", []),
    ],
)
def test_worked_examples(text: str, expected: list[tuple[str, str, str]]) -> None:
    assert [(f.op, f.key, f.value) for f in parse(text)] == expected


def test_content_follows_the_language() -> None:
    assert [f.content for f in parse("我对花生过敏。")] == ["用户对花生过敏"]
    assert [f.content for f in parse("I'm allergic to peanuts.")] == ["User is allergic to peanuts"]


@pytest.mark.parametrize(
    ("text", "content"),
    [
        ("我下个月搬去杭州。", "用户要搬去杭州"),
        ("我们准备搬到上海", "用户要搬去上海"),
        ("I'm moving to Rome.", "User is moving to Rome"),
        ("我搬到上海了。", "用户住在上海"),
        ("去年我搬到了上海", "用户住在上海"),
        ("We just moved to Oslo.", "User lives in Oslo"),
    ],
)
def test_a_move_still_to_come_is_not_written_as_where_one_lives(text: str, content: str) -> None:
    [fact] = parse(text)
    assert (fact.key, fact.content) == ("user.location", content)


def test_roles_are_checked() -> None:
    with pytest.raises(InvalidInput, match="roles"):
        RuleExtractor(roles=("robot",))
    with pytest.raises(InvalidInput, match="roles"):
        RuleExtractor(roles=())


def test_held_apart_set_floors() -> None:
    """157 labelled utterances written before the rules and never used to tune
    them (`python bench/rules_accuracy.py` prints the figures)."""
    items = load(HELDOUT)
    assert len(items) >= 150
    assert sum(1 for i in items if any("\u3400" <= c <= "\u9fff" for c in i["text"])) >= 60
    s = score(parse, items)
    assert s.precision >= 0.85, s.misses
    assert s.recall >= 0.80, s.misses
