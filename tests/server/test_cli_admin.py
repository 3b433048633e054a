"""``branchmem purge``, ``checkpoint`` and ``audit``: erasure from the command line."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from branchmem import Store
from branchmem.cli import main

SECRET = "我的身份证号是110101199003077777"


def _file_bytes(path: Path) -> bytes:
    return b"".join(p.read_bytes() for p in path.parent.glob(path.name + "*"))


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "m.db"
    with Store(path) as s:
        s.add_event("e1", content=SECRET)
        s.add_event("e2", parent="e1", content="harmless")
        s.add_memory("用户的身份证号已记录", sources=["e1"], key="id")
        s.add_memory("unrelated", sources=["e2"])
        s.add_event("x1", content="other tenant", namespace="bob")
    return path


def test_purge_needs_yes_and_erases_nothing_without_it(
    db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["purge", "--db", str(db), "--event", "e1"]) == 1
    assert "add --yes" in capsys.readouterr().err
    with Store(db) as s:
        assert s.get_event("e1").content == SECRET


def test_purge_erases_the_event_its_records_and_the_bytes(
    db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["purge", "--db", str(db), "--event", "e1", "--yes", "--actor", "dpo"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("removed 2: e1 m_")
    assert SECRET.encode() not in _file_bytes(db)
    with Store(db) as s:
        assert s.get_event("e1").content == ""
        assert [m.content for m in s.memories(at="e2")] == ["unrelated"]
        assert s.audit()[-1].op == "purge" and s.audit()[-1].actor == "dpo"
    # the audit command shows the purge, ids only, and JSON lines parse back
    assert main(["audit", "--db", str(db), "--json"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [e["op"] for e in lines] == [
        "add_events",
        "add_events",
        "add_memories",
        "add_memories",
        "purge",
    ]
    assert lines[-1]["ids"][0] == "e1" and lines[-1]["actor"] == "dpo"
    assert [e["seq"] for e in lines] == [1, 2, 3, 4, 5]


def test_purge_a_whole_namespace_leaves_the_others(
    db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["purge", "--db", str(db), "--namespace", "bob", "--whole-namespace", "--yes"]
    assert main([*args, "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"removed": ["bob"], "erasure_pending": False}
    with Store(db) as s:
        with pytest.raises(KeyError):
            s.get_event("x1", namespace="bob")
        assert s.get_event("e1").content == SECRET
    assert b"other tenant" not in _file_bytes(db)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ([], "name what to erase"),
        (["--whole-namespace", "--event", "e1"], "leave out --event"),
        (["--event", "nope"], "no event 'nope'"),
    ],
)
def test_bad_purge_requests_are_refused_with_what_to_do(
    db: Path, capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    assert main(["purge", "--db", str(db), "--yes", *extra]) == 1
    assert message in capsys.readouterr().err
    with Store(db) as s:
        assert s.get_event("e1").content == SECRET


def test_purge_never_creates_a_store(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "none.db"
    assert main(["purge", "--db", str(missing), "--event", "e1", "--yes"]) == 1
    assert "does not exist" in capsys.readouterr().err
    assert not missing.exists()


def test_a_held_back_purge_is_reported_and_finished_by_checkpoint(
    db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    reader = sqlite3.connect(db, isolation_level=None)
    reader.execute("BEGIN")
    reader.execute("SELECT count(*) FROM records").fetchone()  # holds a snapshot of the WAL
    assert main(["purge", "--db", str(db), "--event", "e1", "--yes"]) == 0
    assert "branchmem checkpoint --db" in capsys.readouterr().out
    assert main(["checkpoint", "--db", str(db)]) == 3
    assert "incomplete" in capsys.readouterr().out
    assert SECRET.encode() in _file_bytes(db)  # still in the log, as reported
    reader.execute("ROLLBACK")
    reader.close()
    assert main(["checkpoint", "--db", str(db), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"complete": True, "erasure_pending": False}
    assert SECRET.encode() not in _file_bytes(db)


def test_audit_since_and_text_form(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with Store(db) as s:
        last = s.audit()[-1].at
    assert main(["audit", "--db", str(db), "--since", str(last)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 1 and "add_memories" in lines[0]
    assert main(["audit", "--db", str(db), "--namespace", "bob"]) == 0
    assert "add_events: x1" in capsys.readouterr().out


def test_audit_of_a_namespace_without_entries_says_so(
    db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["audit", "--db", str(db), "--namespace", "nosuch"]) == 0
    said = capsys.readouterr()
    assert said.out == "" and "no audit entries in namespace 'nosuch'" in said.err
    assert main(["audit", "--db", str(db), "--namespace", "nosuch", "--json"]) == 0
    assert capsys.readouterr() == ("", "")  # JSON lines: nothing, and nothing else
