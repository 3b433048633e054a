"""The tree as a chat UI reads it: an event's children, its siblings (the
versions of an edited message or a regenerated reply) and where it stands
among them. Pages run in arrival order and resume from a cursor, so a node
with thousands of children costs a page at a time (`Backend.child_events`).

Roots are separate conversations, not versions of each other: a root's
versions are the roots that name the same first root in ``meta["version_of"]``
(itself included), found by reading the namespace's roots.
"""

from __future__ import annotations

from ..backends.base import EventRow
from ..engine import Engine
from ..errors import InvalidInput, UnknownEvent
from ..model import Event
from ..tree_types import VERSION_OF, EventPage, Versions
from ..validate import check_id, check_int, check_namespace, show

MAX_PAGE = 10_000


def _after(cursor: str | None) -> int:
    """The key a cursor names (0: from the first)."""
    if cursor is None:
        return 0
    if isinstance(cursor, str) and cursor.isdigit() and len(cursor) < 20:
        return int(cursor)
    raise InvalidInput(
        f"cursor must be a cursor a previous page returned (or None), got {show(cursor)}"
    )


def _page(rows: list[tuple[int, EventRow]], limit: int) -> EventPage:
    # One row more than asked says whether there is a next page.
    more = len(rows) > limit
    rows = rows[:limit]
    cursor = str(rows[-1][0]) if more and rows else None
    return EventPage(tuple(r.event for _, r in rows), cursor)


def _event(engine: Engine, ns: str, event_id: str) -> Event:
    row = engine.backend.get_events(ns, [check_id(event_id, "event id")]).get(event_id)
    if row is None:
        raise UnknownEvent(event_id, ns)
    return row.event


def root_of(ev: Event) -> str:
    """The first root of the conversation a root starts: ``meta["version_of"]``
    when the root is an edit of another root's message, else its own id."""
    named = (ev.meta or {}).get(VERSION_OF)
    return named if isinstance(named, str) and named else ev.id


def _root_versions(engine: Engine, ns: str, ev: Event) -> list[tuple[int, EventRow]]:
    """The roots that are versions of the root ``ev``, in arrival order."""
    want, out, after = root_of(ev), [], 0
    while True:
        rows = engine.backend.child_events(ns, None, after, MAX_PAGE)
        out += [(k, r) for k, r in rows if root_of(r.event) == want]
        if len(rows) < MAX_PAGE:
            return out
        after = rows[-1][0]


def children(
    engine: Engine, event_id: str | None, *, namespace: str, limit: int, cursor: str | None
) -> EventPage:
    """`Store.children`: the events under ``event_id`` (the roots when None)."""
    ns = check_namespace(namespace)
    limit = check_int(limit, "limit", 1, MAX_PAGE)
    after = _after(cursor)
    b = engine.backend
    with b.reading():
        if event_id is not None:
            _event(engine, ns, event_id)
        return _page(b.child_events(ns, event_id, after, limit + 1), limit)


def siblings(
    engine: Engine, event_id: str, *, namespace: str, limit: int, cursor: str | None
) -> EventPage:
    """`Store.siblings`: the events with ``event_id``'s parents, itself included."""
    ns = check_namespace(namespace)
    limit = check_int(limit, "limit", 1, MAX_PAGE)
    after = _after(cursor)
    b = engine.backend
    with b.reading():
        ev = _event(engine, ns, event_id)
        if not ev.parents:
            rows = [(k, r) for k, r in _root_versions(engine, ns, ev) if k > after]
            return _page(rows[: limit + 1], limit)
        return _page(b.sibling_events(ns, ev.parents, after, limit + 1), limit)


def versions(engine: Engine, event_id: str, *, namespace: str) -> Versions:
    """`Store.versions`: ``event_id``'s place among its siblings."""
    ns = check_namespace(namespace)
    b = engine.backend
    with b.reading():
        ev = _event(engine, ns, event_id)
        if not ev.parents:
            ids = [r.event.id for _, r in _root_versions(engine, ns, ev)]
            i = ids.index(event_id)
            prev_id = ids[i - 1] if i else None
            return Versions(
                event_id, i + 1, len(ids), prev_id, ids[i + 1] if i + 1 < len(ids) else None
            )
        key = b.sibling_key(ns, event_id)
        if key is None:  # stored a moment ago (just read), so never here
            raise UnknownEvent(event_id, ns)
        count = b.sibling_count(ns, ev.parents, None)
        position = b.sibling_count(ns, ev.parents, key)
        nxt = b.sibling_events(ns, ev.parents, key, 1)
        prev = b.sibling_before(ns, ev.parents, key) if position > 1 else None
    return Versions(event_id, position, count, prev, nxt[0][1].event.id if nxt else None)
