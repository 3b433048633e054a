"""The ancestry index: segments, positions and ranges.

The graph is cut into *segments*, chains in which every event's only parent
is the event before it. A connected event sits at ``(segment, seq)``. A
segment records its fork points (``parents``): the positions its first event
hangs from (several after a merge). Segment ids grow in the order segments are
made and a segment's fork points lie in older segments, so ordering events
by ``(segment, seq)`` is a topological order.

The ancestors of an anchor are then a few ranges ``segment -> up_to_seq``,
one per fork on its path, whatever else the store holds.

Events may arrive before their parents. Such an event *waits* (no position)
until every parent is connected; then it and everything waiting on it are
connected in one cascade. Visibility only reads positions, and a position
never changes once given, so answers do not depend on arrival order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from heapq import heappop, heappush

from .backends.base import Backend, EventRow, NewSegment, Pos, RecordRow
from .errors import ConflictingEvent, CycleError, NameClash
from .model import Event

SegParents = Callable[[Iterable[int]], dict[int, tuple[Pos, ...]]]


def same_event(old: Event, new: Event, *, in_batch: bool = False) -> None:
    """Raise `ConflictingEvent` unless ``new`` re-adds ``old`` unchanged
    (``in_batch``: ``old`` came earlier in the same batch)."""
    for name in ("parents", "role", "content", "meta"):
        if getattr(old, name) != getattr(new, name):
            field = "parent" if name == "parents" else name
            raise ConflictingEvent(new.id, new.namespace, field, in_batch=in_batch)


def ancestor_ranges(pos: Pos, seg_parents: SegParents) -> dict[int, int]:
    """``segment -> highest ancestor seq`` for the event at ``pos`` (itself included).

    Each segment's fork points are fetched once, so the cost follows the
    number of segments on the path, not the depth or the store size.
    """
    seg, seq = pos
    ranges = {seg: seq}
    seen = {seg}
    frontier = [seg]
    while frontier:
        found = seg_parents(frontier)
        frontier = []
        for s in sorted(found):
            for ps, pq in found[s]:
                if ranges.get(ps, -1) < pq:
                    ranges[ps] = pq
                if ps not in seen:
                    seen.add(ps)
                    frontier.append(ps)
    return ranges


def in_ranges(pos: Pos, ranges: dict[int, int]) -> bool:
    return ranges.get(pos[0], -1) >= pos[1]


def row_in_ranges(row: RecordRow, ranges: dict[int, int]) -> bool:
    """Is a record's index position, and each ``extra`` one, in ``ranges``?
    (So every source is on the path: the gate's test for one record.)"""
    if row.pos is None or ranges.get(row.pos[0], -1) < row.pos[1]:
        return False
    return all(ranges.get(a, -1) >= b for a, b in row.extra)


def descends_from_all(pos: Pos, others: Iterable[Pos], seg_parents: SegParents) -> bool:
    """Is every position of ``others`` an ancestor-or-self of ``pos``?

    A bounded walk: segments are visited youngest first (a fork point always
    lies in an older segment), so when a segment is reached its highest
    ancestor seq is final and the sources in it are settled at once. The walk
    stops when every source is settled or one cannot be, and never goes below
    the oldest source's segment. Equal to checking ``others`` against
    `ancestor_ranges` (a property test holds it to that), without walking to
    the root on a long forked path.
    """
    need: dict[int, int] = {}
    for s, q in others:
        if need.get(s, -1) < q:
            need[s] = q
    s0, q0 = pos
    if need.pop(s0, -1) > q0:
        return False
    if not need:
        return True
    fetched = seg_parents([s0])
    forks = fetched[s0]
    # The common case, a reply in a segment that forks from its message.
    if all(any(ps == s and pq >= q for ps, pq in forks) for s, q in need.items()):
        return True
    floor = min(need)
    top = max(need)
    ranges = {s0: q0}
    heap = [-s0]
    while heap:
        s = -heappop(heap)
        if top > s:  # segments above s are all settled: ``top`` was never reached
            return False
        q = need.pop(s, -1)
        if q >= 0:
            if ranges[s] < q:
                return False
            if not need:
                return True
            top = max(need)
        if s not in fetched:
            # One lookup for every segment queued, as the full walk does per level.
            fetched.update(seg_parents([s, *(-h for h in heap if -h not in fetched)]))
        for ps, pq in fetched[s]:
            if ps < floor:
                continue
            old = ranges.get(ps)
            if old is None:
                ranges[ps] = pq
                heappush(heap, -ps)
            elif old < pq:
                ranges[ps] = pq
    return False


def batch_seg_parents(seg_parents: SegParents, warm: Iterable[int]) -> SegParents:
    """``seg_parents`` for one batch: the ``warm`` segments fetched in one call up
    front, each other one fetched once on first use."""
    known = seg_parents(set(warm))

    def fetch(segs: Iterable[int]) -> dict[int, tuple[Pos, ...]]:
        segs = list(segs)
        try:
            return {s: known[s] for s in segs}
        except KeyError:  # some not fetched yet: those in one call
            known.update(seg_parents([s for s in segs if s not in known]))
            return {s: known[s] for s in segs}

    return fetch


def index_position(positions: list[Pos], seg_parents: SegParents) -> tuple[Pos, tuple[Pos, ...]]:
    """Where the gate indexes a record whose sources sit at ``positions``.

    If one source descends from all the others, the record is visible exactly
    where that source is, so it alone is the index position. Otherwise the
    record is indexed by one source and the others come back as ``extra``
    positions, each checked on read.
    """
    if len(positions) == 1:
        return positions[0], ()
    if len(positions) == 2:  # the common pair, a message and its reply: no sort, no walk
        a, b = positions
        if a < b:
            a, b = b, a
        s, q = b
        if a[0] == s:
            return a, ()
        # The check `descends_from_all` makes first, for the one other source.
        for ps, pq in seg_parents([a[0]])[a[0]]:
            if ps == s and pq >= q:
                return a, ()
    unique = sorted(set(positions), reverse=True)
    if len({s for s, _ in unique}) == 1:
        return unique[0], ()
    # Deeper segments are younger, so the likely descendant is tried first.
    for i, cand in enumerate(unique):
        if descends_from_all(cand, unique[:i] + unique[i + 1 :], seg_parents):
            return cand, ()
    return unique[0], tuple(unique[1:])


@dataclass
class IngestPlan:
    """What one batch of events changes; computed before anything is written."""

    new_rows: list[EventRow] = field(default_factory=list)
    connected_old: list[tuple[str, Pos]] = field(default_factory=list)
    new_segments: list[NewSegment] = field(default_factory=list)
    tips: dict[int, int] = field(default_factory=dict)
    waits_add: list[tuple[str, str]] = field(default_factory=list)
    waits_drop: list[str] = field(default_factory=list)
    newly_connected: list[str] = field(default_factory=list)


class Ingest:
    """Plans the arrival of a batch of new events against a backend (reads only).

    ``apply`` writes the plan; the caller holds the write transaction around
    both, so a bad event anywhere in the batch leaves the store untouched.
    """

    def __init__(self, backend: Backend, ns: str, seg_parents: SegParents) -> None:
        self.b = backend
        self.ns = ns
        self.seg_parents = seg_parents
        self.rows: dict[str, EventRow | None] = {}
        self.waits: dict[str, list[str]] = {}
        self.db_waits: set[str] = set()
        self.plan = IngestPlan()
        self._next_seg: int | None = None
        self._new_seg_parents: dict[int, tuple[Pos, ...]] = {}
        self._new_ids: set[str] = set()
        self._stored_tips: dict[int, int] = {}

    # lookups through the overlay ------------------------------------------
    def prefetch(self, ids: Iterable[str]) -> None:
        rows = self.rows
        want = list(dict.fromkeys(i for i in ids if i not in rows))
        if not want:
            return
        found = self.b.get_events(self.ns, want)
        rows.update(dict.fromkeys(want))
        rows.update(found)
        # Only unconnected ids can have waiting children: when every id is connected
        # (a reply to a stored message), no lookup at all.
        pending = [i for i in want if (r := found.get(i)) is None or r.pos is None]
        if not pending:
            return
        got = self.b.waiting_children(self.ns, pending)
        for parent, children in got.items():
            self.waits.setdefault(parent, []).extend(children)
            self.db_waits.add(parent)

    def assume_new(self, ids: list[str]) -> None:
        """Treat ``ids`` as not stored, without looking them up.

        `apply` then fails with `DuplicateIds` if one was stored after all, and
        the caller plans again with `prefetch`. Events waiting on these ids are
        still fetched (backends answer that from an emptiness check).
        """
        rows = self.rows
        fresh = [i for i in ids if i not in rows] if rows else ids
        rows.update(dict.fromkeys(fresh))
        got = self.b.waiting_children(self.ns, fresh)
        for parent, children in got.items():
            self.waits.setdefault(parent, []).extend(children)
            self.db_waits.add(parent)

    def row(self, event_id: str) -> EventRow | None:
        if event_id not in self.rows:
            self.prefetch([event_id])
        return self.rows[event_id]

    def _children(self, event_id: str) -> list[str]:
        if event_id not in self.waits:
            self.prefetch([event_id])
        return self.waits.get(event_id, [])

    def prefetch_tips(self, events: list[Event]) -> None:
        """`prefetch_tips_of` the single parents of ``events``."""
        self.prefetch_tips_of(e.parents[0] for e in events if len(e.parents) == 1)

    def prefetch_tips_of(self, parents: Iterable[str], *, least: int = 2) -> None:
        """Fetch in one call the stored tips of the segments that ``parents``
        (single parents of new events) sit in (each would otherwise be one
        lookup in `_tip`). By default only for two segments or more: one is
        fetched when needed."""
        rows, known, planned = self.rows, self._stored_tips, self.plan.tips
        segs = {
            r.pos[0]
            for p in parents
            if (r := rows.get(p)) is not None
            and r.pos is not None
            and r.pos[0] not in known
            and r.pos[0] not in planned
        }
        if len(segs) >= least:
            known.update(self.b.segment_tips(self.ns, segs))

    def prefetch_next_segment(self) -> None:
        """Look up now the number the first new segment will take."""
        if self._next_seg is None:
            self._next_seg = self.b.max_segment(self.ns) + 1

    def _tip(self, seg: int) -> int:
        """The segment's last seq: planned in this batch, or as stored."""
        tip = self.plan.tips.get(seg)
        if tip is None:
            tip = self._stored_tips.get(seg)
            if tip is None:
                tip = self._stored_tips[seg] = self.b.segment_tips(self.ns, [seg])[seg]
        return tip

    def seg_parents_overlay(self, segs: Iterable[int]) -> dict[int, tuple[Pos, ...]]:
        out: dict[int, tuple[Pos, ...]] = {}
        rest = []
        for s in segs:
            if s in self._new_seg_parents:
                out[s] = self._new_seg_parents[s]
            else:
                rest.append(s)
        if rest:
            out.update(self.seg_parents(rest))
        return out

    def pos_of(self, event_id: str) -> Pos | None:
        r = self.row(event_id)
        return None if r is None else r.pos

    # planning ---------------------------------------------------------------
    def add_all(self, events: list[Event], branch_names: set[str]) -> list[Event]:
        """Plan a batch of checked events, in order; returns what is stored for each.

        An id already stored (or earlier in the batch) must name an identical
        event, which is then a no-op. The common case, a reply to a connected
        message, is placed inline: this loop runs once per event of an import.
        """
        rows, plan, waits = self.rows, self.plan, self.waits
        tips = plan.tips
        keep, placed, connected = (
            self._new_ids.add,
            plan.new_rows.append,
            plan.newly_connected.append,
        )
        out: list[Event] = []
        give = out.append
        for ev in events:
            eid = ev.id
            old = rows[eid] if eid in rows else self.row(eid)
            if old is not None:
                same_event(old.event, ev, in_batch=eid in self._new_ids)
                give(old.event)
                continue
            if branch_names and eid in branch_names:
                raise NameClash(eid, self.ns, "a branch")
            give(ev)
            parents = ev.parents
            if len(parents) == 1 and (p := parents[0]) != eid:
                prow = rows[p] if p in rows else self.row(p)
                if prow is not None and (ppos := prow.pos) is not None:
                    seg, seq = ppos
                    tip = tips[seg] if seg in tips else self._tip(seg)
                    if tip == seq:
                        tips[seg] = seq + 1
                        pos = (seg, seq + 1)
                    else:
                        pos = self._new_segment((ppos,))
                    row = EventRow(ev, pos)
                    rows[eid] = row
                    keep(eid)
                    placed(row)
                    connected(eid)
                    if waits and waits.get(eid):
                        self._cascade(eid)
                    continue
            self.add(ev)
        return out

    def add(self, event: Event) -> None:
        """Plan one new event (the caller has checked it is new and valid)."""
        row = EventRow(event, None)
        rows = self.rows
        eid = event.id
        rows[eid] = row
        self._new_ids.add(eid)
        plan = self.plan
        plan.new_rows.append(row)
        parents = event.parents
        if eid in parents:
            raise CycleError(eid, self.ns)
        unconnected = [
            p
            for p in parents
            if (r := rows[p] if p in rows else self.row(p)) is None or r.pos is None
        ]
        if not unconnected:
            self._connect(row)
            return
        if self._creates_cycle(event, unconnected):
            raise CycleError(eid, self.ns)
        for p in unconnected:
            self.waits.setdefault(p, []).append(eid)
            plan.waits_add.append((p, eid))

    def _creates_cycle(self, event: Event, unconnected: list[str]) -> bool:
        """Is some parent of ``event`` also one of its (waiting) descendants?

        Walks up from the parents and down from the event in step, stopping
        when either side runs out: a chain arriving forwards under a missing
        root and one arriving backwards both cost little.
        """
        targets = {p for p in unconnected if self.row(p) is not None}
        if not targets:
            return False
        up, up_seen = list(targets), set(targets)
        down, down_seen = [event.id], {event.id}
        while up and down:
            x = up.pop()
            r = self.row(x)
            if r is not None and r.pos is None:
                for p in r.event.parents:
                    if p == event.id:
                        return True
                    pr = self.row(p)
                    if pr is not None and pr.pos is None and p not in up_seen:
                        up_seen.add(p)
                        up.append(p)
            y = down.pop()
            for c in self._children(y):
                if c in targets:
                    return True
                if c not in down_seen:
                    down_seen.add(c)
                    down.append(c)
        return False

    def _new_segment(self, parents: tuple[Pos, ...]) -> Pos:
        self.prefetch_next_segment()
        assert self._next_seg is not None
        seg = self._next_seg
        self._next_seg += 1
        self.plan.new_segments.append(NewSegment(seg, parents))
        self._new_seg_parents[seg] = parents
        self.plan.tips[seg] = 0
        return (seg, 0)

    def _place(self, event: Event) -> Pos:
        parents = event.parents
        if not parents:
            return self._new_segment(())
        if len(parents) == 1:
            ppos = self.pos_of(parents[0])
            assert ppos is not None
            seg, seq = ppos
            if self._tip(seg) == seq:
                self.plan.tips[seg] = seq + 1
                return (seg, seq + 1)
            return self._new_segment((ppos,))
        positions = []
        for p in parents:
            pp = self.pos_of(p)
            assert pp is not None
            positions.append(pp)
        return self._new_segment(tuple(positions))

    def _connect(self, first: EventRow) -> None:
        """Give ``first`` a position, then everything that was waiting only on it."""
        stack = [first]
        while stack:
            row = stack.pop()
            if row.pos is not None:
                continue
            row.pos = self._place(row.event)
            eid = row.event.id
            self.plan.newly_connected.append(eid)
            if eid not in self._new_ids:
                self.plan.connected_old.append((eid, row.pos))
            stack.extend(self._ready_children(eid))

    def _cascade(self, eid: str) -> None:
        """``eid`` just connected: connect the events waiting on it that are now ready."""
        for child in self._ready_children(eid):
            self._connect(child)

    def _ready_children(self, eid: str) -> list[EventRow]:
        children = self.waits.pop(eid, None)
        if not children:
            return []
        if eid in self.db_waits:
            self.plan.waits_drop.append(eid)
        ready = []
        # Reversed so that, popped from a stack, children connect in arrival order.
        for c in reversed(children):
            crow = self.row(c)
            if crow is None or crow.pos is not None:
                continue
            if all(self.pos_of(p) is not None for p in crow.event.parents):
                ready.append(crow)
        return ready

    def apply(self, *, rows_written: bool = False) -> IngestPlan:
        """Write the plan through the backend (inside the caller's transaction);
        ``rows_written``: its new rows are stored already (streamed)."""
        plan = self.plan
        b, ns = self.b, self.ns
        # First: it may raise DuplicateIds before anything is written.
        if plan.new_rows and not rows_written:
            b.insert_events(ns, plan.new_rows)
        if plan.new_segments or plan.tips:
            b.put_segments(ns, plan.new_segments, plan.tips)
        if plan.connected_old:
            b.set_event_positions(ns, plan.connected_old)
        if plan.waits_drop:
            b.drop_waits(ns, plan.waits_drop)
        live = [(p, c) for p, c in plan.waits_add if self.pos_of(p) is None]
        if live:
            b.add_waits(ns, live)
        return plan
