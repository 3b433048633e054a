"""The ``branchbench`` command line: validate and freeze, messages, --version, pipes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from branchbench.cli import EXIT_BROKEN_PIPE, main
from branchbench.scenario import ManifestError, verify_manifest

Data = dict[str, Any]


def write_drafts(folder: Path, *scenarios: dict[str, Any]) -> Path:
    """Scenario files without a MANIFEST, as a user writes them."""
    folder.mkdir()
    for data in scenarios:
        (folder / f"{data['id']}.json").write_text(json.dumps(data, ensure_ascii=False))
    return folder


def leaky(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` with its forbidden word said on the anchor's path (breaks rule 4)."""
    out: dict[str, Any] = json.loads(
        json.dumps(data, ensure_ascii=False).replace("好的，需要", "成都？需要")
    )
    return out


def test_freeze_writes_a_manifest_the_run_accepts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], edit: Data, budget: Data
) -> None:
    folder = write_drafts(tmp_path / "mine", edit, budget)
    with pytest.raises(ManifestError, match=r"no MANIFEST.*`branchbench freeze .*mine`"):
        verify_manifest(folder)
    assert main(["freeze", str(folder)]) == 0
    assert "frozen" in capsys.readouterr().out
    verify_manifest(folder)
    out = tmp_path / "run"
    assert main(["run", "--scenarios", str(folder), "--out", str(out), "--no-chart"]) == 0


def test_freeze_refuses_an_invalid_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], edit: Data, budget: Data
) -> None:
    folder = write_drafts(tmp_path / "mine", leaky(edit), budget)
    assert main(["freeze", str(folder)]) == 1
    out = capsys.readouterr().out
    assert "edit-01: rule 4 (forbidden words occur off the path and never on it): " in out
    assert "not frozen" in out
    assert not (folder / "MANIFEST").exists()


def test_changed_file_names_freeze(small_split: Path) -> None:
    target = small_split / "edit-01.json"
    target.write_text(target.read_text(encoding="utf-8") + " ", encoding="utf-8")
    with pytest.raises(ManifestError, match=r"changed since MANIFEST.*`branchbench freeze "):
        verify_manifest(small_split)


def test_validate_passes_manifest_flags_and_folders(
    tmp_path: Path, small_split: Path, capsys: pytest.CaptureFixture[str], edit: Data
) -> None:
    drafts = write_drafts(tmp_path / "drafts", edit)
    assert main(["validate", str(drafts)]) == 0
    assert main(["validate", "--require-manifest", str(drafts)]) == 1
    assert "no MANIFEST" in capsys.readouterr().out
    (small_split / "MANIFEST").write_text("", encoding="utf-8")
    assert main(["validate", str(small_split)]) == 1
    assert main(["validate", "--no-manifest", str(small_split), str(drafts)]) == 0
    out = capsys.readouterr().out
    assert f"{small_split}: OK, 3 scenario(s)" in out and f"{drafts}: OK, 1 scenario(s)" in out


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("nope", "does not exist; name a folder of scenario files"),
        ("a.json", "is a file, not a folder of scenario files"),
        ("empty", "holds no *.json scenario files"),
    ],
)
def test_validate_without_scenario_files_says_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, problem: str
) -> None:
    path = tmp_path / name
    if name == "a.json":
        path.write_text("{}", encoding="utf-8")
    elif name == "empty":
        path.mkdir()
    assert main(["validate", str(path)]) == 1
    assert capsys.readouterr().out == f"{path}: FAILED: {problem}\n"


def test_validate_names_an_unreadable_file_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], edit: Data
) -> None:
    folder = write_drafts(tmp_path / "cor", edit)
    (folder / "edit-02.json").write_text('{"id": "edit-02", "fork', encoding="utf-8")
    assert main(["validate", str(folder)]) == 1
    lines = capsys.readouterr().out.splitlines()
    [line] = [x for x in lines if x.startswith("edit-02:")]
    assert line.startswith("edit-02: rule 0 (files, fields and MANIFEST are well formed): ")
    assert "cannot read edit-02.json: Unterminated string" in line
    assert line.count("edit-02.json") == 1 and "cannot read scenario" not in line
    assert lines[-1] == f"{folder}: FAILED, 1 violation(s); 1 of 2 scenario file(s) rejected"


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    from branchmem import __version__

    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out.startswith(f"branchbench {__version__} ")


def test_help_explains_prompts_and_arguments(capsys: pytest.CaptureFixture[str]) -> None:
    for command in ("run", "report", "validate", "freeze"):
        with pytest.raises(SystemExit):
            main([command, "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "conflict adds that, when the information conflicts" in text
    assert "RUN_DIR the --out folder of a finished run" in text
    assert "DIR a folder of scenario files, or dev/test" in text
    assert "--require-manifest" in text


def test_closed_pipe_exits_quietly(small_split: Path) -> None:
    folder = small_split
    proc = subprocess.Popen(
        [sys.executable, "-m", "branchbench", "validate", str(folder), str(folder)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # the reader goes away before the command writes
    err = proc.stderr.read().decode("utf-8")
    assert proc.wait(timeout=60) == EXIT_BROKEN_PIPE, err
    assert err == ""
