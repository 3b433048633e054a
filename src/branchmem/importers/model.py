"""What the importers produce: conversations as events, and the import report."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from ..model import Event
from ..validate import MAX_NAME_LEN


@dataclass(frozen=True)
class Conversation:
    """One conversation of an export, as events ready for `Store.add_events`.

    ``events`` come parents first; their ids are the export's own message ids
    (derived from the file and position where a format has none). ``current``
    is the id of the current leaf, the head of branch ``conv/<id>`` after an
    import. ``notes`` say what the importer decided on its own (a derived id,
    a current leaf chosen by time).
    """

    id: str
    title: str | None
    format: str
    events: tuple[Event, ...]
    current: str
    notes: tuple[str, ...] = ()
    main: str | None = field(default=None, compare=False)
    """The conversation this one branched from (a SillyTavern branch file)."""

    @property
    def branch(self) -> str:
        """The branch name the import sets at ``current``: ``conv/<id>``."""
        return branch_name(self.id)

    def path(self) -> list[str]:
        """Ids from the root to ``current`` (the export's own current path)."""
        parent = {e.id: e.parent for e in self.events}
        out = []
        node: Any = self.current
        while node is not None:
            out.append(node)
            node = parent[node]
        return out[::-1]

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "format": self.format,
            "events": [e.to_dict() for e in self.events],
            "current": self.current,
            "notes": list(self.notes),
            "main": self.main,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Conversation:
        return cls(
            id=data["id"],
            title=data.get("title"),
            format=data["format"],
            events=tuple(Event.from_dict(e) for e in data["events"]),
            current=data["current"],
            notes=tuple(data.get("notes", ())),
            main=data.get("main"),
        )


@dataclass(frozen=True)
class Skipped:
    """A conversation left out of an import, and why."""

    id: str | None
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "reason": self.reason}


@dataclass(frozen=True)
class Conflict:
    """An event whose stored version differs from the export's: skipped, never overwritten."""

    id: str
    fields: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "fields": list(self.fields)}


@dataclass(frozen=True)
class Imported:
    """What one conversation's import did."""

    id: str
    title: str | None
    branch: str
    events: int
    added: int
    current: str
    conflicts: tuple[Conflict, ...] = ()
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "branch": self.branch,
            "events": self.events,
            "added": self.added,
            "current": self.current,
            "conflicts": [c.to_dict() for c in self.conflicts],
            "notes": list(self.notes),
        }


@dataclass(frozen=True)
class ImportReport:
    """The result of `Store.import_export`: one line per conversation, and the skipped."""

    format: str | None
    conversations: tuple[Imported, ...]
    skipped: tuple[Skipped, ...]

    @property
    def added(self) -> int:
        return sum(c.added for c in self.conversations)

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": self.format,
            "conversations": [c.to_dict() for c in self.conversations],
            "skipped": [s.to_dict() for s in self.skipped],
        }


def branch_name(conversation_id: str) -> str:
    """``conv/<id>``, with characters a branch name may not hold replaced by ``_``
    (and a long id cut, with a hash of the whole, to fit a branch name's 200).

    >>> branch_name("Seraphina - 2024/05/01")
    'conv/Seraphina_-_2024_05_01'
    """
    safe = "".join(
        "_" if c.isspace() or not c.isprintable() or c == "/" else c for c in conversation_id
    )
    if len(safe) > MAX_ID:
        digest = hashlib.sha256(conversation_id.encode()).hexdigest()[:16]
        safe = f"{safe[: MAX_ID - 17]}-{digest}"
    return f"conv/{safe}"


MAX_ID = MAX_NAME_LEN - len("conv/")
