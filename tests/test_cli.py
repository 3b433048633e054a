"""The `branchmem` command: a thin shell over the public API."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from branchmem.cli import main


def test_demo_walks_the_story(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "demo.db"
    assert main(["demo", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert db.exists()
    first_branch, edited = out.split("[2]")[0], out.split("[2]")[1].split("[3]")[0]
    assert "✓ visible  用户下个月搬去成都" in first_branch
    assert "✗ hidden   用户下个月搬去成都" in edited
    assert "source 'e3' is not on the path to 'e4b'" in edited
    assert "retracted by" in out.split("[4]")[1].split("[5]")[0]
    assert "memories(at=None) -> []" in out
    # every id is fixed: a second run adds nothing and prints the same
    assert main(["demo", "--db", str(db)]) == 0
    assert capsys.readouterr().out == out


def test_no_command_prints_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert "demo" in capsys.readouterr().out


def test_module_entry_point_end_to_end(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "branchmem", "demo", "--db", str(tmp_path / "d.db")],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "switch back" in out.stdout
