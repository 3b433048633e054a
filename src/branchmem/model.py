"""Plain frozen dataclasses that cross the public boundary: events and memories."""

from __future__ import annotations

from copy import deepcopy
from dataclasses import asdict, dataclass, field, fields
from typing import Any

KINDS = ("episodic", "semantic", "procedural", "working")
"""The memory types a caller may store."""

RETRACTION = "retraction"
"""Kind of the gated records written by `Store.retract` (never a caller's kind)."""

ROLES = ("user", "assistant", "tool", "system", "note")


@dataclass(frozen=True)
class Event:
    """A node of the history graph: a message, a tool call, an observation, a note.

    ``parents`` is empty for a root, one id for an ordinary message, several
    for a merge. Events are immutable once stored.

    >>> Event("e2", parents=("e1",), content="我下个月搬去成都。").parent
    'e1'
    """

    id: str
    parents: tuple[str, ...] = ()
    role: str = "user"
    content: str = ""
    namespace: str = "default"
    meta: dict[str, Any] | None = None
    created_at: float = field(default=0.0, compare=False)

    @property
    def parent(self) -> str | list[str] | None:
        """The parent as callers pass it: ``None``, an id, or a list for a merge."""
        if not self.parents:
            return None
        if len(self.parents) == 1:
            return self.parents[0]
        return list(self.parents)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-friendly dict (``parent`` as callers pass it)."""
        return {
            "id": self.id,
            "parent": self.parent,
            "role": self.role,
            "content": self.content,
            "namespace": self.namespace,
            "meta": self.meta,
            "created_at": self.created_at,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Event:
        """The inverse of `to_dict` (also accepts ``parents``)."""
        parents = data.get("parents", data.get("parent"))
        return cls(
            id=data["id"],
            parents=normalize_parents(parents),
            role=data.get("role", "user"),
            content=data.get("content", ""),
            namespace=data.get("namespace", "default"),
            meta=data.get("meta"),
            created_at=float(data.get("created_at", 0.0)),
        )


@dataclass(frozen=True)
class Memory:
    """A derived record: a fact, summary, profile, edge, or a retraction.

    ``sources`` are the events it was derived from; it is visible at an
    anchor only if every source is the anchor or one of its ancestors.
    A retraction has ``kind == "retraction"`` and names its ``target``.
    ``seq`` is the store's write order, used for deterministic ordering.
    """

    id: str
    content: str
    sources: tuple[str, ...]
    kind: str = "semantic"
    key: str | None = None
    importance: float = 0.5
    namespace: str = "default"
    meta: dict[str, Any] | None = None
    target: str | None = None
    created_at: float = field(default=0.0, compare=False)
    seq: int = field(default=0, compare=False)
    via: str | None = field(default=None, compare=False)
    """For a scope-chain read (``memories(at=[...])``): the first anchor that
    makes the record visible. ``None`` on every other read."""
    expires_at: float | None = None
    """When the record expires (seconds since the epoch): hidden from reads from
    then on, and moved to the archive by `Store.archive_expired`."""
    valid_from: float | None = None
    """When the fact starts to hold in the world (reads with an earlier ``now`` hide it)."""
    valid_to: float | None = None
    """When the fact stops holding in the world (reads from then on hide it)."""

    @property
    def is_retraction(self) -> bool:
        return self.target is not None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-friendly dict of every field."""
        # Field by field rather than asdict(), which deep-copies every value and
        # cost a served read four times the read itself; only meta is mutable.
        d = {f: getattr(self, f) for f in _MEMORY_FIELDS}
        d["sources"] = list(self.sources)
        if self.meta is not None:
            d["meta"] = deepcopy(self.meta)
        return d

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Memory:
        """The inverse of `to_dict`."""
        return cls(
            id=data["id"],
            content=data.get("content", ""),
            sources=tuple(data["sources"]),
            kind=data.get("kind", "semantic"),
            key=data.get("key"),
            importance=float(data.get("importance", 0.5)),
            namespace=data.get("namespace", "default"),
            meta=data.get("meta"),
            target=data.get("target"),
            created_at=float(data.get("created_at", 0.0)),
            seq=int(data.get("seq", 0)),
            via=data.get("via"),
            expires_at=data.get("expires_at"),
            valid_from=data.get("valid_from"),
            valid_to=data.get("valid_to"),
        )


_MEMORY_FIELDS = tuple(f.name for f in fields(Memory))


@dataclass(frozen=True)
class Branch:
    """A named, movable pointer to an event (its head).

    Two branches compare equal when name, head and namespace match; the other
    fields describe the branch and are filled by `Store.branches`.
    ``fork_point`` is the event it was created at, ``parent`` the branch it
    was forked from (``None`` if created at an event), ``memories`` the number
    of memories visible at its head (``None`` where not counted).
    """

    name: str
    head: str
    namespace: str = "default"
    fork_point: str | None = field(default=None, compare=False)
    parent: str | None = field(default=None, compare=False)
    created_at: float = field(default=0.0, compare=False)
    updated_at: float = field(default=0.0, compare=False)
    memories: int | None = field(default=None, compare=False)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class SourceStatus:
    """Where one source of a record stands relative to an anchor."""

    event_id: str
    state: str  # "on_path", "off_path", "not_connected" or "missing"


@dataclass(frozen=True)
class Explanation:
    """Why a record is visible or hidden at an anchor."""

    memory_id: str
    at: str | None
    visible: bool
    reason: str
    sources: tuple[SourceStatus, ...] = ()
    hidden_by: tuple[str, ...] = ()
    #: When the gate shows the record but reads now leave it out (expired,
    #: archived, or outside its validity): why. ``visible`` stays the gate's answer.
    hidden_by_time: str | None = None

    def __str__(self) -> str:
        return self.reason

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["sources"] = [asdict(s) for s in self.sources]
        d["hidden_by"] = list(self.hidden_by)
        return d


_new = object.__new__


def make_event(
    id: str,
    parents: tuple[str, ...],
    role: str,
    content: str,
    namespace: str,
    meta: dict[str, Any] | None,
    created_at: float,
) -> Event:
    """Build an `Event` from already-checked fields without the dataclass __init__.

    Batch ingest and SQLite reads build one object per row; the frozen
    dataclass __init__ (a guarded setattr per field) doubles their cost.
    """
    e: Event = _new(Event)
    e.__dict__.update(
        id=id,
        parents=parents,
        role=role,
        content=content,
        namespace=namespace,
        meta=meta,
        created_at=created_at,
    )
    return e


def make_memory(
    id: str,
    content: str,
    sources: tuple[str, ...],
    kind: str,
    key: str | None,
    importance: float,
    namespace: str,
    meta: dict[str, Any] | None,
    target: str | None,
    created_at: float,
    seq: int,
    expires_at: float | None = None,
    valid_from: float | None = None,
    valid_to: float | None = None,
) -> Memory:
    """Build a `Memory` from already-checked fields (see `make_event` for why)."""
    m: Memory = _new(Memory)
    m.__dict__.update(
        id=id,
        content=content,
        sources=sources,
        kind=kind,
        key=key,
        importance=importance,
        namespace=namespace,
        meta=meta,
        target=target,
        created_at=created_at,
        seq=seq,
        via=None,
        expires_at=expires_at,
        valid_from=valid_from,
        valid_to=valid_to,
    )
    return m


def normalize_parents(parent: Any) -> tuple[str, ...]:
    """``None`` -> ``()``, ``"e1"`` -> ``("e1",)``, a list -> a tuple (order kept)."""
    if parent is None:
        return ()
    if isinstance(parent, str):
        return (parent,)
    if isinstance(parent, (list, tuple)):
        return tuple(parent)
    return (parent,)  # rejected later by validation with a clear message
