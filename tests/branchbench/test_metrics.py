"""The format's keyword scoring rules, one by one, and their denominators."""

from __future__ import annotations

from branchbench.metrics import (
    Ratio,
    Tally,
    contains_any,
    forbidden_in_question,
    question_from_dict,
    question_to_dict,
    score,
)
from branchbench.scenario import Question

LEAK_Q = Question(
    id="q1",
    type="leak",
    question="我下个月要搬去哪个城市？",
    answer_any=("杭州",),
    forbidden_any=("成都",),
    superseded_any=("苏州",),
)
RETAIN_Q = Question(id="q2", type="retain", question="我最近在忙什么？", answer_any=("搬家",))


def test_leak_is_any_forbidden_word() -> None:
    assert score("你要搬去成都。", LEAK_Q).leak
    assert score("杭州，你也提过成都。", LEAK_Q).leak
    assert not score("杭州。", LEAK_Q).leak


def test_correct_needs_an_answer_word_and_no_forbidden_word() -> None:
    assert score("你要搬去杭州。", LEAK_Q).correct
    assert not score("杭州，你也提过成都。", LEAK_Q).correct
    assert not score("我不知道。", LEAK_Q).correct


def test_wrong_pick_is_forbidden_without_answer() -> None:
    assert score("成都。", LEAK_Q).wrong_pick
    assert not score("杭州或成都。", LEAK_Q).wrong_pick
    assert not score("我不知道。", LEAK_Q).wrong_pick


def test_retain_pass_is_any_answer_word() -> None:
    assert score("你在忙搬家。", RETAIN_Q).retain
    assert not score("你在忙工作。", RETAIN_Q).retain
    assert score("你在忙搬家。", RETAIN_Q).correct  # no forbidden words: correct == retain


def test_stale_is_any_superseded_word() -> None:
    assert score("先是苏州，后来杭州。", LEAK_Q).stale
    assert not score("杭州。", LEAK_Q).stale
    assert not score("苏州。", RETAIN_Q).stale  # no superseded words: never stale


def test_latin_words_match_case_insensitively() -> None:
    assert contains_any("we use PostgreSQL", ["postgresql"])
    assert not contains_any("anything", [""])


def test_tally_denominators() -> None:
    t = Tally()
    t.add(LEAK_Q, score("成都", LEAK_Q))  # leak, wrong pick
    t.add(LEAK_Q, score("杭州", LEAK_Q))  # correct
    t.add(RETAIN_Q, score("搬家", RETAIN_Q))  # retain pass
    r = t.ratios
    assert (r["leak"].n, r["leak"].total) == (1, 2)
    assert (r["wrong_pick"].n, r["wrong_pick"].total) == (1, 2)
    assert (r["accuracy"].n, r["accuracy"].total) == (2, 3)
    assert (r["answer_recall"].n, r["answer_recall"].total) == (2, 3)
    assert (r["retain"].n, r["retain"].total) == (1, 1)
    assert (r["stale"].n, r["stale"].total) == (0, 2)
    assert Ratio().rate is None and Ratio().cell() == "–"
    assert Ratio(1, 4).cell() == "0.25 (1/4)"


def test_question_round_trip_and_sensitivity_rule() -> None:
    assert question_from_dict(question_to_dict(LEAK_Q)) == LEAK_Q
    assert not forbidden_in_question(LEAK_Q)
    bad = Question(
        id="q", type="leak", question="我还去成都吗？", answer_any=("不",), forbidden_any=("成都",)
    )
    assert forbidden_in_question(bad)
