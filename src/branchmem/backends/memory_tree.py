"""The in-memory backend's children index, for `Backend.child_events` and the
sibling reads (mixed into `MemoryBackend`).

The index is built the first time a namespace's tree is read, and kept from
then on by each insert: a store whose tree is never read pays nothing for it.
Keys are positions (from 1) in a parent's list of children, in arrival order.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from itertools import islice
from typing import TYPE_CHECKING, Any

from .base import EventRow
from .memory_rows import StoredEvent

Kids = dict[str | None, list[StoredEvent]]
"""parent id (None: the roots) -> the events under it, in arrival order."""


def index_kids(kids: Kids, rows: Iterable[StoredEvent]) -> None:
    """Add ``rows`` (new events, in arrival order) under each of their parents."""
    for r in rows:
        ps = r.parent_ids()
        if not ps:
            kids.setdefault(None, []).append(r)
        for p in dict.fromkeys(ps):
            kids.setdefault(p, []).append(r)


def _key_parent(parents: tuple[str, ...]) -> str | None:
    """The list that holds every event with this set of parents."""
    return min(parents) if parents else None


class TreeReads:
    """Children and siblings over the lazily built index of each space."""

    if TYPE_CHECKING:

        def _read(self, ns: str) -> Any: ...

    def _kids(self, ns: str) -> Kids:
        sp = self._read(ns)
        if sp.kids is None:
            if not sp.events:
                return {}  # an unknown or empty namespace: nothing to keep
            sp.kids = {}
            index_kids(sp.kids, sp.events.values())
        kids: Kids = sp.kids
        return kids

    def child_events(
        self, ns: str, parent: str | None, after: int, limit: int
    ) -> list[tuple[int, EventRow]]:
        rows = self._kids(ns).get(parent, [])
        got = islice(enumerate(rows[after:], after + 1), limit)
        return [(k, EventRow(r.event(ns), r.pos)) for k, r in got]

    def _siblings(
        self, ns: str, parents: tuple[str, ...], after: int = 0
    ) -> Iterator[tuple[int, StoredEvent]]:
        want = set(parents)
        rows = self._kids(ns).get(_key_parent(parents), [])
        if len(want) <= 1:
            # A lone parent is stored as the id itself (memory_rows); the roots'
            # list holds only roots.
            lone = parents[0] if parents else None
            for k, r in enumerate(rows[after:], after + 1):
                if lone is None or r.parents == lone:
                    yield k, r
            return
        for k, r in enumerate(rows[after:], after + 1):
            if len(r.parent_ids()) == len(want) and set(r.parent_ids()) == want:
                yield k, r

    def sibling_events(
        self, ns: str, parents: tuple[str, ...], after: int, limit: int
    ) -> list[tuple[int, EventRow]]:
        got = islice(self._siblings(ns, parents, after), limit)
        return [(k, EventRow(r.event(ns), r.pos)) for k, r in got]

    def sibling_count(self, ns: str, parents: tuple[str, ...], upto: int | None) -> int:
        return sum(1 for k, _ in self._siblings(ns, parents) if upto is None or k <= upto)

    def sibling_before(self, ns: str, parents: tuple[str, ...], key: int) -> str | None:
        before = [r for k, r in self._siblings(ns, parents) if k < key]
        return before[-1].id if before else None

    def sibling_key(self, ns: str, event_id: str) -> int | None:
        row = self._read(ns).events.get(event_id)
        if row is None:
            return None
        rows = self._kids(ns).get(_key_parent(row.parent_ids()), [])
        for k, r in enumerate(rows, 1):
            if r is row:
                return k
        return None
