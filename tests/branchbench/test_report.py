"""Reports recomputed from a run directory's files alone: tables, sensitivity, chart."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from branchbench.cli import main
from branchbench.report import RunData, load_run, markdown, summarize, write_report


def record(system: str, fork: str, question: dict[str, Any], context: str) -> dict[str, Any]:
    return {
        "scenario": "s1",
        "fork_type": fork,
        "system": system,
        "anchor": "e9",
        "question": question,
        "context": context,
    }


Q_OK = {
    "id": "q1",
    "type": "leak",
    "question": "我要搬去哪里？",
    "answer_any": ["杭州"],
    "forbidden_any": ["成都"],
    "superseded_any": [],
}
Q_BAD = {
    "id": "q2",
    "type": "leak",
    "question": "我还去成都吗？",
    "answer_any": ["不去"],
    "forbidden_any": ["成都"],
    "superseded_any": [],
}


def write_run(d: Path, contexts: list[dict[str, Any]]) -> Path:
    d.mkdir()
    (d / "run.json").write_text(json.dumps({"systems": ["a", "b"], "scenarios": ["s1"]}))
    (d / "contexts.jsonl").write_text(
        "".join(json.dumps(c, ensure_ascii=False) + "\n" for c in contexts), encoding="utf-8"
    )
    return d


def test_summary_and_sensitivity_from_files_alone(tmp_path: Path) -> None:
    d = write_run(
        tmp_path / "r",
        [
            record("a", "edit", Q_OK, "杭州"),
            record("a", "edit", Q_BAD, "不去成都"),
            record("b", "edit", Q_OK, "成都"),
            record("b", "edit", Q_BAD, "不去"),
        ],
    )
    data = load_run(d)
    s = summarize(data)
    assert s["scenarios"] == 1 and s["questions"] == {"leak": 2, "retain": 0}
    a = s["systems"]["a"]
    assert a["context"]["leak_rate"] == 0.5 and a["context"]["counts"]["leak"] == [1, 2]
    assert a["context"]["retain_rate"] is None
    assert a["by_fork_type"]["edit"]["context"]["accuracy"] == 0.5
    text = markdown(data, s)
    assert "Dropped 1 question(s): s1/q2." in text
    sensitivity = text.split("## Sensitivity")[1]
    assert "| a | 0.00 (0/1) |" in sensitivity and "| b | 1.00 (1/1) |" in sensitivity
    assert "### Fork type: edit" in text


def test_chart_is_written(tmp_path: Path, small_split: Path) -> None:
    pytest.importorskip("matplotlib")
    out = tmp_path / "run"
    assert main(["run", "--scenarios", str(small_split), "--out", str(out)]) == 0
    assert (out / "leak_by_fork_type.png").stat().st_size > 1000
    assert "![leak rate](leak_by_fork_type.png)" in (out / "report.md").read_text("utf-8")


def test_chart_skipped_without_matplotlib(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    d = write_run(tmp_path / "r", [record("a", "edit", Q_OK, "杭州")])
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    summary, text = write_report(d)
    assert "matplotlib is not installed" in capsys.readouterr().err
    assert not (d / "leak_by_fork_type.png").exists()
    assert "leak rate" not in text.split("## Sensitivity")[1]
    assert summary["systems"]["a"]["context"]["leak_rate"] == 0.0


def test_report_of_a_missing_run_says_what_to_pass(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["report", str(tmp_path)]) == 2
    assert "has no run.json" in capsys.readouterr().err


def test_answers_without_contexts_are_rejected(tmp_path: Path) -> None:
    d = write_run(tmp_path / "r", [record("a", "edit", Q_OK, "杭州")])
    (d / "answers.jsonl").write_text(
        json.dumps(
            {"scenario": "s9", "system": "a", "question_id": "q1", "run": 1, "answer": "杭州"}
        )
        + "\n"
    )
    with pytest.raises(RuntimeError, match="no saved context"):
        summarize(load_run(d))
    assert RunData({}, [], []).systems == []
