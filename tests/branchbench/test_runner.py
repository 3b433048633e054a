"""``branchbench run`` end to end: frozen data in, saved files and summary.json out."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from branchbench import runner
from branchbench.cli import main
from branchbench.llm import LLMError
from branchbench.systems import SYSTEMS

RATE_KEYS = {"leak_rate", "answer_recall", "retain_rate"}


def read_summary(out: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    return data


def check_shape(summary: dict[str, Any], scenarios: int) -> None:
    assert summary["scenarios"] == scenarios
    assert set(summary["questions"]) == {"leak", "retain"}
    assert list(summary["systems"]) == list(SYSTEMS)
    for s in summary["systems"].values():
        assert set(s["context"]) >= RATE_KEYS
        assert s["answer"] is None
        for block in s["by_fork_type"].values():
            assert set(block["context"]) >= RATE_KEYS and block["answer"] is None
        for key in RATE_KEYS:
            rate = s["context"][key]
            assert rate is None or 0.0 <= rate <= 1.0


def test_run_on_a_frozen_folder(small_split: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert main(["run", "--scenarios", str(small_split), "--out", str(out), "--no-chart"]) == 0
    summary = read_summary(out)
    check_shape(summary, 3)
    assert summary["questions"] == {"leak": 3, "retain": 2}
    systems = summary["systems"]
    assert systems["branchmem"]["context"]["leak_rate"] == 0.0
    assert systems["full_history"]["context"]["leak_rate"] == 1.0
    assert systems["branchmem"]["context"]["counts"]["leak"] == [0, 3]
    lines = (out / "contexts.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 5 * len(SYSTEMS)
    first = json.loads(lines[0])
    assert set(first) == {"scenario", "fork_type", "system", "anchor", "question", "context"}
    assert first["question"]["answer_any"]
    assert not (out / "answers.jsonl").exists()
    info = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert info["window"] is None and info["llm"] is None
    assert (out / "report.md").read_text(encoding="utf-8").startswith("# branchbench report")


def test_window_is_recorded_and_changes_raw_systems(small_split: Path, tmp_path: Path) -> None:
    out = tmp_path / "w4"
    args = ["run", "--scenarios", str(small_split), "--out", str(out), "--no-chart"]
    assert main([*args, "--window", "4"]) == 0
    summary = read_summary(out)
    assert json.loads((out / "run.json").read_text(encoding="utf-8"))["window"] == 4
    raw = summary["systems"]["current_branch_raw"]["context"]
    assert raw["retain_rate"] < 1.0  # the allergy on the prefix fell out of the window
    assert summary["systems"]["branchmem"]["context"]["retain_rate"] == 1.0


def test_tampered_folder_is_refused(
    small_split: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(small_split, copy)
    target = copy / "edit-01.json"
    target.write_text(target.read_text(encoding="utf-8").replace("杭州", "苏州"), encoding="utf-8")
    out = tmp_path / "refused"
    assert main(["run", "--scenarios", str(copy), "--out", str(out)]) == 2
    assert "changed since MANIFEST" in capsys.readouterr().err
    assert not (out / "contexts.jsonl").exists()


def test_folder_without_manifest_is_refused(small_split: Path, tmp_path: Path) -> None:
    (small_split / "MANIFEST").unlink()
    assert main(["run", "--scenarios", str(small_split), "--out", str(tmp_path / "x")]) == 2


def test_python_dash_m_entry_point(small_split: Path, tmp_path: Path) -> None:
    out = tmp_path / "m"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "branchbench",
            "run",
            "--scenarios",
            str(small_split),
            "--out",
            str(out),
            "--no-chart",
            "--systems",
            "current_branch_raw,branchmem",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "contexts 3/3" in proc.stderr
    assert set(json.loads(proc.stdout)) == {"current_branch_raw", "branchmem"}


def test_context_metrics_end_to_end_on_dev(tmp_path: Path) -> None:
    out = tmp_path / "dev"
    assert main(["run", "--split", "dev", "--out", str(out), "--no-chart"]) == 0
    summary = read_summary(out)
    check_shape(summary, summary["scenarios"])
    assert summary["scenarios"] >= 10
    systems = summary["systems"]
    assert systems["branchmem"]["context"]["leak_rate"] == 0.0
    assert systems["full_history"]["context"]["leak_rate"] > 0.0


# A run directory is written whole or not at all --------------------------------------


class FakeModel:
    """Stands in for `ChatClient`: answers every question with fixed text, or fails."""

    answers_before_failure: int | None = None

    def __init__(self, config: object) -> None:
        self.calls = 0

    def complete(self, messages: list[dict[str, str]]) -> str:
        self.calls += 1
        limit = self.answers_before_failure
        if limit is not None and self.calls > limit:
            raise LLMError("cannot reach http://127.0.0.1:9/v1: connection refused")
        return "杭州"


MODEL_ARGS = ["--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--runs", "1"]
TWO_SYSTEMS = ["--systems", "current_branch_raw,branchmem", "--no-chart"]


def run_args(split: Path, out: Path, *extra: str) -> list[str]:
    return ["run", "--scenarios", str(split), "--out", str(out), *TWO_SYSTEMS, *extra]


@pytest.fixture
def fake_model(monkeypatch: pytest.MonkeyPatch) -> type[FakeModel]:
    monkeypatch.setattr(runner, "ChatClient", FakeModel)
    monkeypatch.setattr(FakeModel, "answers_before_failure", None)
    return FakeModel


def test_failed_model_run_leaves_no_run_directory(
    small_split: Path,
    tmp_path: Path,
    fake_model: type[FakeModel],
    capsys: pytest.CaptureFixture[str],
) -> None:
    fake_model.answers_before_failure = 3
    out = tmp_path / "runs" / "x"
    assert main(run_args(small_split, out, *MODEL_ARGS)) == 1
    err = capsys.readouterr().err
    assert err.splitlines()[-1] == (
        "branchbench: error: cannot reach http://127.0.0.1:9/v1: connection refused"
    )
    assert list((tmp_path / "runs").iterdir()) == []  # neither the run nor its partial folder
    assert main(["report", str(out)]) == 2


def test_failed_run_keeps_the_previous_run(
    small_split: Path, tmp_path: Path, fake_model: type[FakeModel]
) -> None:
    out = tmp_path / "x"
    assert main(run_args(small_split, out)) == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    fake_model.answers_before_failure = 0
    assert main(run_args(small_split, out, *MODEL_ARGS)) == 1
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["small", "x"]


def test_run_replaces_a_previous_run(small_split: Path, tmp_path: Path) -> None:
    out = tmp_path / "x"
    assert main(run_args(small_split, out)) == 0
    assert main(run_args(small_split, out, "--window", "4")) == 0
    assert json.loads((out / "run.json").read_text(encoding="utf-8"))["window"] == 4
    assert main(["report", str(out), "--no-chart"]) == 0


@pytest.mark.parametrize("name", ["report.md", "notes.txt"])
def test_run_refuses_a_folder_that_is_not_a_previous_run(
    small_split: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    out = tmp_path / "project"
    out.mkdir()
    (out / name).write_text("mine", encoding="utf-8")
    assert main(run_args(small_split, out)) == 2
    err = capsys.readouterr().err
    assert "is not empty and holds no run.json" in err and len(err.splitlines()) == 1
    assert [p.name for p in out.iterdir()] == [name]
    assert (out / name).read_text(encoding="utf-8") == "mine"


def test_run_refuses_a_previous_run_with_other_files(
    small_split: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "x"
    assert main(run_args(small_split, out)) == 0
    (out / "notes.txt").write_text("mine", encoding="utf-8")
    assert main(run_args(small_split, out)) == 2
    assert "other files (notes.txt)" in capsys.readouterr().err
    assert (out / "notes.txt").exists() and (out / "summary.json").exists()


def test_answer_run_and_report_need_every_answer(
    small_split: Path,
    tmp_path: Path,
    fake_model: type[FakeModel],
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = tmp_path / "x"
    assert main(run_args(small_split, out, *MODEL_ARGS)) == 0
    answers = (out / "answers.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(answers) == 5 * 2  # 5 questions x 2 systems x 1 run
    assert read_summary(out)["systems"]["branchmem"]["answer"]["leak_rate"] == 0.0
    assert main(["report", str(out), "--no-chart"]) == 0
    capsys.readouterr()
    (out / "answers.jsonl").write_text("\n".join(answers[:-1]) + "\n", encoding="utf-8")
    assert main(["report", str(out), "--no-chart"]) == 2
    assert "holds 9 answer(s) where 10 context(s) x 1 run(s) make 10" in capsys.readouterr().err


def test_report_refuses_a_run_without_summary(
    small_split: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "x"
    assert main(run_args(small_split, out)) == 0
    (out / "summary.json").unlink()
    capsys.readouterr()
    assert main(["report", str(out)]) == 2
    assert "has no summary.json: the run did not finish" in capsys.readouterr().err
    assert capsys.readouterr().out == ""


def test_report_refuses_answers_in_a_context_only_run(
    small_split: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "x"
    assert main(run_args(small_split, out)) == 0
    row = {"scenario": "edit-01", "system": "branchmem", "question_id": "q1", "run": 1}
    (out / "answers.jsonl").write_text(json.dumps({**row, "answer": "杭州"}) + "\n")
    assert main(["report", str(out)]) == 2
    assert "holds 1 answer(s) where 10 context(s) x 0 run(s) make 0" in capsys.readouterr().err


def test_run_error_is_one_line(
    small_split: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setattr(runner.report, "write_report", lambda d, chart: ({}, ""))
    out = tmp_path / "x"
    assert main(run_args(small_split, out)) == 2
    err = capsys.readouterr().err
    assert err.splitlines()[-1].startswith("branchbench: error: the figures recomputed")
    assert "Traceback" not in err
    assert not out.exists()


def test_run_refuses_the_current_folder_and_a_file(
    small_split: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = tmp_path / "x"
    assert main(run_args(small_split, out)) == 0
    monkeypatch.chdir(out)
    assert main(run_args(small_split, Path("."))) == 2
    assert "is the current folder" in capsys.readouterr().err
    assert (out / "summary.json").exists()
    (tmp_path / "f").write_text("", encoding="utf-8")
    assert main(run_args(small_split, tmp_path / "f")) == 2
    assert "is a file" in capsys.readouterr().err
