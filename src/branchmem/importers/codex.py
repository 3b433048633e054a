"""Codex rollouts: one JSON Lines file per session, each line
``{"timestamp", "type", "payload"}``.

The first line, ``session_meta``, names the session (``payload.id``). Every
``response_item`` (a message, a tool call, its output, a reasoning summary)
and every ``compacted`` summary becomes an event; a rollout records no
parent links, so each hangs under the one before it (a chain), and branch
``conv/<session>`` points at the last. Lines carry no ids: an event's id is
``codex:<session>:<line number>``, which a file that only grows keeps. The
``event_msg`` lines repeat what the response items hold, and
``turn_context`` lines are settings: both are left out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..model import Event
from .model import Conversation
from .tree import as_text, compact, join_parts, text_id

NAME = "codex"
TYPES = ("session_meta", "response_item", "turn_context", "event_msg", "compacted")
ROLES = {"user": "user", "assistant": "assistant", "developer": "system", "system": "system"}


def looks_like(first: Any) -> bool:
    """Is this the first line of a rollout?"""
    return isinstance(first, dict) and first.get("type") in TYPES and "payload" in first


@dataclass(frozen=True)
class Tail:
    """Where a rollout read stopped: its session id and its last event."""

    session: str | None = None
    last: str | None = None


def convert(
    entries: Sequence[tuple[int, dict[str, Any]]],
    *,
    fallback: str,
    max_bytes: int,
    tail: Tail = Tail(),
) -> tuple[Conversation | None, Tail]:
    """The entries as one conversation (None when none is a message), and where
    the read stopped; ``tail`` is where the previous read of the file stopped."""
    session, last = tail.session, tail.last
    events: list[Event] = []
    notes: list[str] = []
    for n, entry in entries:
        kind = entry.get("type")
        payload = entry.get("payload")
        payload = payload if isinstance(payload, dict) else {}
        if kind == "session_meta" and session is None:
            raw = payload.get("id")
            session = fallback if raw in (None, "") else text_id(raw, f"session id on line {n}")
        if kind not in ("response_item", "compacted"):
            continue
        if session is None:
            session = fallback
            notes.append(f"the rollout names no session; {fallback!r} (its file name) is used")
        role, text, meta = _item(payload) if kind == "response_item" else _compacted(payload)
        size = len(text.encode("utf-8", "replace"))
        if size > max_bytes:
            text = text.encode("utf-8", "replace")[: max_bytes - 64].decode("utf-8", "ignore")
            text += f"\n[cut: {size:,} bytes in the rollout]"
            notes.append(f"line {n} held {size:,} bytes of text; its first {max_bytes:,} kept")
        kept = compact({"source": NAME, **meta, "created_at": entry.get("timestamp")})
        eid = text_id(f"codex:{session}:{n}", f"id of line {n}")
        parents = () if last is None else (last,)
        events.append(Event(eid, parents, role, text.replace("\x00", ""), meta=kept))
        last = eid
    done = Tail(session, last)
    if not events or session is None:
        return None, done
    return Conversation(session, None, NAME, tuple(events), events[-1].id, tuple(notes)), done


def _item(p: dict[str, Any]) -> tuple[str, str, dict[str, Any]]:
    kind = p.get("type")
    if kind == "message":
        role = ROLES.get(str(p.get("role")), "assistant")
        text = join_parts(p.get("content"), lambda c: as_text(c.get("text")))
        return role, text, {"item": kind}
    if kind in ("function_call", "custom_tool_call", "local_shell_call"):
        args = p.get("arguments", p.get("input", p.get("action")))
        name = p.get("name") or ("shell" if kind == "local_shell_call" else "")
        text = f"[tool_use {name}] {as_text(args)}".strip()
        return "assistant", text, {"item": kind, "tool_use": name, "call_id": p.get("call_id")}
    if kind in ("function_call_output", "custom_tool_call_output"):
        out = p.get("output")
        if isinstance(out, dict):
            out = out.get("content", out)
        text = f"[tool_result] {as_text(out)}".strip()
        return "tool", text, {"item": kind, "call_id": p.get("call_id")}
    if kind == "reasoning":
        text = join_parts(p.get("summary"), lambda c: as_text(c.get("text"))) or "[reasoning]"
        return "assistant", text, {"item": kind}
    return "system", f"[{kind or 'item'}]", {"item": kind}


def _compacted(p: dict[str, Any]) -> tuple[str, str, dict[str, Any]]:
    return "system", as_text(p.get("message")) or "[compacted]", {"item": "compacted"}
