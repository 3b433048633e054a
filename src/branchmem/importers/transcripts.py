"""Coding agents' transcripts (Claude Code, Codex) read from where the last
read stopped: `read_transcript` turns the lines after a `Cursor` into
conversations and gives the cursor after them. A file shorter than the cursor
(rewritten, not appended to) is read again from its start.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ..validate import MAX_MESSAGE_BYTES
from . import claudecode, codex
from .jsonlines import first_object, read_lines
from .model import Conversation

FORMATS = (claudecode.NAME, codex.NAME)


@dataclass(frozen=True)
class Cursor:
    """Where the last read of a transcript stopped: bytes and lines read, the
    session its last main entry belongs to, and for a rollout its last event
    (the parent of the next one)."""

    offset: int = 0
    line: int = 0
    session: str | None = None
    last: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Any) -> Cursor:
        if not isinstance(data, dict):
            return cls()
        offset, line = data.get("offset"), data.get("line")
        session, last = data.get("session"), data.get("last")
        if not (isinstance(offset, int) and isinstance(line, int) and min(offset, line) >= 0):
            return cls()
        return cls(
            offset,
            line,
            session if isinstance(session, str) else None,
            last if isinstance(last, str) else None,
        )


def detect(path: Path) -> str | None:
    """``"claude-code"`` or ``"codex"`` from the file's first line, else None."""
    first = first_object(path)
    for fmt in (codex, claudecode):
        if fmt.looks_like(first):
            return str(fmt.NAME)
    return None


def read_transcript(
    path: Path,
    format: str,
    cursor: Cursor = Cursor(),
    *,
    partial: str = "strict",
    max_message_bytes: int = MAX_MESSAGE_BYTES,
) -> tuple[list[Conversation], Cursor]:
    """The conversations of ``path`` after ``cursor``, and the cursor after them.
    A bad line raises `Broken` (nothing of the file is returned)."""
    if cursor.offset > path.stat().st_size:
        cursor = Cursor()
    lines = read_lines(path, cursor.offset, cursor.line, partial=partial)
    if format == codex.NAME:
        tail = codex.Tail(cursor.session, cursor.last)
        conv, tail = codex.convert(
            lines.entries, fallback=path.stem, max_bytes=max_message_bytes, tail=tail
        )
        return ([conv] if conv else []), Cursor(lines.end, lines.line, tail.session, tail.last)
    convs = claudecode.convert(lines.entries, fallback=path.stem, max_bytes=max_message_bytes)
    main = [c.id for c in convs if c.events[-1].meta and not c.events[-1].meta.get("sidechain")]
    return convs, Cursor(lines.end, lines.line, main[-1] if main else cursor.session)
