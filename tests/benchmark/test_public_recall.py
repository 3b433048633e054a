"""The public-set reader and its figures (branchmem_eval.public): PerLTQA's
format read into passages and questions with their gold ids, the plain BM25
and cosine floors, and Recall@k / MRR by question type."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from branchmem.errors import InvalidInput
from branchmem_eval.public import (
    Ranks,
    bm25_order,
    cosine_order,
    read_perltqa,
    words,
    write_synthetic,
)


def test_reads_every_section_and_question_type(tmp_path: Path) -> None:
    chars = read_perltqa(write_synthetic(tmp_path))
    assert [c.name for c in chars] == ["Ada Lin", "Ivo Marsh"]
    ada = chars[0]
    ids = {p.id: p for p in ada.passages}
    assert ids["profile/Occupation"].text == "Occupation: glassblower"
    assert ids["1_0"].type == "social_relationship" and "pottery class" in ids["1_0"].text
    assert ids["1_0_0"].type == "events" and "Lisbon harbour" in ids["1_0_0"].text
    assert ids["1_0_0#1"].type == "dialogues" and "ferry left at dawn" in ids["1_0_0#1"].text
    gold = {q.type: q.gold for q in ada.questions}
    assert gold == {
        "profile": {"profile/Occupation"},
        "social_relationship": {"1_0"},
        "events": {"1_0_1"},  # the last events question wins in this dict
        "dialogues": {"1_0_0#1"},
    }
    assert len(ada.questions) == 5
    assert len(read_perltqa(tmp_path, limit=1)) == 1


def test_a_question_whose_memory_is_missing_is_left_out(tmp_path: Path) -> None:
    write_synthetic(tmp_path)
    qa_file = tmp_path / "perltqa_synthetic.json"
    qa = json.loads(qa_file.read_text(encoding="utf-8"))
    qa[0]["Ada Lin"]["events"][0]["1_0_0"][0]["Reference Memory"] = "['9_9_9']"
    qa[0]["Ada Lin"]["profile"][0]["Reference Memory"] = "Shoe size"
    qa_file.write_text(json.dumps(qa), encoding="utf-8")
    ada = read_perltqa(tmp_path)[0]
    assert {q.type for q in ada.questions} == {"social_relationship", "events", "dialogues"}
    assert len(ada.questions) == 3


def test_a_folder_without_the_set_says_what_to_pass(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match=r"perltmem\*\.json .*Dataset/en_v2"):
        read_perltqa(tmp_path)


def test_bm25_scores_as_okapi_defines_it() -> None:
    docs = [words("the red fox"), words("a red red hen"), words("blue sky")]
    order = bm25_order(docs, words("red hen"))
    n, avg = 3, (3 + 4 + 2) / 3

    def score(doc: list[str]) -> float:
        s = 0.0
        for t in {"red", "hen"}:
            f, df = doc.count(t), sum(t in d for d in docs)
            if f:
                idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
                s += idf * f * 2.2 / (f + 1.2 * (0.25 + 0.75 * len(doc) / avg))
        return s

    assert score(docs[1]) > score(docs[0]) > 0
    assert order == [1, 0]  # the third shares no word and is left out


def test_cosine_order_is_by_angle_not_length() -> None:
    assert cosine_order([[10.0, 0.0], [1.0, 1.0], [0.0, 3.0]], [0.0, 1.0]) == [2, 1, 0]


def test_ranks_by_type() -> None:
    r = Ranks()
    r.add("events", ["a", "b", "c", "d", "e", "gold"], {"gold"})  # rank 6
    r.add("events", ["gold"], {"gold"})
    r.add("profile", ["x"], {"gold"})  # missed
    assert r.count() == 3 and r.count("events") == 2
    assert r.recall(5, "events") == 0.5 and r.recall(10, "events") == 1.0
    assert r.recall(10) == pytest.approx(2 / 3)
    assert r.mrr("events") == pytest.approx((1 / 6 + 1) / 2)
    assert r.mrr("profile") == 0.0 and r.recall(5, "dialogues") == 0.0
