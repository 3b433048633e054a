"""Claude Code transcripts and Codex rollouts import as trees: a rewind is a
sibling, a compaction continues what it names, a subagent has its own
branch, tool calls and results keep their roles, and a file that grew adds
only its new entries."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from branchmem import Store
from branchmem.errors import InvalidInput
from branchmem.importers import UnknownFormat, read_export
from branchmem.importers.agents import Cursor, import_transcript
from helpers.agent_transcripts import Transcript, after_the_rewind, rewind_and_compaction, rollout

KEPT = ["u1", "a1", "u3", "a3", "c1", "u4", "u5"]


def test_a_rewind_and_a_compaction_import_with_the_right_paths(tmp_path: Path) -> None:
    path = tmp_path / "s1.jsonl"
    t = rewind_and_compaction(path)
    store = Store()
    first = store.import_export(path)
    assert first.format == "claude-code"
    assert [e.id for e in store.path("conv/s1")] == ["u1", "a1", "u2", "a2", "r2"]
    after_the_rewind(t)
    again = store.import_export(path)
    main = {c.id: c for c in again.conversations}["s1"]
    assert (main.added, main.events, main.current) == (5, 10, "u5")
    assert [e.id for e in store.path("conv/s1")] == KEPT
    # The rewound message stays, a sibling of the one that replaced it.
    assert [e.id for e in store.siblings("u3")] == ["u2", "u3"]
    # The compaction's new root hangs under the message it continues.
    assert store.get_event("c1").parent == "a3"
    assert store.get_event("c1").meta == {
        "source": "claude-code",
        "entry": "system",
        "subtype": "compact_boundary",
        "created_at": store.get_event("c1").meta["created_at"],  # type: ignore[index]
        "compact": True,
    }
    assert store.import_export(path).added == 0


def test_tool_calls_and_results_keep_their_roles(tmp_path: Path) -> None:
    path = tmp_path / "s1.jsonl"
    rewind_and_compaction(path)
    store = Store()
    store.import_export(path)
    call, result = store.get_event("a2"), store.get_event("r2")
    assert (call.role, call.content) == ("assistant", '[tool_use Bash] {"command": "ls"}')
    assert call.meta is not None and call.meta["tool_use"] == ["Bash"]
    assert (result.role, result.content) == ("tool", "[tool_result] README.md\nsrc")
    assert result.meta is not None and result.meta["tool_result"] == ["toolu_1"]
    # Summaries and file snapshots are no messages: no event for them.
    assert store.get_event("u1").parent is None


def test_a_sidechain_has_a_branch_of_its_own(tmp_path: Path) -> None:
    path = tmp_path / "s1.jsonl"
    after_the_rewind(rewind_and_compaction(path))
    store = Store()
    report = store.import_export(path)
    assert [c.branch for c in report.conversations] == ["conv/s1", "conv/s1:agent-ab12"]
    assert [e.id for e in store.path("conv/s1:agent-ab12")] == ["sc1", "sc2"]
    assert "sc1" not in {e.id for e in store.path("conv/s1")}


def test_a_folder_with_a_subagent_file_beside_its_session(tmp_path: Path) -> None:
    rewind_and_compaction(tmp_path / "s1.jsonl")
    (tmp_path / "s1" / "subagents").mkdir(parents=True)
    sub = Transcript(tmp_path / "s1" / "subagents" / "agent-9f.jsonl")
    sub.user("q1", None, "Find the config loader.", isSidechain=True, agentId="9f")
    sub.assistant("q2", "q1", "It is in src/config.py.", isSidechain=True, agentId="9f")
    store = Store()
    report = store.import_export(tmp_path)
    assert sorted(c.branch for c in report.conversations) == ["conv/s1", "conv/s1:agent-9f"]
    assert store.branch_head("conv/s1:agent-9f") == "q2"


def test_a_file_that_grew_adds_only_its_new_entries(tmp_path: Path) -> None:
    path = tmp_path / "s1.jsonl"
    t = rewind_and_compaction(path)
    store = Store()
    done, cursor = import_transcript(store, path)
    assert [d.added for d in done] == [5] and cursor.line == 6
    with open(path, "a", encoding="utf-8") as f:
        f.write('{"uuid": "u3", "parentUuid": "a1", "sessionId": "s1", "ty')  # being written
    done, later = import_transcript(store, path, cursor)
    assert done == [] and later == cursor  # the line in progress waits
    path.write_bytes(path.read_bytes()[: cursor.offset])
    after_the_rewind(t)
    done, last = import_transcript(store, path, cursor)
    assert {d.branch: d.added for d in done} == {"conv/s1": 5, "conv/s1:agent-ab12": 2}
    assert last.offset == path.stat().st_size
    assert [e.id for e in store.path("conv/s1")] == KEPT
    assert import_transcript(store, path, last) == ([], last)


def test_a_cursor_past_the_end_reads_a_rewritten_file_again(tmp_path: Path) -> None:
    path = tmp_path / "s1.jsonl"
    rewind_and_compaction(path)
    store = Store()
    done, _ = import_transcript(store, path, Cursor(offset=10**9, line=5000))
    assert [d.added for d in done] == [5]


@pytest.mark.parametrize("last", [False, True])
def test_a_bad_line_is_reported_and_nothing_is_written(tmp_path: Path, last: bool) -> None:
    path = tmp_path / "s1.jsonl"
    rewind_and_compaction(path)
    with open(path, "a", encoding="utf-8") as f:
        f.write('{"uuid": "x", "parentUuid": ' + ("" if last else "}\n{}\n"))
    store = Store()
    report = store.import_export(path)
    assert report.conversations == ()
    (skipped,) = report.skipped
    assert ("line 7, the last, is cut off" if last else "line 7 is not JSON") in skipped.reason
    assert "nothing of this file was imported" in skipped.reason
    with pytest.raises(InvalidInput, match="line 7"):
        import_transcript(store, path, partial="strict")
    assert store.branches() == []


def test_codex_rollouts_are_chains_that_grow(tmp_path: Path) -> None:
    path = tmp_path / "rollout-2026-12-01T10-00-00-019a.jsonl"
    rollout(path)
    store = Store()
    done, cursor = import_transcript(store, path)
    assert [d.branch for d in done] == ["conv/019a-codex"]
    events = store.path("conv/019a-codex")
    assert [(e.id, e.role) for e in events] == [
        ("codex:019a-codex:3", "user"),
        ("codex:019a-codex:5", "assistant"),
        ("codex:019a-codex:6", "tool"),
        ("codex:019a-codex:7", "assistant"),
    ]
    assert events[1].meta is not None and events[1].meta["tool_use"] == "shell"
    with open(path, "a", encoding="utf-8") as f:
        item = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "x"}]}
        f.write(json.dumps({"type": "response_item", "payload": item}) + "\n")
        f.write(json.dumps({"type": "compacted", "payload": {"message": "so far: ls"}}) + "\n")
    done, _ = import_transcript(store, path, cursor)
    assert [d.added for d in done] == [2]
    tail = store.path("conv/019a-codex")[-3:]
    assert [(e.id, e.role, e.content) for e in tail] == [
        ("codex:019a-codex:7", "assistant", "Done."),
        ("codex:019a-codex:8", "user", "x"),
        ("codex:019a-codex:9", "system", "so far: ls"),
    ]
    # The command-line path reads the whole file and finds the same events.
    assert Store().import_export(path).conversations[0].events == 6


def test_a_jsonl_file_of_no_known_format_names_the_formats(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text('{"hello": 1}\n')
    with pytest.raises(UnknownFormat, match="Claude Code transcript entry or Codex rollout"):
        read_export(path)
    with pytest.raises(InvalidInput, match="no Claude Code transcript or Codex rollout"):
        import_transcript(Store(), path)


def test_an_entry_over_the_content_limit_is_cut_and_noted(tmp_path: Path) -> None:
    path = tmp_path / "s1.jsonl"
    t = Transcript(path)
    t.user("u1", None, "x" * 2_000)
    report = Store().import_export(path, max_message_bytes=1_000)
    (conv,) = report.conversations
    assert conv.notes == ("the entry on line 1 held 2,000 bytes of text; its first 1,000 kept",)
    store = Store()
    store.import_export(path, max_message_bytes=1_000)
    text = store.get_event("u1").content
    assert len(text.encode()) <= 1_000 and text.endswith("[cut: 2,000 bytes in the transcript]")
