"""Reads: the gate at an anchor, explanations, paths, and listings.

A derived record is visible at an anchor iff every one of its sources is the
anchor or one of its ancestors, and no retraction of it is visible there
(`branchmem.gate`). A read then leaves out what its time hides
(`ops.times`).
"""

from __future__ import annotations

from collections.abc import Sequence
from operator import attrgetter

from ..backends.base import EventRow, RecordRow
from ..branch_types import CONFLICT
from ..engine import Engine
from ..errors import UnknownEvent, UnknownMemory
from ..gate import anchor, ranges, read_views
from ..lineage import ancestor_ranges, in_ranges, row_in_ranges
from ..model import EDGE, RETRACTION, Event, Explanation, Memory, SourceStatus
from ..validate import (
    check_anchors,
    check_id,
    check_int,
    check_kind,
    check_namespace,
    check_page,
    show,
)
from .lifecycle import touch as touch_records
from .scope import read_chain
from .times import check_read_times, narrow, time_note

_POS = attrgetter("pos")


def memories(
    engine: Engine,
    *,
    at: str | Sequence[str] | None,
    kind: str | None,
    namespace: str,
    now: float | None,
    as_of: float | None,
    include_archived: bool,
    touch: bool,
) -> list[Memory]:
    """`Store.memories`."""
    ns = check_namespace(namespace)
    if kind is not None and kind != RETRACTION and kind != CONFLICT and kind != EDGE:
        check_kind(kind)
    t_now, t_as_of = check_read_times(now, as_of)
    if at is None:
        return []
    b = engine.backend
    with b.reading():  # one read view for the gate and the lifecycle state
        if t_as_of is not None:
            anchors = [at] if isinstance(at, str) else check_anchors(at)
            tag = not isinstance(at, str)
            out = read_chain(engine, ns, anchors, kind, as_of=t_as_of, tag=tag)
        elif not isinstance(at, str):
            out = read_chain(engine, ns, check_anchors(at), kind)
        else:
            rs = ranges(engine, ns, at)
            out = [] if rs is None else read_views(engine, ns, [rs], kind)[0][0]
        out = narrow(engine, ns, out, now=t_now, as_of=t_as_of, include_archived=include_archived)
    if touch and out:
        touch_records(engine, [m.id for m in out], namespace=ns, now=t_now, actor=None)
    return out


def visible(engine: Engine, memory_id: str, *, at: str | None, namespace: str) -> bool:
    """`Store.visible`."""
    ns = check_namespace(namespace)
    b = engine.backend
    with b.reading():
        row = b.get_records(ns, [check_id(memory_id, "memory id")]).get(memory_id)
        if row is None:
            raise UnknownMemory(memory_id, ns)
        if at is None:
            return False
        rs = ranges(engine, ns, at)
        if rs is None or not row_in_ranges(row, rs):
            return False
        if row.memory.target is not None:
            return True
        return not any(row_in_ranges(r, rs) for r in b.retractions_of(ns, [memory_id]))


def explain(
    engine: Engine, memory_id: str, *, at: str | None, namespace: str, now: float | None
) -> Explanation:
    """`Store.explain`."""
    ns = check_namespace(namespace)
    t_now, _ = check_read_times(now, None)
    b = engine.backend
    with b.reading():
        row = b.get_records(ns, [check_id(memory_id, "memory id")]).get(memory_id)
        if row is None:
            raise UnknownMemory(memory_id, ns)
        if at is None:
            return Explanation(
                memory_id,
                None,
                False,
                "hidden: no anchor was given, and a read without an anchor sees nothing",
            )
        anchor_id, pos = anchor(engine, ns, at)
        where = f"{show(at)}" if anchor_id == at else f"{show(at)} (head {show(anchor_id)})"
        if pos is None:
            return Explanation(
                memory_id,
                at,
                False,
                f"hidden at {where}: the anchor is waiting for "
                "a parent that has not arrived, so nothing is visible there yet",
            )
        rs = ancestor_ranges(pos, engine.seg_parents(ns))
        sources = _source_states(b.get_events(ns, row.memory.sources), row, rs)
        bad = [s for s in sources if s.state != "on_path"]
        if bad:
            return Explanation(
                memory_id,
                at,
                False,
                f"hidden at {where}: " + "; ".join(_why(s, anchor_id) for s in bad),
                sources,
            )
        if row.memory.target is None:
            hiders = tuple(
                r.memory.id for r in b.retractions_of(ns, [memory_id]) if row_in_ranges(r, rs)
            )
            if hiders:
                return Explanation(
                    memory_id,
                    at,
                    False,
                    f"hidden at {where}: retracted by "
                    f"{', '.join(map(repr, hiders))}, whose sources are on the path",
                    sources,
                    hiders,
                )
        names = ", ".join(repr(s.event_id) for s in sources)
        reason = f"visible at {where}: every source ({names}) is on the path"
        note = time_note(engine, ns, row.memory, t_now)
        if note is not None:
            when = "now" if t_now is None else f"at now={t_now}"
            reason += f"; but reads {when} leave it out: {note}"
        return Explanation(memory_id, at, True, reason, sources, hidden_by_time=note)


def path(engine: Engine, at: str | None, namespace: str, *, last: int | None) -> list[Event]:
    """`Store.path`."""
    ns = check_namespace(namespace)
    if last is not None:
        check_int(last, "last")
    if at is None or last == 0:
        return []
    b = engine.backend
    with b.reading():
        anchor_id, pos = anchor(engine, ns, at)
        if pos is None:
            return []
        # Walk parent links one generation per fetch. Every ancestor of a
        # connected event is connected, and (segment, seq) order is topological.
        found: dict[str, EventRow] = {}
        frontier = [anchor_id]
        while frontier and (last is None or len(found) < last):
            rows = b.get_events(ns, frontier)
            found.update(rows)
            frontier = list({p for r in rows.values() for p in r.event.parents if p not in found})
    events = [r.event for r in sorted(found.values(), key=_POS)]
    return events if last is None else events[-last:]


def get_event(engine: Engine, event_id: str, namespace: str) -> Event:
    """`Store.get_event`."""
    ns = check_namespace(namespace)
    b = engine.backend
    with b.reading():
        row = b.get_events(ns, [check_id(event_id, "event id")]).get(event_id)
    if row is None:
        raise UnknownEvent(event_id, ns)
    return row.event


def events(engine: Engine, *, namespace: str, offset: int, limit: int) -> list[Event]:
    """`Store.events`."""
    ns = check_namespace(namespace)
    first, count = check_page(offset, limit)
    b = engine.backend
    with b.reading():
        return [r.event for r in b.list_events(ns, first, count)]


def records(engine: Engine, *, namespace: str, offset: int, limit: int) -> list[Memory]:
    """`Store.records`."""
    ns = check_namespace(namespace)
    first, count = check_page(offset, limit)
    b = engine.backend
    with b.reading():
        return [r.memory for r in b.list_records(ns, first, count)]


def get_memory(engine: Engine, memory_id: str, namespace: str) -> Memory:
    """`Store.get_memory`."""
    ns = check_namespace(namespace)
    b = engine.backend
    with b.reading():
        row = b.get_records(ns, [check_id(memory_id, "memory id")]).get(memory_id)
    if row is None:
        raise UnknownMemory(memory_id, ns)
    return row.memory


def _source_states(
    events: dict[str, EventRow], row: RecordRow, ranges: dict[int, int]
) -> tuple[SourceStatus, ...]:
    out = []
    for s in row.memory.sources:
        r = events.get(s)
        if r is None:
            state = "missing"
        elif r.pos is None:
            state = "not_connected"
        else:
            state = "on_path" if in_ranges(r.pos, ranges) else "off_path"
        out.append(SourceStatus(s, state))
    return tuple(out)


def _why(s: SourceStatus, anchor: str) -> str:
    if s.state == "missing":
        return f"source {show(s.event_id)} has not arrived"
    if s.state == "not_connected":
        return f"source {show(s.event_id)} is waiting for a parent that has not arrived"
    return f"source {show(s.event_id)} is not on the path to {show(anchor)}"
