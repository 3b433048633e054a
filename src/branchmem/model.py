"""Plain frozen dataclasses that cross the public boundary: events and memories."""

from __future__ import annotations

import uuid
from collections import deque
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field, fields
from itertools import repeat
from operator import attrgetter
from typing import Any

KINDS = ("episodic", "semantic", "procedural", "working")
"""The memory types a caller may store."""

RETRACTION = "retraction"
"""Kind of the gated records written by `Store.retract` (never a caller's kind)."""

EDGE = "edge"
"""Kind of the gated records written by `Store.add_edge` (a relation graph's
edges; never a caller's kind, and left out of reads that name no kind)."""

ROLES = ("user", "assistant", "tool", "system", "note")


def new_event_id() -> str:
    """A fresh event id, for an event the store writes itself (a note, a merge)."""
    return "ev_" + uuid.uuid4().hex


CONSOLIDATED_FROM = "consolidated_from"
"""The ``meta`` field of a consolidated record that lists its inputs' ids
(`branchmem.ops.cascade`; the backends index the records that have it)."""


def new_record_id() -> str:
    """A fresh record id, for a record written without one."""
    return "m_" + uuid.uuid4().hex


def copy_json(value: Any) -> Any:
    """A copy of a JSON value (dicts, lists and scalars, as stored ``meta`` is):
    a third of the cost of ``copy.deepcopy``, which handles any object."""
    t = type(value)
    if t is dict:
        return {k: copy_json(v) for k, v in value.items()}
    if t is list:
        return [copy_json(v) for v in value]
    return value


@dataclass(frozen=True, slots=True)
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
            "meta": None if self.meta is None else copy_json(self.meta),
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


@dataclass(frozen=True, slots=True)
class Memory:
    """A derived record: a fact, summary, profile, edge, or a retraction.

    ``sources`` are the events it was derived from; it is visible at an
    anchor only if every source is the anchor or one of its ancestors.
    A retraction has ``kind == "retraction"`` and names its ``target``.
    ``seq`` is its write order within its namespace (1, 2, ... per namespace),
    used for deterministic ordering.
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
            d["meta"] = copy_json(self.meta)
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
# The slots' own setters: building a stored object field by field without the
# frozen dataclass __init__ (a guarded setattr per field, twice the cost).
(_e_id, _e_parents, _e_role, _e_content, _e_ns, _e_meta, _e_at) = (
    Event.__dict__[f.name].__set__ for f in fields(Event)
)
_M_SET = tuple(Memory.__dict__[f].__set__ for f in _MEMORY_FIELDS)
(_m_id, _m_content, _m_sources, _m_kind, _m_key, _m_imp, _m_ns, _m_meta, _m_target,
 _m_at, _m_seq, _m_via, _m_expires, _m_vfrom, _m_vto) = _M_SET  # fmt: skip
_M_GET = attrgetter(*_MEMORY_FIELDS)
_M_BY_NAME = dict(zip(_MEMORY_FIELDS, _M_SET, strict=True))


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
    _e_id(e, id)
    _e_parents(e, parents)
    _e_role(e, role)
    _e_content(e, content)
    _e_ns(e, namespace)
    _e_meta(e, meta)
    _e_at(e, created_at)
    return e


def make_events(
    ids: list[str],
    parents: list[tuple[str, ...]],
    roles: list[str],
    contents: list[str],
    namespaces: list[str],
    metas: list[dict[str, Any] | None],
    created_at: float,
) -> list[Event]:
    """`make_event` for each position of the columns, a field at a time: each
    slot's setter runs over a whole column inside one built-in loop, a fifth
    cheaper than a `make_event` call per event (batch ingest)."""
    n = len(ids)
    out: list[Event] = list(map(_new, repeat(Event, n)))
    columns: tuple[tuple[Any, Iterable[Any]], ...] = (
        (_e_id, ids),
        (_e_parents, parents),
        (_e_role, roles),
        (_e_content, contents),
        (_e_ns, namespaces),
        (_e_meta, metas),
        (_e_at, repeat(created_at, n)),
    )
    for put, column in columns:
        deque(map(put, out, column), 0)
    return out


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
    _m_id(m, id)
    _m_content(m, content)
    _m_sources(m, sources)
    _m_kind(m, kind)
    _m_key(m, key)
    _m_imp(m, importance)
    _m_ns(m, namespace)
    _m_meta(m, meta)
    _m_target(m, target)
    _m_at(m, created_at)
    _m_seq(m, seq)
    _m_via(m, None)
    _m_expires(m, expires_at)
    _m_vfrom(m, valid_from)
    _m_vto(m, valid_to)
    return m


def memory_with(m: Memory, **changes: Any) -> Memory:
    """A copy of ``m`` with some fields changed: `dataclasses.replace` without
    its checks (``m`` is already checked), at a third of the cost."""
    out: Memory = _new(Memory)
    for put, v in zip(_M_SET, _M_GET(m), strict=True):
        put(out, v)
    for name, value in changes.items():
        _M_BY_NAME[name](out, value)
    return out


def set_fresh(obj: Event | Memory, **values: Any) -> None:
    """Set fields of an object built for this call alone, not yet stored or shared."""
    for name, value in values.items():
        object.__setattr__(obj, name, value)


def normalize_parents(parent: Any) -> tuple[str, ...]:
    """``None`` -> ``()``, ``"e1"`` -> ``("e1",)``, a list -> a tuple (order kept)."""
    if parent is None:
        return ()
    if isinstance(parent, str):
        return (parent,)
    if isinstance(parent, (list, tuple)):
        return tuple(parent)
    return (parent,)  # rejected later by validation with a clear message
