"""Planning one namespace's events into the lineage and writing them.

An event may arrive before its parent: it waits, hidden, until the parent
arrives, and records waiting on it are indexed when it connects (see
`branchmem.lineage`). The callers (`ops.events`, `ops.stream`, and the
writes that append an event: `ops.heads`, `ops.merge`) hold the write
transaction.
"""

from __future__ import annotations

from ..backends.base import DuplicateIds
from ..engine import Engine
from ..errors import CycleError, UnknownParents
from ..lineage import Ingest, IngestPlan, index_position
from ..model import Event
from ..notices import notify


def plan(engine: Engine, ns: str, events: list[Event]) -> None:
    """Plan one namespace's events without writing: raises what `ingest` would."""
    events = engine.redacted(events)  # as stored, so that a re-add compares equal
    b = engine.backend
    planner = Ingest(b, ns, engine.seg_parents(ns))
    planner.prefetch(dict.fromkeys([e.id for e in events] + [p for e in events for p in e.parents]))
    planner.prefetch_tips(events)
    planner.add_all(events, {n for n, _ in b.list_branches(ns)})


def ingest(engine: Engine, ns: str, events: list[Event]) -> list[Event]:
    """Plan and write one namespace's events (see `ingest_counted`)."""
    return ingest_counted(engine, ns, events)[0]


def ingest_counted(
    engine: Engine, ns: str, events: list[Event], *, optimistic: bool = True
) -> tuple[list[Event], int]:
    """Plan and write one namespace's events; also says how many were new.

    Optimistically, the batch's ids are taken as new without a lookup (the
    common case of an import); if one was stored already, the backend says
    so before writing and the batch is planned again with every id looked up.
    """
    events = engine.redacted(events)
    b = engine.backend
    planner = Ingest(b, ns, engine.seg_parents(ns))
    ids = [e.id for e in events]
    if optimistic:
        planner.assume_new(ids)
        planner.prefetch(p for e in events for p in e.parents)
    else:
        planner.prefetch(dict.fromkeys(ids + [p for e in events for p in e.parents]))
    planner.prefetch_tips(events)
    names = {n for n, _ in b.list_branches(ns)}
    try:
        out = planner.add_all(events, names)
        done = planner.apply()
    except (DuplicateIds, CycleError):
        # A stored id was taken for new: plan again knowing every id, so that a
        # re-add is a no-op and an error names the real cause.
        if not optimistic:
            raise
        return ingest_counted(engine, ns, events, optimistic=False)
    if done.newly_connected:
        index_waiting_records(engine, ns, planner, done.newly_connected)
    warn_waiting(ns, planner, done)
    return out, len(done.new_rows)


def warn_waiting(ns: str, planner: Ingest, done: IngestPlan) -> None:
    """Say which new events wait for parents not in the tree (accepted, hidden),
    naming the parents they wait for outside the batch."""
    waiting = [r.event for r in done.new_rows if r.pos is None]
    if not waiting:
        return
    ids = {e.id for e in waiting}
    unknown = dict.fromkeys(
        p for e in waiting for p in e.parents if p not in ids and planner.pos_of(p) is None
    )
    notify(UnknownParents(ns, tuple(e.id for e in waiting), tuple(unknown)))


def index_waiting_records(engine: Engine, ns: str, planner: Ingest, connected: list[str]) -> None:
    """Index the records that waited for events just connected, where every
    source now has a place."""
    b = engine.backend
    waiting = b.records_waiting_on(ns, connected)
    if not waiting:
        return
    rids = list(dict.fromkeys(r for rs in waiting.values() for r in rs))
    rows = b.get_records(ns, rids)
    updates = []
    for rid in rids:
        positions = [planner.pos_of(s) for s in rows[rid].memory.sources]
        if all(p is not None for p in positions):
            pos, extra = index_position(
                [p for p in positions if p is not None], planner.seg_parents_overlay
            )
            updates.append((rid, pos, extra))
    if updates:
        b.set_record_positions(ns, updates)
    b.drop_record_waits(ns, list(waiting))
