"""`Store`'s doors for derived records: add, add many, retract, supersede
(`branchmem.ops.records`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..ops import records as _records

if TYPE_CHECKING:
    from ..model import Memory
    from . import Front


def add_memory(
    self: Front,
    content: str,
    *,
    sources: Sequence[str],
    kind: str = "semantic",
    key: str | None = None,
    importance: float = 0.5,
    namespace: str = "default",
    meta: dict[str, Any] | None = None,
    id: str | None = None,
    expires_at: float | None = None,
    valid_from: float | None = None,
    valid_to: float | None = None,
    actor: str | None = None,
) -> Memory:
    """Store a derived record sourced from ``sources`` (event ids).

    Sources that have not arrived are allowed: the record stays hidden
    until they arrive and connect. Re-adding the same ``id`` with the
    same fields returns the stored record. ``expires_at``, ``valid_from``
    and ``valid_to`` are times in seconds since the epoch (see
    `branchmem.ops.lifecycle`); without ``expires_at`` the kind's default TTL
    applies, if the store's `Policy` sets one.

    >>> store = Store()
    >>> _ = store.add_event("e1", content="我对花生过敏。")
    >>> store.add_memory("用户对花生过敏", sources=["e1"], key="allergy").key
    'allergy'
    """
    return _records.add_memory(
        self._engine,
        content,
        sources=sources,
        kind=kind,
        key=key,
        importance=importance,
        namespace=namespace,
        meta=meta,
        id=id,
        expires_at=expires_at,
        valid_from=valid_from,
        valid_to=valid_to,
        actor=actor,
    )


def add_memories(
    self: Front, items: Iterable[Memory | Mapping[str, Any]], *, actor: str | None = None
) -> list[Memory]:
    """Store many records in one transaction (all or none), like `add_memory` each.

    Each item is a dict of `add_memory`'s arguments (``content``, ``sources``,
    and optionally ``kind``, ``key``, ``importance``, ``namespace``, ``meta``,
    ``id``) or a `Memory`.

    >>> store = Store()
    >>> _ = store.add_event("e1")
    >>> len(store.add_memories([{"content": "a", "sources": ["e1"]},
    ...                         {"content": "b", "sources": ["e1"]}]))
    2
    """
    return _records.add_memories(self._engine, items, actor=actor)


def retract(
    self: Front,
    memory_id: str,
    *,
    sources: Sequence[str],
    namespace: str = "default",
    id: str | None = None,
    actor: str | None = None,
) -> Memory:
    """Hide ``memory_id`` wherever this retraction's own sources are on the path.

    On a branch where the sources are not ancestors, the memory stays.

    >>> store = Store()
    >>> _ = store.add_events([{"id": "e1"}, {"id": "e2", "parent": "e1"}])
    >>> m = store.add_memory("用户对花生过敏", sources=["e1"])
    >>> _ = store.retract(m.id, sources=["e2"])
    >>> store.visible(m.id, at="e1"), store.visible(m.id, at="e2")
    (True, False)
    """
    return _records.retract(
        self._engine, memory_id, sources=sources, namespace=namespace, id=id, actor=actor
    )


def supersede(
    self: Front,
    /,
    memory_id: str,
    content: str,
    *,
    sources: Sequence[str],
    namespace: str = "default",
    actor: str | None = None,
    **fields: Any,
) -> Memory:
    """Replace a record: a retraction of it plus a new record, both from ``sources``.

    ``fields`` (``kind``, ``key``, ``importance``, ``meta``, ``id``,
    ``expires_at``, ``valid_from``, ``valid_to``) default to the old
    record's. Returns the new record.

    >>> store = Store()
    >>> _ = store.add_events([{"id": "e1"}, {"id": "e2", "parent": "e1"}])
    >>> old = store.add_memory("预算3000", sources=["e1"], key="budget")
    >>> new = store.supersede(old.id, "预算4000", sources=["e2"])
    >>> [m.content for m in store.memories(at="e2")]
    ['预算4000']
    """
    return _records.supersede(
        self._engine,
        memory_id,
        content,
        sources=sources,
        namespace=namespace,
        actor=actor,
        fields=fields,
    )
