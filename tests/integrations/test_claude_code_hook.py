"""``branchmem claude-code hook``: fed a transcript that grows between two calls
(a rewind, then a compaction), it adds the kept branch's memories to the
prompt and none of the rewound one's, in Claude Code's documented output
shape; it never fails the prompt."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from branchmem import Store
from branchmem.cli import main as cli
from branchmem.integrations.codingagents import paths
from branchmem.integrations.codingagents.hook import Options, main
from helpers.agent_transcripts import Transcript, after_the_rewind, rewind_and_compaction


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("BRANCHMEM_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("CLAUDE_PROJECT_DIR", raising=False)
    return tmp_path / "home"


def payload(path: Path, event: str = "UserPromptSubmit", **more: Any) -> str:
    base = {
        "session_id": "s1",
        "transcript_path": str(path),
        "cwd": "/work/app",
        "permission_mode": "default",
        "hook_event_name": event,
    }
    if event == "UserPromptSubmit":
        base["prompt"] = "Where do I work?"
    return json.dumps(base | more)


def context(out: str, event: str = "UserPromptSubmit") -> str:
    data = json.loads(out)
    assert list(data) == ["hookSpecificOutput"]
    assert list(data["hookSpecificOutput"]) == ["hookEventName", "additionalContext"]
    assert data["hookSpecificOutput"]["hookEventName"] == event
    text = data["hookSpecificOutput"]["additionalContext"]
    assert isinstance(text, str)
    return text


def test_the_hook_recalls_the_kept_branch_and_not_the_rewound_one(tmp_path: Path) -> None:
    path = tmp_path / "s1.jsonl"
    db = str(tmp_path / "m.db")
    options = Options(db=db, namespace="app", background=False)
    t = rewind_and_compaction(path)
    assert "Globex" in context(main(payload(path), options))  # before the rewind
    after_the_rewind(t)
    text = context(main(payload(path), options))
    assert "User works at Initech" in text and "Globex" not in text
    with Store(db) as store:  # the rewound branch's memory is there, gated out
        everything = store.memories(at="r2", namespace="app")
        assert "User works at Globex" in [m.content for m in everything]
        assert store.branch_head("conv/s1", namespace="app") == "u5"
    start = context(main(payload(path, "SessionStart", source="compact"), options), "SessionStart")
    assert "Initech" in start and "Dana" in start and "Globex" not in start


def test_a_session_end_promotes_the_kept_path_to_the_project(tmp_path: Path) -> None:
    path = tmp_path / "s1.jsonl"
    options = Options(db=str(tmp_path / "m.db"), namespace="app", background=False)
    t = rewind_and_compaction(path)
    main(payload(path, "Stop"), options)
    after_the_rewind(t)
    assert main(payload(path, "Stop"), options) == ""  # imports, adds nothing to a prompt
    assert main(payload(path, "SessionEnd", reason="exit"), options) == ""
    fresh = payload(tmp_path / "none.jsonl", "SessionStart", session_id="s2", source="startup")
    text = context(main(fresh, options), "SessionStart")
    assert "Initech" in text and "Lisbon" in text and "Globex" not in text


def test_extraction_runs_in_a_detached_process(tmp_path: Path) -> None:
    path = tmp_path / "s1.jsonl"
    db = str(tmp_path / "m.db")
    rewind_and_compaction(path)
    assert main(payload(path), Options(db=db, namespace="app")) == ""  # nothing extracted yet
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        with Store(db) as store:
            if store.memories(at="conv/s1", namespace="app"):
                break
        time.sleep(0.2)
    with Store(db) as store:
        assert "User works at Globex" in [
            m.content for m in store.memories(at="conv/s1", namespace="app")
        ]


def test_defaults_one_namespace_per_project_in_the_home_store(tmp_path: Path, home: Path) -> None:
    path = tmp_path / "s1.jsonl"
    rewind_and_compaction(path)
    main(payload(path, "Stop", cwd=str(tmp_path / "a")), Options(background=False))
    main(payload(path, "Stop", cwd=str(tmp_path / "b")), Options(background=False))
    assert paths.default_db() == str(home / "agents.db")
    with Store(str(home / "agents.db")) as store:
        for project in ("a", "b"):
            ns = paths.project_namespace((tmp_path / project).resolve())
            assert store.branch_head("conv/s1", namespace=ns) == "r2"


@pytest.mark.parametrize(
    "stdin",
    ["not json", "[]", '{"hook_event_name": "UserPromptSubmit"}', None],
)
def test_on_any_error_it_prints_nothing_exits_0_and_logs(
    tmp_path: Path, home: Path, stdin: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    if stdin is None:  # a transcript with a bad line
        path = tmp_path / "s1.jsonl"
        rewind_and_compaction(path)
        with open(path, "a", encoding="utf-8") as f:
            f.write("{oops\n")
        stdin = payload(path)
    monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    args = ["claude-code", "hook", "--db", str(tmp_path / "m.db"), "--wait"]
    assert cli(args) == 0
    assert "Traceback" in (home / "hook.log").read_text()


def test_the_command_prints_the_documented_json(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "s1.jsonl"
    rewind_and_compaction(path)
    monkeypatch.setattr("sys.stdin", io.StringIO(payload(path)))
    args = ["claude-code", "hook", "--db", str(tmp_path / "m.db"), "--namespace", "x", "--wait"]
    assert cli(args) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1
    assert "User works at Globex" in context(out)


def test_the_command_loads_neither_numpy_nor_the_extractor(tmp_path: Path) -> None:
    """What keeps a new process's hook fast: a small keyword search needs no
    numpy, and the hook parses its own arguments only."""
    path = tmp_path / "s1.jsonl"
    rewind_and_compaction(path)
    db = str(tmp_path / "m.db")
    main(payload(path), Options(db=db, namespace="x", background=False))  # memories to find
    code = (
        "import sys; from branchmem.cli import main; "
        f"main(['claude-code', 'hook', '--db', {db!r}, '--namespace', 'x']); "
        "print(sorted(m for m in sys.modules if m in ('numpy', 'branchmem.extract.patterns')))"
    )
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2] / "src"))
    done = subprocess.run(
        [sys.executable, "-c", code], input=payload(path), capture_output=True, text=True, env=env
    )
    first, last = done.stdout.splitlines()
    assert "User works at Globex" in context(first)
    assert last == "[]"


def test_forget_a_session_then_the_project(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "s1.jsonl"
    db = str(tmp_path / "m.db")
    options = Options(db=db, namespace="app", background=False)
    t = rewind_and_compaction(path)
    main(payload(path, "Stop"), options)
    after_the_rewind(t)
    main(payload(path, "SessionEnd"), options)
    other = Transcript(tmp_path / "s2.jsonl", session="s2")
    other.user("v1", None, "I work at Initech.")
    main(payload(other.path, "Stop", session_id="s2"), options)
    where = ["--db", db, "--namespace", "app"]
    assert cli(["claude-code", "forget", "--list", *where]) == 0
    assert capsys.readouterr().out.split() == ["s1", "s2"]
    assert cli(["claude-code", "forget", "--session", "s1", *where]) == 1  # no --yes
    assert cli(["claude-code", "forget", "--session", "s1", "--yes", *where]) == 0
    assert "erased 12 events of session 's1'" in capsys.readouterr().out
    with Store(db) as store:
        assert store.memories(at="conv/s1", namespace="app") == []
        assert store.memories(at="project", namespace="app") == []
        assert {e.content for e in store.path("conv/s1", namespace="app")} == {""}
        assert "User works at Initech" in [
            m.content for m in store.memories(at="conv/s2", namespace="app")
        ]
    assert cli(["claude-code", "forget", "--project", "--yes", *where]) == 0
    with Store(db) as store:
        assert store.branches(namespace="app") == []


def test_a_transcript_whose_entries_name_another_session_is_still_found(tmp_path: Path) -> None:
    path = tmp_path / "s1.jsonl"
    options = Options(db=str(tmp_path / "m.db"), namespace="app", background=False)
    after_the_rewind(rewind_and_compaction(path))  # its entries say sessionId "s1"
    text = context(main(payload(path, session_id="resumed-7"), options))
    assert "Initech" in text and "Globex" not in text


def test_a_second_session_merges_into_the_project(tmp_path: Path) -> None:
    options = Options(db=str(tmp_path / "m.db"), namespace="app", background=False)
    path = tmp_path / "s1.jsonl"
    after_the_rewind(rewind_and_compaction(path))
    main(payload(path, "SessionEnd"), options)
    other = Transcript(tmp_path / "s2.jsonl", session="s2")
    other.user("v1", None, "I am allergic to peanuts.")
    main(payload(other.path, "SessionEnd", session_id="s2"), options)
    start = payload(tmp_path / "none.jsonl", "SessionStart", session_id="s3")
    text = context(main(start, options), "SessionStart")
    assert "peanuts" in text and "Initech" in text and "Globex" not in text
