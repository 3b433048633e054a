"""Claude Code transcripts and Codex rollouts written in their documented shape,
for the importer and hook tests (and the hook's benchmark)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


class Transcript:
    """A Claude Code session file, written one entry a line as a session would."""

    def __init__(self, path: Path, session: str = "s1", cwd: str = "/work/app") -> None:
        self.path = path
        self.session = session
        self.cwd = cwd
        self.n = 0

    def write(self, entry: dict[str, Any]) -> None:
        with open(self.path, "a", encoding="utf-8") as f:
            f.write(json.dumps(entry) + "\n")

    def entry(
        self, kind: str, uid: str, parent: str | None, message: Any = None, **extra: Any
    ) -> str:
        self.n += 1
        entry: dict[str, Any] = {
            "parentUuid": parent,
            "isSidechain": False,
            "userType": "external",
            "cwd": self.cwd,
            "sessionId": self.session,
            "version": "2.1.0",
            "gitBranch": "main",
            "type": kind,
            "uuid": uid,
            "timestamp": f"2026-12-01T10:{self.n // 60:02d}:{self.n % 60:02d}.000Z",
        }
        if message is not None:
            entry["message"] = message
        entry.update(extra)
        self.write(entry)
        return uid

    def user(self, uid: str, parent: str | None, text: str, **extra: Any) -> str:
        return self.entry("user", uid, parent, {"role": "user", "content": text}, **extra)

    def assistant(self, uid: str, parent: str | None, text: str, **extra: Any) -> str:
        message = {
            "model": "model-1",
            "id": f"msg_{uid}",
            "type": "message",
            "role": "assistant",
            "content": [{"type": "text", "text": text}],
        }
        return self.entry("assistant", uid, parent, message, **extra)

    def tool_use(self, uid: str, parent: str, tool_id: str, name: str, args: Any) -> str:
        message = {
            "model": "model-1",
            "id": f"msg_{uid}",
            "type": "message",
            "role": "assistant",
            "content": [{"type": "tool_use", "id": tool_id, "name": name, "input": args}],
        }
        return self.entry("assistant", uid, parent, message)

    def tool_result(self, uid: str, parent: str, tool_id: str, output: str) -> str:
        content = [{"tool_use_id": tool_id, "type": "tool_result", "content": output}]
        return self.entry(
            "user",
            uid,
            parent,
            {"role": "user", "content": content},
            toolUseResult={"stdout": output, "stderr": "", "interrupted": False},
        )

    def compact(self, uid: str, logical_parent: str) -> str:
        return self.entry(
            "system",
            uid,
            None,
            subtype="compact_boundary",
            content="Conversation compacted",
            isMeta=False,
            level="info",
            logicalParentUuid=logical_parent,
            compactMetadata={"trigger": "manual", "preTokens": 12000},
        )


def rewind_and_compaction(path: Path) -> Transcript:
    """A session with a tool call, a rewind (``u2`` rewound for ``u3``), a
    compaction after the rewind, a sidechain, and lines that are no messages.
    Its current path: u1 a1 u3 a3 c1 u4 u5."""
    t = Transcript(path)
    t.write({"type": "summary", "summary": "Setting up the app", "leafUuid": "a3"})
    t.user("u1", None, "I live in Lisbon.")
    t.assistant("a1", "u1", "Noted. What shall we build?")
    t.user("u2", "a1", "I work at Globex.")
    t.tool_use("a2", "u2", "toolu_1", "Bash", {"command": "ls"})
    t.tool_result("r2", "a2", "toolu_1", "README.md\nsrc")
    return t


def after_the_rewind(t: Transcript) -> None:
    """The same session after the user rewound to ``a1`` and went on."""
    t.write({"type": "file-history-snapshot", "messageId": "x", "snapshot": {}})
    t.user("u3", "a1", "I work at Initech.")
    t.assistant("a3", "u3", "Got it.")
    t.compact("c1", "a3")
    t.user(
        "u4",
        "c1",
        "This session is being continued from a previous conversation.",
        isCompactSummary=True,
    )
    sub = {"isSidechain": True, "agentId": "ab12"}
    t.entry("user", "sc1", None, {"role": "user", "content": "I am allergic to peanuts."}, **sub)
    t.entry("assistant", "sc2", "sc1", {"role": "assistant", "content": "Searched."}, **sub)
    t.user("u5", "u4", "My name is Dana.")


def rollout(path: Path, session: str = "019a-codex") -> None:
    """A Codex rollout: session meta, a message, a tool call and its output, a reply."""
    lines = [
        {"type": "session_meta", "payload": {"id": session, "cwd": "/work/app"}},
        {"type": "turn_context", "payload": {"model": "m"}},
        {
            "type": "response_item",
            "payload": {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": "I live in Oslo."}],
            },
        },
        {"type": "event_msg", "payload": {"type": "user_message", "message": "I live in Oslo."}},
        {
            "type": "response_item",
            "payload": {
                "type": "function_call",
                "name": "shell",
                "arguments": '{"command":["ls"]}',
                "call_id": "call_1",
            },
        },
        {
            "type": "response_item",
            "payload": {"type": "function_call_output", "call_id": "call_1", "output": "src"},
        },
        {
            "type": "response_item",
            "payload": {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "Done."}],
            },
        },
    ]
    with open(path, "a", encoding="utf-8") as f:
        for i, line in enumerate(lines):
            f.write(json.dumps({"timestamp": f"2026-12-01T10:00:{i:02d}Z", **line}) + "\n")
