"""PrefEval's format read by branchmem_eval.prefeval: one group per (topic,
form), one passage per preference (the stated line or the conversation that
reveals it), and each question's gold its own preference."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from branchmem.errors import InvalidInput
from branchmem_eval.prefeval import read_prefeval, write_prefeval_synthetic
from helpers.public_bench import run_public_recall


def test_reads_every_topic_and_form(tmp_path: Path) -> None:
    groups = read_prefeval(write_prefeval_synthetic(tmp_path))
    assert [g.name for g in groups] == [
        f"{form}/{topic}"
        for topic in ("lifestyle_dietary", "travel_hotel")
        for form in ("explicit", "choice-based", "persona-driven")
    ]
    explicit, choice, persona = groups[:3]
    assert [p.text for p in explicit.passages] == [
        "I never eat shellfish.",
        "I keep a strictly vegan diet.",
    ]
    assert choice.passages[0].text.splitlines() == [
        "user: Any ideas for this weekend?",
        "assistant: 1. a quiet inn 2. a party resort",
        "user: The first, since i never eat shellfish.",
        "assistant: Noted.",
    ]
    # turns in their numbered order, not the file's
    assert persona.passages[0].text.splitlines()[0] == "user: Hello there."
    assert persona.passages[0].text.splitlines()[2] == "user: By the way, i never eat shellfish."
    for g in groups:
        form = g.name.split("/")[0]
        assert {p.type for p in g.passages} == {q.type for q in g.questions} == {form}
        assert [q.gold for q in g.questions] == [{p.id} for p in g.passages]
    assert explicit.questions[1].text == "Plan a dinner menu for my birthday."
    assert len(read_prefeval(tmp_path, limit=4)) == 4


def test_an_item_without_a_question_is_left_out(tmp_path: Path) -> None:
    write_prefeval_synthetic(tmp_path)
    path = tmp_path / "explicit_preference" / "travel_hotel.json"
    items = json.loads(path.read_text(encoding="utf-8"))
    items[0]["question"] = ""
    path.write_text(json.dumps(items), encoding="utf-8")
    hotel = next(g for g in read_prefeval(tmp_path) if g.name == "explicit/travel_hotel")
    assert [p.id for p in hotel.passages] == ["travel_hotel/1"]
    assert [q.gold for q in hotel.questions] == [{"travel_hotel/1"}]


def test_a_folder_without_the_set_says_what_to_pass(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match=r"explicit_preference/.*benchmark_dataset"):
        read_prefeval(tmp_path)
    (tmp_path / "explicit_preference").mkdir()
    (tmp_path / "explicit_preference" / "x.json").write_text("{", encoding="utf-8")
    with pytest.raises(InvalidInput, match="cannot read the PrefEval file"):
        read_prefeval(tmp_path)


def test_the_bench_reads_the_format_it_is_told(tmp_path: Path) -> None:
    lines = run_public_recall(tmp_path, "--smoke", "--format", "prefeval")
    assert lines[0] == "6 characters, 12 memories, 12 questions"
    kinds = [ln.split()[0] for ln in lines[2:-1]]
    assert kinds == [
        k for k in ("all", "explicit", "choice-based", "persona-driven") for _ in range(4)
    ]
