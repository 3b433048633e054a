"""The in-memory backend's stored rows, kept compact.

A stored event keeps its fields in a few slots (a lone parent as a string, no
tuple; no namespace, which is the space's), and reads build an `Event` from
them each time. A stored record keeps its own fields likewise. Rare fields
take a slot only where present: an event's ``meta``, and a record's key,
importance other than 0.5, meta, target, expiry and validity (together, in
one tuple), live in a subclass with one slot more. A record's `Memory` is
built the first time a read needs it and kept in the row, so that the gate's
hot loop reads shared objects (as it always did) while a store whose records
are never read holds no `Memory` objects at all.
"""

from __future__ import annotations

import sys
from typing import Any

from ..model import Event, Memory, copy_json, make_event, make_memory
from .base import Pos, RecordRow

_intern = sys.intern
_DEFAULT_IMPORTANCE = 0.5


def _show(row: object, names: tuple[str, ...]) -> str:
    fields = ", ".join(f"{n}={getattr(row, n)!r}" for n in names)
    return f"{type(row).__name__}({fields})"


class StoredEvent:
    """One stored event; ``parents`` is ``None`` (a root), an id, or a tuple of ids.
    An event with ``meta`` is a `_MetaEvent`, which has a slot for it."""

    __slots__ = ("at", "content", "id", "parents", "role", "seg", "seq")
    meta: dict[str, Any] | None = None

    def __init__(self, ev: Event, parents: str | tuple[str, ...] | None, pos: Pos | None) -> None:
        self.id = ev.id
        self.parents = parents
        self.role = _intern(ev.role)
        self.content = ev.content
        self.at = ev.created_at
        self.seg: int | None = None if pos is None else pos[0]
        self.seq = 0 if pos is None else pos[1]

    def __repr__(self) -> str:
        return _show(self, ("id", "parents", "role", "content", "at", "meta", "seg", "seq"))

    def erase(self) -> None:
        """Blank the content (and meta): the event stays, its text goes."""
        self.content = ""

    @property
    def pos(self) -> Pos | None:
        seg = self.seg
        return None if seg is None else (seg, self.seq)

    def parent_ids(self) -> tuple[str, ...]:
        p = self.parents
        return () if p is None else (p,) if type(p) is str else p  # type: ignore[return-value]

    def event(self, ns: str) -> Event:
        """A new `Event` of this row (namespace ``ns``, the space's), with its own
        copy of ``meta``: a caller changing it cannot change the stored event."""
        meta = self.meta
        return make_event(
            self.id,
            self.parent_ids(),
            self.role,
            self.content,
            ns,
            None if meta is None else copy_json(meta),
            self.at,
        )


class _MetaEvent(StoredEvent):
    __slots__ = ("meta",)

    def erase(self) -> None:
        self.content, self.meta = "", None


def stored_event(ev: Event, parents: str | tuple[str, ...] | None, pos: Pos | None) -> StoredEvent:
    """A stored row for ``ev``; ``parents`` as `compact_ids` gives them."""
    if ev.meta is None:
        return StoredEvent(ev, parents, pos)
    row = _MetaEvent(ev, parents, pos)
    row.meta = ev.meta
    return row


def compact_ids(
    ids: tuple[str, ...], events: dict[str, StoredEvent]
) -> str | tuple[str, ...] | None:
    """``ids`` as a stored row keeps them: each as the stored event's own string
    (one copy of each id), a lone one without a tuple, none as ``None``."""
    if not ids:
        return None
    get = events.get
    if len(ids) == 1:
        s = get(ids[0])
        return ids[0] if s is None else s.id
    if len(ids) == 2:  # a message and its reply: no list to build first
        a, b = ids
        sa, sb = get(a), get(b)
        return (a if sa is None else sa.id, b if sb is None else sb.id)
    return tuple([s.id if (s := events.get(i)) is not None else i for i in ids])


def _split_pos(base: type) -> Any:
    """A ``pos`` property kept in two slots: the base class's ``pos`` slot holds
    the segment alone, ``_seq`` the seq; it reads back as the same pair."""
    seg_slot = base.__dict__["pos"]

    def get(row: Any) -> Pos | None:
        seg = seg_slot.__get__(row)
        return None if seg is None else (seg, row._seq)

    def put(row: Any, pos: Pos | None) -> None:
        if pos is None:
            seg_slot.__set__(row, None)
        else:
            seg_slot.__set__(row, pos[0])
            row._seq = pos[1]

    return property(get, put)


class StoredRecord(RecordRow):
    """One stored record. ``memory`` is ``None`` until a read builds it (`warm`);
    ``rare`` is ``None``, or ``(key, importance, meta, target, expires_at,
    valid_from, valid_to)`` in a `_RareRecord` (which has a slot for it)."""

    __slots__ = ("_seq", "at", "content", "id", "kind", "seq", "sources")
    pos = _split_pos(RecordRow)
    _seq: int  # the seq of ``pos``, whose own slot holds the segment
    rare: tuple[Any, ...] | None = None

    def __init__(self, m: Memory, sources: str | tuple[str, ...] | None) -> None:
        self.memory = None  # type: ignore[assignment]
        self.pos = None
        self.extra = ()
        self.id = m.id
        self.content = m.content
        self.sources = sources
        self.kind = _intern(m.kind)
        self.seq = m.seq
        self.at = m.created_at

    def __repr__(self) -> str:
        # What is stored, without the Memory a read may have built (a cache).
        return _show(
            self, ("id", "content", "sources", "kind", "seq", "at", "rare", "pos", "extra")
        )

    def source_ids(self) -> tuple[str, ...]:
        s = self.sources
        return () if s is None else (s,) if type(s) is str else s  # type: ignore[return-value]

    @property
    def target(self) -> str | None:
        rare = self.rare
        return None if rare is None else rare[3]

    @property
    def timed(self) -> bool:
        """Has it an expiry or a validity interval?"""
        rare = self.rare
        return rare is not None and rare[4:] != (None, None, None)

    @property
    def expires_at(self) -> float | None:
        rare = self.rare
        return None if rare is None else rare[4]

    def build(self, ns: str) -> Memory:
        """A new `Memory` of this row (namespace ``ns``, the space's)."""
        rare = self.rare
        if rare is None:
            key = meta = target = expires = v_from = v_to = None
            importance = _DEFAULT_IMPORTANCE
        else:
            key, importance, meta, target, expires, v_from, v_to = rare
        return make_memory(
            self.id, self.content, self.source_ids(), self.kind, key, importance, ns,
            meta, target, self.at, self.seq, expires, v_from, v_to,
        )  # fmt: skip

    def warm(self, ns: str) -> Memory:
        """The row's `Memory`, built and kept on first use: reads share it."""
        m = self.memory
        if m is None:
            m = self.memory = self.build(ns)
        return m


class _RareRecord(StoredRecord):
    __slots__ = ("rare",)


_PLAIN = (None, _DEFAULT_IMPORTANCE, None, None, None, None, None)


def stored_record(m: Memory, sources: str | tuple[str, ...] | None) -> StoredRecord:
    """A stored row for ``m``; ``sources`` as `compact_ids` gives them."""
    rare = (m.key, m.importance, m.meta, m.target, m.expires_at, m.valid_from, m.valid_to)
    if rare == _PLAIN:
        return StoredRecord(m, sources)
    row = _RareRecord(m, sources)
    row.rare = rare
    return row
