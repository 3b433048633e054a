"""``branchbench run`` end to end: frozen data in, saved files and summary.json out."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from branchbench.cli import main
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
