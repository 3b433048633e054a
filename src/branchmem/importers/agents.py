"""Import what a coding agent's transcript (Claude Code, Codex) gained since
the last read: `import_transcript` adds it to a store, one conversation (one
transaction) at a time, and says where the next read starts; what is stored
already is skipped, as every import does.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import InvalidInput
from .load import import_conversation
from .model import Imported
from .transcripts import FORMATS, Cursor, detect, read_transcript
from .tree import Broken

if TYPE_CHECKING:
    from ..api import StoreAPI

__all__ = ["Cursor", "import_transcript", "read_transcript"]


def import_transcript(
    store: StoreAPI,
    path: str | Path,
    cursor: Cursor | None = None,
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
    path = Path(path)
    fmt = format or detect(path)
    if fmt not in FORMATS:
        raise InvalidInput(
            f"{path}: its first line is no Claude Code transcript or Codex rollout entry; "
            "pass a session's .jsonl file"
        )
    try:
        convs, after = read_transcript(path, fmt, cursor or Cursor(), partial=partial)
    except Broken as exc:
        raise InvalidInput(f"{path}: {exc}") from None
    return [import_conversation(store, c, namespace=namespace) for c in convs], after
