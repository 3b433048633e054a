"""Large batches on a backend that streams rows (PostgreSQL): a chunk at a time.

A batch of one namespace is checked, placed and sent a chunk at a time, so
the server stores one chunk while the next is checked and placed: Python's
work and the server's overlap instead of adding up. The lookups the batch
needs go first, from the ids as given (`validate_batch.batch_refs`), so that
no statement ends the ``COPY`` midway. The answer is the one the plain path
(`ops.events.add_events`) gives: the same positions (chunks are placed in
order by one `Ingest`), nothing stored when anything fails, and the same
error. For that, a chunk that fails its checks or its placement, or an id
found stored, undoes what was sent and sends the whole batch down the plain
path, which checks every event before placing any (and so raises the error
the first bad event gives) and looks every id up (a re-add is a no-op).
"""

from __future__ import annotations

from typing import Any, Protocol

from ..backends.base import DuplicateIds, EventRow
from ..engine import Engine
from ..lineage import Ingest
from ..model import Event
from ..validate_batch import batch_refs, event_columns
from .audit import log
from .ingest import index_waiting_records, warn_waiting

CHUNK = 6_250
"""Events checked, placed and sent at a time (at most; chunks are of even size).
Eight chunks to a batch of 50,000 measured a little faster than four: the
server starts sooner and has less left to store when the last chunk is sent."""
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
    engine: Engine, items: list[Any], now: float, actor: str | None
) -> list[Event] | None:
    """Add a large batch of one namespace a chunk at a time; None (nothing
    done) when the backend cannot stream or the batch is not for this path."""
    opener = getattr(engine.backend, "event_stream", None)
    if opener is None or len(items) < STREAM_FROM:
        return None
    refs = batch_refs(items)
    if refs is None:
        return None
    step = -(-len(items) // -(-len(items) // CHUNK))  # even chunks, none much smaller
    try:
        with engine.backend.transaction():
            return _add(engine, opener, items, step, refs, now, actor)
    except _Plain:
        return None


def _add(
    engine: Engine,
    opener: Any,
    items: list[Any],
    step: int,
    refs: tuple[str, list[str], list[str]],
    now: float,
    actor: str | None,
) -> list[Event]:
    b = engine.backend
    ns, ids, parents = refs
    ingest = Ingest(b, ns, engine.seg_parents(ns))
    names = {n for n, _ in b.list_branches(ns)}
    # The lookups the batch needs, before the first row goes out (a statement
    # ends the open ``COPY`` and waits for the server to store what was sent):
    # from the ids as given, ahead of the checks, which go a chunk at a time
    # while the server stores the chunk before. (What they miss, such as the
    # parents of a merge, is looked up when placed.)
    ingest.assume_new(ids)
    ingest.prefetch(parents)
    ingest.prefetch_tips_of(parents, least=1)
    ingest.prefetch_next_segment()
    rows = ingest.plan.new_rows
    out: list[Event] = []
    held: list[EventRow] = []  # rows still waiting for a parent: sent last
    sent = 0
    stream: EventStream | None = None
    try:
        for at in range(0, len(items), step):
            cols = event_columns(items[at : at + step])
            if cols is None:  # (its namespace is ``ns``: `batch_refs` saw them all)
                raise _Plain  # the plain path checks every item and raises the error
            try:
                events = engine.redacted(cols.events(now))
                out += ingest.add_all(events, names)
            except Exception:
                raise _Plain from None  # the plain path raises it, having stored nothing
            if stream is None:
                stream = opener(ns)
                if stream is None:
                    raise _Plain
            fresh = rows[sent:]
            sent = len(rows)
            stream.write([r for r in fresh if r.pos is not None])
            held += [r for r in fresh if r.pos is None]
        assert stream is not None
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
        index_waiting_records(engine, ns, ingest, plan.newly_connected)
    warn_waiting(ns, ingest, plan)
    if plan.new_rows:
        log(engine, ns, "add_events", [e.id for e in out], actor, now)
    return out
