"""Claude Code transcripts: one JSON Lines file per session, one entry a line.

Every entry with a ``uuid`` becomes an event with that id, under its
``parentUuid``. A compaction writes an entry with no ``parentUuid`` and a
``logicalParentUuid`` naming the message it continues: that becomes its
parent, so the path after a compaction still reaches what came before. A
rewind writes new entries under an earlier message: siblings of the
rewound ones, which stay in the store, off the current path.

Entries are grouped by ``sessionId``; a session's branch ``conv/<session>``
points at its last entry in the file. Sidechain entries (``isSidechain``: a
subagent's work, in the session file or a file of its own) keep their
parents as written and get a branch of their own, ``conv/<session>:agent-<id>``:
what a subagent reads and writes is not on the session's path, and what it
reports back reaches the session as the tool result of the call that
launched it. Entries without a ``uuid`` (summaries, file snapshots, queue
operations) are no messages and are left out.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..model import Event
from .claude import part_text
from .model import Conversation
from .tree import Broken, as_text, compact, join_parts, text_id

NAME = "claude-code"
TYPES = ("user", "assistant", "system", "summary", "file-history-snapshot", "queue-operation")


def looks_like(first: Any) -> bool:
    """Is this the first line of a transcript?"""
    if not isinstance(first, dict) or "payload" in first:
        return False
    if "parentUuid" in first or "sessionId" in first:
        return True
    return first.get("type") in TYPES[3:] and ("leafUuid" in first or "messageId" in first)


def convert(
    entries: Sequence[tuple[int, dict[str, Any]]], *, fallback: str, max_bytes: int
) -> list[Conversation]:
    """The entries (line number, object) as one conversation per session and per
    subagent, in the order each first appears; ``fallback`` is the session id of
    entries that name none (the file's name)."""
    groups: dict[str, list[Event]] = {}
    notes: dict[str, list[str]] = {}
    seen: set[str] = set()
    for n, entry in entries:
        uid = entry.get("uuid")
        if uid is None:
            continue
        eid = text_id(uid, f"uuid on line {n}")
        if eid in seen:  # written twice (a resumed session): the first one stands
            continue
        seen.add(eid)
        conv = _conversation_of(entry, n, fallback)
        event, note = _event(entry, eid, n, max_bytes)
        groups.setdefault(conv, []).append(event)
        if note:
            notes.setdefault(conv, []).append(note)
    return [
        Conversation(
            cid,
            None,
            NAME,
            tuple(events),
            events[-1].id,
            tuple(notes.get(cid, ())),
        )
        for cid, events in groups.items()
    ]


def _conversation_of(entry: dict[str, Any], n: int, fallback: str) -> str:
    raw = entry.get("sessionId")
    session = fallback if raw in (None, "") else text_id(raw, f"sessionId on line {n}")
    if not entry.get("isSidechain"):
        return session
    agent = entry.get("agentId")
    return f"{session}:agent-{agent}" if isinstance(agent, str) and agent else f"{session}:agent"


def _event(entry: dict[str, Any], eid: str, n: int, max_bytes: int) -> tuple[Event, str | None]:
    up = entry.get("parentUuid")
    logical = entry.get("logicalParentUuid")
    if up is None and logical is not None:  # a compaction continues this message
        up = logical
    parent = None if up is None else text_id(up, f"parentUuid on line {n}")
    if parent == eid:
        raise Broken(f"the entry on line {n} names itself as its parent")
    kind = entry.get("type")
    message = entry.get("message")
    message = message if isinstance(message, dict) else {}
    content = message.get("content", entry.get("content"))
    blocks = [c for c in content if isinstance(c, dict)] if isinstance(content, list) else []
    tools = [c.get("name") for c in blocks if c.get("type") == "tool_use"]
    results = [c.get("tool_use_id") for c in blocks if c.get("type") == "tool_result"]
    if kind in ("user", "assistant"):
        text = join_parts(content, part_text) if isinstance(content, list) else as_text(content)
        role = "tool" if results and len(results) == len(blocks) else str(kind)
    elif kind == "system":
        text, role = as_text(content) or f"[{entry.get('subtype') or 'system'}]", "system"
    else:  # progress, attachments and other entries a newer version writes
        text, role = f"[{kind or 'entry'}]", "system"
    note = None
    size = len(text.encode("utf-8", "replace"))
    if size > max_bytes:
        text = text.encode("utf-8", "replace")[: max_bytes - 64].decode("utf-8", "ignore")
        text += f"\n[cut: {size:,} bytes in the transcript]"
        note = f"the entry on line {n} held {size:,} bytes of text; its first {max_bytes:,} kept"
    meta = compact(
        {
            "source": NAME,
            "entry": kind,
            "subtype": entry.get("subtype"),
            "created_at": entry.get("timestamp"),
            "model": message.get("model"),
            "tool_use": tools,
            "tool_result": results,
            "compact": True if logical is not None and entry.get("parentUuid") is None else None,
            "compact_summary": True if entry.get("isCompactSummary") else None,
            "sidechain": True if entry.get("isSidechain") else None,
            "cut": size if note else None,
        }
    )
    event = Event(
        eid, () if parent is None else (parent,), role, text.replace("\x00", ""), meta=meta
    )
    return event, note
