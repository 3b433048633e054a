"""The gate: anchors, their ancestor ranges, and the records visible in them.

A derived record is visible at an anchor iff every one of its sources is the
anchor or one of its ancestors, and no retraction of it is visible there.
An anchor (an event id or a branch name) resolves to an event and its
``(segment, seq)`` position; its ancestors are a few ranges of segments
(`branchmem.lineage`), kept between reads by the engine's `RangesMemo`.
`read_views` is the one loop that reads records through ranges: a single
anchor's read, a scope chain's (`branchmem.ops.scope`) and a merge's two
sides all go through it.

Every function takes the `Engine` first; callers hold the backend's read (or
write) transaction.
"""

from __future__ import annotations

from operator import attrgetter
from typing import Any

from .backends.base import Pos, RecordRow
from .branch_types import CONFLICT
from .bulk import pausing
from .engine import Engine
from .errors import InvalidInput, UnknownAnchor
from .lineage import ancestor_ranges, in_ranges, row_in_ranges
from .model import EDGE, RETRACTION, Memory
from .validate import check_utf8, show

_SEQ = attrgetter("seq")


def anchor(engine: Engine, ns: str, at: Any) -> tuple[str, Pos | None]:
    """The anchor's event id and position (None while it waits for a parent)."""
    if not isinstance(at, str) or not at:
        raise InvalidInput(
            f"`at` must be an event id or a branch name (a non-empty string), got {show(at)}"
        )
    check_utf8(at, f"the anchor {show(at)}")
    b = engine.backend
    row = b.get_events(ns, [at]).get(at)
    if row is None:
        head = b.get_branch(ns, at)
        if head is None:
            raise UnknownAnchor(at, ns)
        row = b.get_events(ns, [head]).get(head)
        if row is None:  # a branch always points at a stored event
            raise UnknownAnchor(at, ns)
    return row.event.id, row.pos


def resolve_event(engine: Engine, ns: str, at: str) -> str:
    """The event id ``at`` names: a branch's head or an event id (`UnknownAnchor`)."""
    return anchor(engine, ns, at)[0]


def ranges(engine: Engine, ns: str, at: Any) -> dict[int, int] | None:
    """The anchor's ancestor ranges (None while it waits for a parent)."""
    _, pos = anchor(engine, ns, at)
    if pos is None:
        return None
    return ranges_at(engine, ns, pos)


def ranges_at(engine: Engine, ns: str, pos: Pos) -> dict[int, int]:
    """The ancestor ranges of the event at ``pos`` (a fresh dict, the caller's to change)."""
    b = engine.backend
    engine.sync(b.generation())
    return engine.ranges_memo.ranges(ns, pos, lambda segs: b.segment_ancestry(ns, segs))


def position(engine: Engine, ns: str, event_id: str) -> Pos | None:
    """Where a stored event sits (None if it waits for a parent or is not stored)."""
    row = engine.backend.get_events(ns, [event_id]).get(event_id)
    return None if row is None else row.pos


def is_ancestor(engine: Engine, ns: str, a: str, b: str) -> bool:
    """Is event ``a`` an ancestor of event ``b`` (or ``b`` itself)?"""
    rows = engine.backend.get_events(ns, [a, b])
    ra, rb = rows.get(a), rows.get(b)
    if ra is None or rb is None or ra.pos is None or rb.pos is None:
        return False
    return in_ranges(ra.pos, ancestor_ranges(rb.pos, engine.seg_parents(ns)))


@pausing
def read_views(
    engine: Engine,
    ns: str,
    views: list[dict[int, int]],
    kind: str | None,
    as_of: float | None = None,
) -> tuple[list[list[Memory]], list[set[str]]]:
    """For each view (ancestor ranges), the records it is the first to show,
    oldest first; and the ids that retractions visible in it hide there.

    Views are read in order, each fetching only the part of its ranges that
    no earlier view covered: a record is fetched and checked once, in the
    first view whose ranges hold its index position, exactly as a
    single-anchor read checks it. The few that view does not show (a source
    off its path, or retracted there) wait and are offered to the later views.
    ``kind`` keeps one kind (`RETRACTION` lists retractions instead of
    applying them); without it conflict records and edges are left out. ``as_of`` keeps
    what was written by then."""
    backend = engine.backend
    want_retractions = kind == RETRACTION
    groups: list[list[Memory]] = []
    hidden_in: list[set[str]] = []
    covered: dict[int, int] = {}  # the union of the views read so far
    retractions: list[RecordRow] = []  # every retraction fetched so far
    waiting: list[RecordRow] = []  # fetched, not yet visible from any view
    last = len(views) - 1
    for i, rs in enumerate(views):
        fresh = {g: u for g, u in rs.items() if u > covered.get(g, -1)} if i else rs
        rows = backend.records_in_ranges(ns, fresh, covered) if fresh else ()
        if as_of is not None:
            rows = (r for r in rows if r.memory.created_at <= as_of)
        live: list[Memory] = []
        if waiting:  # fetched for an earlier view: visible from this one?
            still = []
            for row in waiting:
                if row_in_ranges(row, rs):
                    live.append(row.memory)
                else:
                    still.append(row)
            waiting = still
        # Each fresh row's ``pos`` is in this view and in no earlier one. The
        # inlined checks are a single-anchor read's; this loop is the whole cost.
        earlier = len(retractions)
        hidden: set[str] = set()
        for row in rows:
            m = row.memory
            extra = row.extra
            if m.target is not None:
                retractions.append(row)  # later views may see it too
                if extra and not all(rs.get(a, -1) >= b for a, b in extra):
                    if want_retractions:
                        waiting.append(row)
                else:
                    hidden.add(m.target)
                    if want_retractions:
                        live.append(m)
            elif want_retractions or (
                m.kind != kind if kind is not None else (m.kind == CONFLICT or m.kind == EDGE)
            ):
                continue
            elif extra and not all(rs.get(a, -1) >= b for a, b in extra):
                waiting.append(row)
            else:
                live.append(m)
        if want_retractions:
            hidden = set()  # retractions are listed, not applied
        else:
            if earlier:
                hidden.update(
                    r.memory.target or "" for r in retractions[:earlier] if row_in_ranges(r, rs)
                )
            if hidden:
                live, gone = _split(live, hidden)
                waiting += backend.get_records(ns, gone).values()
        live.sort(key=_SEQ)
        groups.append(live)
        hidden_in.append(hidden)
        if i < last:
            covered.update(fresh)
    return groups, hidden_in


def _split(live: list[Memory], hidden: set[str]) -> tuple[list[Memory], list[str]]:
    """``live`` without the ids in ``hidden``, and the ids taken out."""
    keep = [m for m in live if m.id not in hidden]
    if len(keep) == len(live):
        return live, []
    return keep, [m.id for m in live if m.id in hidden]
