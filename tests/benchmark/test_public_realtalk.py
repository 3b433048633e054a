"""REALTALK's format read by branchmem_eval.realtalk: one character per
conversation, one passage per turn in session order, each question's gold the
turns its evidence names."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from branchmem import HashingEmbedder, Store
from branchmem.errors import InvalidInput
from branchmem.retrieval.fusion import Weights
from branchmem_eval.realtalk import read_realtalk, write_realtalk_synthetic
from helpers.public_bench import ROOT, run_public_recall


def test_reads_every_conversation_turn_and_question(tmp_path: Path) -> None:
    dropped: list[int] = []
    chats = read_realtalk(write_realtalk_synthetic(tmp_path), dropped=dropped)
    assert [c.name for c in chats] == ["Chat_1_Ana_Ben", "Chat_2_Cy_Dee"]
    ana = chats[0]
    assert [p.id for p in ana.passages] == ["D1:1", "D1:2", "D1:3", "D2:1", "D2:2", "D2:3"]
    assert ana.passages[0].text == (
        "Ana: I started rock climbing in 2019 at a gym in Lyon. "
        "[shares a photo: a photo of a climbing wall]"
    )
    assert ana.passages[3].text == "Ben: Did you try the pastries there?"
    assert {p.type for p in ana.passages} == {"turn"}
    # "D 2:1." is read as D2:1; the question whose only evidence is no turn is left out
    assert [(q.type, set(q.gold)) for q in ana.questions] == [
        ("temporal", {"D1:1"}),
        ("multi-hop", {"D1:1", "D2:1"}),
        ("open-domain", {"D2:3"}),
    ]
    assert dropped == [1, 1]
    assert chats[1].passages[0].text.startswith("Cy: ")
    assert len(read_realtalk(tmp_path, limit=1)) == 1


def test_sessions_are_read_in_their_number_order(tmp_path: Path) -> None:
    path = write_realtalk_synthetic(tmp_path) / "Chat_1_Ana_Ben.json"
    chat = json.loads(path.read_text(encoding="utf-8"))
    chat["session_10"] = [{"clean_text": "late", "speaker": "Ben", "dia_id": "D10:1"}]
    path.write_text(json.dumps(dict(reversed(list(chat.items())))), encoding="utf-8")
    ids = [p.id for p in read_realtalk(tmp_path)[0].passages]
    assert ids == ["D1:1", "D1:2", "D1:3", "D2:1", "D2:2", "D2:3", "D10:1"]


def test_odd_questions_are_left_out_or_read_as_meant(tmp_path: Path) -> None:
    path = write_realtalk_synthetic(tmp_path) / "Chat_1_Ana_Ben.json"
    chat = json.loads(path.read_text(encoding="utf-8"))
    chat["qa"] = [
        "not a question",
        {"question": "Where did Ana climb?", "evidence": "D1:1", "category": 2},
        {"question": "", "evidence": ["D1:1"], "category": 1},
    ]
    path.write_text(json.dumps(chat), encoding="utf-8")
    dropped: list[int] = []
    ana = read_realtalk(tmp_path, dropped=dropped)[0]
    assert [(q.text, set(q.gold)) for q in ana.questions] == [("Where did Ana climb?", {"D1:1"})]
    assert dropped[0] == 2


def test_the_bench_refuses_ratios_it_cannot_read(tmp_path: Path) -> None:
    for bad in ("abc", "0.1,2"):
        with pytest.raises(subprocess.CalledProcessError) as err:
            run_public_recall(tmp_path, "--smoke", "--format", "realtalk", "--ratios", bad)
        assert "--ratios takes" in err.value.stderr


def test_only_the_conversation_files_are_read(tmp_path: Path) -> None:
    write_realtalk_synthetic(tmp_path)
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "Chat_9_X_Y.json").write_text("{", encoding="utf-8")
    (tmp_path / "notes.json").write_text("{", encoding="utf-8")
    assert len(read_realtalk(tmp_path)) == 2


def test_a_folder_without_the_set_says_what_to_pass(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match=r"Chat_\*\.json .*REALTALK's data folder"):
        read_realtalk(tmp_path)
    (tmp_path / "Chat_1_A_B.json").write_text("{", encoding="utf-8")
    with pytest.raises(InvalidInput, match="cannot read the REALTALK file"):
        read_realtalk(tmp_path)
    (tmp_path / "Chat_1_A_B.json").write_text("[]", encoding="utf-8")
    with pytest.raises(InvalidInput, match="not a REALTALK conversation"):
        read_realtalk(tmp_path)


def test_the_bench_runs_it_with_other_cutoffs(tmp_path: Path) -> None:
    lines = run_public_recall(tmp_path, "--smoke", "--format", "realtalk", "--ratios", "0.1,1")
    assert lines[0] == "2 characters, 12 memories, 6 questions"
    rows = [ln.split() for ln in lines[2:-1]]
    systems = ["bm25", "dense", "search", "search-off", "search-r0.1", "search-r1"]
    assert [r[0] for r in rows] == [
        k for k in ("all", "temporal", "multi-hop", "open-domain") for _ in systems
    ]
    assert [r[2] for r in rows[:6]] == systems
    # a ratio of 1 keeps only hits as confident as the best: never more than the default's
    by = {r[2]: float(r[4]) for r in rows[:6]}
    assert by["search-r1"] <= by["search"] <= by["search-off"]


def test_the_bench_searches_with_each_vector_weight(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--vector-weights``: one more ranking per weight, each searched with
    that vector weight and the other defaults (hashing's own weight, 0.5,
    ranks as the default search does)."""
    monkeypatch.syspath_prepend(str(ROOT / "bench"))
    import public_recall

    seen: list[float] = []
    real = Store.search

    def spy(self: Store, *args: Any, **kw: Any) -> Any:
        if kw.get("weights") is not None:
            seen.append(kw["weights"].vector)
            assert kw["weights"] == Weights(vector=kw["weights"].vector)
        return real(self, *args, **kw)

    monkeypatch.setattr(Store, "search", spy)
    chars = read_realtalk(write_realtalk_synthetic(tmp_path))
    memo = public_recall.Memo(HashingEmbedder())
    ranks = public_recall.run(chars, memo, None, vector_weights=[0.5, 3.0])
    assert sorted(set(seen)) == [0.5, 3.0] and len(seen) == 2 * ranks["search"].count()
    assert ranks["search-v0.5"].firsts == ranks["search"].firsts


def test_the_bench_refuses_vector_weights_it_cannot_read(tmp_path: Path) -> None:
    for bad in ("abc", "1,-1"):
        with pytest.raises(subprocess.CalledProcessError) as err:
            run_public_recall(tmp_path, "--smoke", "--format", "realtalk", "--vector-weights", bad)
        assert "--vector-weights takes" in err.value.stderr
