"""Reads by time: what a read at ``now`` or ``as_of`` leaves out of the gate's answer.

None of this is a second visibility mechanism: the gate decides what an
anchor can see, and these only narrow a read's answer by time and by archive
state (`branchmem.ops.lifecycle` says what each rule means).
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from ..backends.base import EventRow, LifeRow
from ..engine import Engine
from ..errors import UnknownAnchor
from ..model import Memory
from ..validate import check_time


def check_read_times(now: Any, as_of: Any) -> tuple[float | None, float | None]:
    return check_time(now, "now"), check_time(as_of, "as_of")


def narrow(
    engine: Engine,
    ns: str,
    out: list[Memory],
    *,
    now: float | None,
    as_of: float | None,
    include_archived: bool,
) -> list[Memory]:
    """Drop records that a read at ``now`` (or ``as_of``) must not show."""
    b = engine.backend
    with b.reading():
        if not out or not b.has_lifecycle(ns):  # the usual case, answered in O(1)
            return out
        life = b.get_life(ns, [m.id for m in out])
    t = now if now is not None else as_of if as_of is not None else engine.clock()
    cutoff = as_of if as_of is not None else float("inf")
    return [m for m in out if time_hides(m, life.get(m.id), t, cutoff, include_archived) is None]


def time_hides(
    m: Memory, life: LifeRow | None, t: float, cutoff: float, include_archived: bool
) -> str | None:
    """What makes a read at time ``t`` leave ``m`` out (archive state as of
    ``cutoff``): ``"valid_from"``, ``"valid_to"``, ``"archived"`` or
    ``"expires_at"``; None if it shows it."""
    if m.valid_from is not None and t < m.valid_from:
        return "valid_from"
    if m.valid_to is not None and t >= m.valid_to:
        return "valid_to"
    if include_archived:
        return None
    if life is not None and life.archived_at is not None and life.archived_at <= cutoff:
        return "archived"
    restored = life is not None and life.restored_at is not None and life.restored_at <= cutoff
    if m.expires_at is not None and m.expires_at <= t and not restored:
        return "expires_at"
    return None


def _when(t: float) -> str:
    try:
        return datetime.fromtimestamp(t, timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
    except (ValueError, OverflowError, OSError):  # beyond the calendar: say the number
        return f"{t:g} (seconds since 1970)"


def time_note(engine: Engine, ns: str, m: Memory, now: float | None) -> str | None:
    """Why a read at ``now`` (default: the store's clock) leaves out a record the
    gate shows."""
    b = engine.backend
    with b.reading():
        if not b.has_lifecycle(ns):
            return None
        life = b.get_life(ns, [m.id]).get(m.id)
    why = time_hides(m, life, engine.clock() if now is None else now, float("inf"), False)
    if why == "valid_from":
        return f"it holds only from {_when(m.valid_from or 0.0)} (valid_from)"
    if why == "valid_to":
        return f"it held only until {_when(m.valid_to or 0.0)} (valid_to)"
    if why == "archived":
        assert life is not None and life.archived_at is not None
        return f"it was archived at {_when(life.archived_at)}; restore() brings it back"
    if why == "expires_at":
        return f"it expired at {_when(m.expires_at or 0.0)}; include_archived=True shows it"
    return None


def anchor_as_of(engine: Engine, ns: str, at: str, as_of: float) -> str | None:
    """The event ``at`` named at time ``as_of`` (None if it named nothing yet).

    An event names something at ``as_of`` once it is connected then: it and
    every ancestor were written by that time. Its own time is checked first,
    then its ancestors a generation at a time, stopping at the first one
    written later (the store keeps no connection time, so a yes still reads
    every ancestor's)."""
    b = engine.backend
    row = b.get_events(ns, [at]).get(at)
    event = at
    if row is None:
        moves = b.head_moves(ns, at)
        if not moves:
            raise UnknownAnchor(at, ns)
        then = [m for m in moves if m.at <= as_of]
        if not then or then[-1].to_head is None:
            return None
        event = then[-1].to_head
        row = b.get_events(ns, [event]).get(event)
        if row is None:
            raise UnknownAnchor(event, ns)
    if row.pos is None:
        return None  # waiting for a parent: no path yet
    seen: set[str] = set()
    frontier: list[EventRow] = [row]
    while frontier:
        if any(r.event.created_at > as_of for r in frontier):
            return None  # not connected yet at that time
        seen.update(r.event.id for r in frontier)
        parents = {p for r in frontier for p in r.event.parents if p not in seen}
        frontier = list(b.get_events(ns, parents).values()) if parents else []
    return event
