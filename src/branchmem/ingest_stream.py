"""Large batches on a backend that streams rows (PostgreSQL): a chunk at a time.

A batch of one namespace is checked, placed and sent a chunk at a time, so
the server stores one chunk while the next is checked and placed: Python's
work and the server's overlap instead of adding up. The answer is the one
the plain path (`EventOps._add_events`) gives: the same positions (chunks
are placed in order by one `Ingest`), nothing stored when anything fails,
and the same error. For that, a failure while placing first checks the rest
of the batch (the plain path checks every event before placing any), then
sends the whole batch down the plain path, which raises the error; so does an
id found stored (the plain path then looks every id up: a re-add is a no-op).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

from .backends.base import DuplicateIds, EventRow
from .branches import log
from .lineage import Ingest
from .model import Event
from .validate import events_from

if TYPE_CHECKING:
    from .store import Store

CHUNK = 12_500
"""Events checked, placed and sent at a time (at most; chunks are of even size).
Four chunks to a batch of 50,000 measured faster than seven or two: each chunk
costs a few round trips (its lookups end the open ``COPY``)."""
STREAM_FROM = 2 * CHUNK
"""Batches of fewer events take the plain path."""


class EventStream(Protocol):
    """New event rows sent ahead of the rest of their batch (`write`), kept
    (`finish`, which raises `DuplicateIds` if an id was stored) or undone (`abort`)."""

    def write(self, rows: list[EventRow]) -> None: ...

    def finish(self) -> None: ...

    def abort(self) -> None: ...


class _Plain(Exception):
    """This batch takes the plain path after all (nothing of it is stored)."""


def add_streamed(
    store: Store, items: list[Event | Mapping[str, Any]], now: float, actor: str | None
) -> list[Event] | None:
    """Add a large batch of one namespace a chunk at a time; None (nothing
    done) when the backend cannot stream or the batch is not for this path."""
    opener = getattr(store._b, "event_stream", None)
    if opener is None or len(items) < STREAM_FROM:
        return None
    step = -(-len(items) // -(-len(items) // CHUNK))  # even chunks, none much smaller
    first = events_from(items[:step], now)
    ns = first[0].namespace
    if any(e.namespace != ns for e in first):
        return None
    try:
        with store._b.transaction():
            return _add(store, opener, items, step, first, ns, now, actor)
    except _Plain:
        return None


def _add(
    store: Store,
    opener: Any,
    items: list[Event | Mapping[str, Any]],
    step: int,
    chunk: list[Event],
    ns: str,
    now: float,
    actor: str | None,
) -> list[Event]:
    b = store._b
    ingest = Ingest(b, ns, store._seg_parents(ns))
    names = {n for n, _ in b.list_branches(ns)}
    rows = ingest.plan.new_rows
    out: list[Event] = []
    held: list[EventRow] = []  # rows still waiting for a parent: sent last
    sent = 0
    at = step  # where the next chunk starts in ``items``
    stream: EventStream | None = None
    try:
        while True:
            try:
                events = store._redacted(chunk)
                ingest.assume_new([e.id for e in events])
                ingest.prefetch(p for e in events for p in e.parents)
                ingest.prefetch_tips(events)
                out += ingest.add_all(events, names)
            except Exception:
                # The plain path checks every event before placing any: a bad
                # event later on is the error to raise; else it raises this one.
                events_from(items[at:], now)
                raise _Plain from None
            if stream is None:
                stream = opener(ns)
                if stream is None:
                    raise _Plain
            fresh = rows[sent:]
            sent = len(rows)
            stream.write([r for r in fresh if r.pos is not None])
            held += [r for r in fresh if r.pos is None]
            if at >= len(items):
                break
            chunk = events_from(items[at : at + step], now)
            at += step
            if any(e.namespace != ns for e in chunk):
                events_from(items[at:], now)
                raise _Plain
        try:
            stream.write(held)
            stream.finish()
        except DuplicateIds:
            raise _Plain from None  # an id was stored: the plain path looks every one up
        plan = ingest.apply(rows_written=True)
    except BaseException:
        if stream is not None:
            stream.abort()  # (inside a caller's transaction, that goes on)
        raise
    if plan.newly_connected:
        store._index_waiting_records(ns, ingest, plan.newly_connected)
    if plan.new_rows:
        log(store, ns, "add_events", [e.id for e in out], actor, now)
    return out
