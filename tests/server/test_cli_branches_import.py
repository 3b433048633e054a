"""``branchmem branches`` lists a namespace's branches; ``branchmem import``
names each conversation's branch without --json, says an empty file is
empty and that ``[]`` held nothing to import. A SillyTavern chat named with
spaces keeps them in its event ids, while its branch name (which holds no
whitespace) has ``_``: the import prints both (the decision, tested here)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from branchmem import Store
from branchmem.cli import main

DATA = Path(__file__).parents[1] / "data" / "importers"
CHAT = DATA / "sillytavern" / "Seraphina - 2024-05-01@10h00m00s.jsonl"


def _store(tmp_path: Path) -> str:
    db = str(tmp_path / "b.db")
    with Store(db) as s:
        s.add_events(
            [{"id": "e1", "namespace": "alice"}, {"id": "e2", "parent": "e1", "namespace": "alice"}]
        )
        s.create_branch("main", at="e2", namespace="alice")
        s.remember("住在成都", branch="main", namespace="alice")
        s.create_branch("task/a", at="main", namespace="alice")
    return db


def test_branches_lists_names_and_heads(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = _store(tmp_path)
    assert main(["branches", "--db", db, "--namespace", "alice"]) == 0
    lines = capsys.readouterr().out.splitlines()
    with Store(db) as s:
        heads = {b.name: b.head for b in s.branches(namespace="alice")}
    assert [x.split()[0] for x in lines] == ["main", "task/a"]
    for line in lines:
        name = line.split()[0]
        assert f"head {heads[name]}" in line and "1 visible memory" in line
    assert "forked from main" in lines[1]


def test_branches_json_and_an_empty_namespace(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = _store(tmp_path)
    assert main(["branches", "--db", db, "--namespace", "alice", "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert [(b["name"], b["parent"]) for b in found] == [("main", None), ("task/a", "main")]
    assert main(["branches", "--db", db, "--namespace", "nobody"]) == 0
    out = capsys.readouterr()
    assert out.out == "" and "no branches in namespace 'nobody'" in out.err


def test_import_prints_each_branch_and_the_chat_it_came_from(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "i.db")
    assert main(["import", str(CHAT), "--db", db]) == 0
    out = capsys.readouterr().out
    branch = "conv/Seraphina_-_2024-05-01@10h00m00s"
    assert f"  {branch} (conversation 'Seraphina - 2024-05-01@10h00m00s'): " in out
    with Store(db) as s:
        head = s.branch_head(branch)
    assert head.startswith("st:Seraphina - 2024-05-01@10h00m00s:")  # the ids keep the spaces
    chatgpt = DATA / "chatgpt.json"
    assert main(["import", str(chatgpt), "--db", db]) == 0
    out = capsys.readouterr().out
    assert "  conv/" in out and "(conversation" not in out  # the id is the branch's own


def test_an_empty_file_says_it_is_empty(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for name in ("empty.json", "empty.jsonl"):
        empty = tmp_path / name
        empty.write_text("  \n", encoding="utf-8")
        assert main(["import", str(empty), "--db", str(tmp_path / "t.db")]) == 1
        err = capsys.readouterr().err
        assert "is empty" in err and "not a JSON array" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty.json", "empty.jsonl"]


def test_an_empty_list_had_nothing_to_import(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = tmp_path / "e.json"
    empty.write_text("[]\n", encoding="utf-8")
    assert main(["import", str(empty), "--db", str(tmp_path / "t.db")]) == 1
    out = capsys.readouterr()
    assert "empty:" not in out.out and out.out == ""
    assert "nothing to import" in out.err
