"""Coding agents' transcripts (Claude Code, Codex): read a file from where the
last read stopped, and import what it gained.

`read_transcript` turns the lines after a `Cursor` into conversations and the
cursor after them; `import_transcript` adds them to a store, one conversation
(one transaction) at a time, and says where the next read starts. A file that
is shorter than the cursor (rewritten, not appended to) is read again from
its start; what is stored already is skipped, as every import does.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..validate import MAX_MESSAGE_BYTES
from . import claudecode, codex
from .jsonlines import first_object, read_lines
from .model import Conversation, Imported

if TYPE_CHECKING:
    from ..api import StoreAPI

FORMATS = (claudecode.NAME, codex.NAME)


@dataclass(frozen=True)
class Cursor:
    """Where the last read of a transcript stopped: bytes and lines read, and
    for a rollout its session and last event (the parent of the next one)."""

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
    return convs, Cursor(lines.end, lines.line)


def import_transcript(
    store: StoreAPI,
    path: str | Path,
    cursor: Cursor = Cursor(),
    *,
    format: str | None = None,
    namespace: str = "default",
    partial: str = "wait",
) -> tuple[list[Imported], Cursor]:
    """Import what ``path`` gained since ``cursor``; the cursor after it.

    ``partial="wait"`` leaves a last line still being written for the next
    call. A bad line raises `InvalidInput` naming it, and nothing is written.

    >>> import json, pathlib, tempfile
    >>> from branchmem import Store
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "s1.jsonl"
    >>> line = {"uuid": "u1", "parentUuid": None, "sessionId": "s1", "type": "user",
    ...         "message": {"role": "user", "content": "I use tabs."}}
    >>> _ = p.write_text(json.dumps(line) + "\\n")
    >>> store = Store()
    >>> done, cur = import_transcript(store, p)
    >>> [(d.branch, d.added) for d in done], store.branch_head("conv/s1")
    ([('conv/s1', 1)], 'u1')
    >>> import_transcript(store, p, cur)[0]     # nothing new
    []
    """
    from ..errors import InvalidInput
    from .load import import_conversation  # (load imports the reader, which imports this)
    from .tree import Broken

    path = Path(path)
    fmt = format or detect(path)
    if fmt not in FORMATS:
        raise InvalidInput(
            f"{path}: its first line is no Claude Code transcript or Codex rollout entry; "
            "pass a session's .jsonl file"
        )
    try:
        convs, after = read_transcript(path, fmt, cursor, partial=partial)
    except Broken as exc:
        raise InvalidInput(f"{path}: {exc}") from None
    return [import_conversation(store, c, namespace=namespace) for c in convs], after
