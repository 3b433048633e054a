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


def test_demo_refuses_a_store_that_is_not_its_own(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from branchmem import Store

    db = tmp_path / "mine.db"
    with Store(db) as s:
        s.add_event("e1", content="my own data")
    assert main(["demo", "--db", str(db)]) == 1
    assert "pass a new --db path" in capsys.readouterr().err
    with Store(db) as s:
        assert [e.content for e in s.path("e1")] == ["my own data"]


def test_search_never_creates_a_store(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "nothere.db"
    assert main(["search", "杭州", "--db", str(db), "--at", "e1"]) == 1
    assert "no branchmem store" in capsys.readouterr().err
    assert not db.exists()


def test_piping_into_a_closed_reader_is_quiet(tmp_path: Path) -> None:
    # `true` exits without reading, so the demo's output meets a closed pipe
    cmd = f"{sys.executable} -m branchmem demo --db {tmp_path / 'd.db'} | true"
    out = subprocess.run(cmd, shell=True, capture_output=True, text=True, check=True)
    assert "Traceback" not in out.stderr and "BrokenPipe" not in out.stderr
