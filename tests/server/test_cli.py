"""The `branchmem` command: a thin shell over the public API."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from branchmem import Store
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


def test_search_takes_hops_and_the_stem_tokenizer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "g.db"
    with Store(db) as s:
        s.add_event("e1", content="Alice owns auth-service; auth-service uses jsonwebtoken")
        s.add_edge("Alice", "owns", "auth-service", sources=["e1"])
        s.add_edge("auth-service", "uses", "jsonwebtoken", sources=["e1"])
        s.add_memory("jsonwebtoken v8 has a known vulnerability", sources=["e1"])
        s.add_memory("User lives in Berlin", sources=["e1"])
        expected = {
            (hops, tok): [
                h.memory.id for h in s.search(q, at="e1", mode="keyword", hops=hops, tokenizer=tok)
            ]
            for q, hops, tok in (
                ("Alice 负责的东西", 2, None),
                ("Alice 负责的东西", 0, None),
                ("where do I live", 0, "stem"),
                ("where do I live", 0, "bigram"),
            )
        }
    assert (
        expected[(2, None)] != expected[(0, None)]
    )  # the walk reaches what the query does not name
    assert expected[(0, "stem")] != expected[(0, "bigram")]  # "live" meets "lives" only stemmed

    def cli(query: str, *extra: str) -> list[str]:
        argv = ["search", query, "--db", str(db), "--at", "e1", "--mode", "keyword", "--json"]
        assert main([*argv, *extra]) == 0
        return [json.loads(line)["memory"]["id"] for line in capsys.readouterr().out.splitlines()]

    assert cli("Alice 负责的东西", "--hops", "2") == expected[(2, None)]
    assert cli("Alice 负责的东西") == expected[(0, None)]
    assert cli("where do I live", "--tokenizer", "stem") == expected[(0, "stem")]
    assert cli("where do I live") == expected[(0, "stem")]  # the default
    assert cli("where do I live", "--tokenizer", "bigram") == expected[(0, "bigram")]
    assert main(["search", "x", "--db", str(db), "--at", "e1", "--hops", "99"]) == 1
    assert "hops must be an integer in 0..8" in capsys.readouterr().err
