"""Reads: the gate at an anchor, explanations, paths, and listings.

A derived record is visible at an anchor iff every one of its sources is the
anchor or one of its ancestors, and no retraction of it is visible there.
"""

from __future__ import annotations

from collections.abc import Sequence
from operator import attrgetter
from typing import TYPE_CHECKING, Any, cast

from .backends.base import EventRow, Pos, RecordRow
from .branch_types import CONFLICT
from .errors import InvalidInput, UnknownAnchor, UnknownEvent, UnknownMemory
from .lifecycle import check_read_times, narrow, time_note
from .lineage import ancestor_ranges, in_ranges, row_in_ranges
from .model import RETRACTION, Event, Explanation, Memory, SourceStatus
from .scope import check_anchors, read_chain, read_views
from .store_parts import StoreParts
from .validate import (
    check_id,
    check_int,
    check_kind,
    check_namespace,
    check_page,
    check_utf8,
    show,
)

if TYPE_CHECKING:
    from .store import Store


class ReadOps(StoreParts):
    """`Store` methods that read: the gate, explanations, paths, listings (mixed into `Store`)."""

    def _anchor(self, ns: str, at: Any) -> tuple[str, Pos | None]:
        """The anchor's event id and position (None while it waits for a parent)."""
        if not isinstance(at, str) or not at:
            raise InvalidInput(
                f"`at` must be an event id or a branch name (a non-empty string), got {show(at)}"
            )
        check_utf8(at, f"the anchor {show(at)}")
        row = self._b.get_events(ns, [at]).get(at)
        if row is None:
            head = self._b.get_branch(ns, at)
            if head is None:
                raise UnknownAnchor(at, ns)
            row = self._b.get_events(ns, [head]).get(head)
            if row is None:  # a branch always points at a stored event
                raise UnknownAnchor(at, ns)
        return row.event.id, row.pos

    def _ranges(self, ns: str, at: Any) -> dict[int, int] | None:
        _, pos = self._anchor(ns, at)
        if pos is None:
            return None
        b = self._b
        self._ranges_memo.sync(b.generation())
        return self._ranges_memo.ranges(ns, pos, lambda segs: b.segment_ancestry(ns, segs))

    def memories(
        self,
        *,
        at: str | Sequence[str] | None,
        kind: str | None = None,
        namespace: str = "default",
        now: float | None = None,
        as_of: float | None = None,
        include_archived: bool = False,
        touch: bool = False,
    ) -> list[Memory]:
        """Every record visible at ``at`` (an event id or branch name), oldest first.

        ``at=None`` returns ``[]``: a read without an anchor sees nothing.
        ``at`` may also be a list of anchors in priority order (a scope chain):
        each record visible from any of them comes once, with ``via`` naming
        the first anchor that sees it, earlier anchors' records first.

        Time (see `branchmem.lifecycle`): records expired at ``now`` (default:
        the store's clock), archived, or outside their ``valid_from``/``valid_to``
        are left out; ``include_archived=True`` keeps archived and expired ones.
        ``as_of=t`` answers as the store would have at time ``t``.
        ``touch=True`` records a use of every record returned.

        >>> Store().memories(at=None)
        []
        """
        ns = check_namespace(namespace)
        if kind is not None and kind != RETRACTION and kind != CONFLICT:
            check_kind(kind)
        t_now, t_as_of = check_read_times(now, as_of)
        if at is None:
            return []
        with self._b.reading():  # one read view for the gate and the lifecycle state
            if t_as_of is not None:
                anchors = [at] if isinstance(at, str) else check_anchors(at)
                tag = not isinstance(at, str)
                out = read_chain(cast("Store", self), ns, anchors, kind, as_of=t_as_of, tag=tag)
            elif not isinstance(at, str):
                out = read_chain(cast("Store", self), ns, check_anchors(at), kind)
            else:
                out = self._gate_read(ns, at, kind)
            out = narrow(
                cast("Store", self),
                ns,
                out,
                now=t_now,
                as_of=t_as_of,
                include_archived=include_archived,
            )
        if touch and out:
            self.touch([m.id for m in out], namespace=ns, now=t_now)
        return out

    def _gate_read(self, ns: str, at: str, kind: str | None) -> list[Memory]:
        """One anchor's records (a chain of one, without ``via``)."""
        with self._b.reading():
            ranges = self._ranges(ns, at)
            return (
                [] if ranges is None else read_views(cast("Store", self), ns, [ranges], kind)[0][0]
            )

    def visible(self, memory_id: str, *, at: str | None, namespace: str = "default") -> bool:
        """Is ``memory_id`` visible at ``at``? ``at=None`` is always False.

        >>> store = Store()
        >>> _ = store.add_event("e1")
        >>> m = store.add_memory("x", sources=["e1"])
        >>> store.visible(m.id, at="e1"), store.visible(m.id, at=None)
        (True, False)
        """
        ns = check_namespace(namespace)
        with self._b.reading():
            row = self._b.get_records(ns, [check_id(memory_id, "memory id")]).get(memory_id)
            if row is None:
                raise UnknownMemory(memory_id, ns)
            if at is None:
                return False
            ranges = self._ranges(ns, at)
            if ranges is None or not row_in_ranges(row, ranges):
                return False
            if row.memory.target is not None:
                return True
            return not any(
                row_in_ranges(r, ranges) for r in self._b.retractions_of(ns, [memory_id])
            )

    def explain(
        self,
        memory_id: str,
        *,
        at: str | None,
        namespace: str = "default",
        now: float | None = None,
    ) -> Explanation:
        """Why ``memory_id`` is visible or hidden at ``at``: each source's state, and
        which retraction hides it. ``visible`` is the gate's answer, like
        `visible`; when expiry, validity or the archive hides the record from
        reads at ``now`` (default: the store's clock), ``hidden_by_time`` and
        the reason say so.

        >>> store = Store()
        >>> _ = store.add_events([{"id": "e1"}, {"id": "e2", "parent": "e1"},
        ...                       {"id": "e2b", "parent": "e1"}])
        >>> m = store.add_memory("用户下个月搬去成都", sources=["e2"])
        >>> print(store.explain(m.id, at="e2b"))
        hidden at 'e2b': source 'e2' is not on the path to 'e2b'
        """
        ns = check_namespace(namespace)
        t_now, _ = check_read_times(now, None)
        with self._b.reading():
            row = self._b.get_records(ns, [check_id(memory_id, "memory id")]).get(memory_id)
            if row is None:
                raise UnknownMemory(memory_id, ns)
            if at is None:
                return Explanation(
                    memory_id,
                    None,
                    False,
                    "hidden: no anchor was given, and a read without an anchor sees nothing",
                )
            anchor_id, pos = self._anchor(ns, at)
            where = f"{show(at)}" if anchor_id == at else f"{show(at)} (head {show(anchor_id)})"
            if pos is None:
                return Explanation(
                    memory_id,
                    at,
                    False,
                    f"hidden at {where}: the anchor is waiting for "
                    "a parent that has not arrived, so nothing is visible there yet",
                )
            ranges = ancestor_ranges(pos, self._seg_parents(ns))
            sources = _source_states(self._b.get_events(ns, row.memory.sources), row, ranges)
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
                    r.memory.id
                    for r in self._b.retractions_of(ns, [memory_id])
                    if row_in_ranges(r, ranges)
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
            note = time_note(cast("Store", self), ns, row.memory, t_now)
            if note is not None:
                when = "now" if t_now is None else f"at now={t_now}"
                reason += f"; but reads {when} leave it out: {note}"
            return Explanation(memory_id, at, True, reason, sources, hidden_by_time=note)

    def path(
        self, at: str | None, namespace: str = "default", *, last: int | None = None
    ) -> list[Event]:
        """The anchor's ancestors and itself, root first (a topological order for merges).

        An anchor still waiting for a parent has no path yet (``[]``).
        ``last=n`` returns only the path's last ``n`` events (below a merge, the
        ``n`` nearest ancestors), reading about ``n`` events instead of the
        whole path.

        >>> store = Store()
        >>> _ = store.add_events([{"id": "e1"}, {"id": "e2", "parent": "e1"}])
        >>> [e.id for e in store.path("e2")]
        ['e1', 'e2']
        """
        ns = check_namespace(namespace)
        if last is not None:
            check_int(last, "last")
        if at is None or last == 0:
            return []
        with self._b.reading():
            anchor_id, pos = self._anchor(ns, at)
            if pos is None:
                return []
            # Walk parent links one generation per fetch. Every ancestor of a
            # connected event is connected, and (segment, seq) order is topological.
            found: dict[str, EventRow] = {}
            frontier = [anchor_id]
            while frontier and (last is None or len(found) < last):
                rows = self._b.get_events(ns, frontier)
                found.update(rows)
                frontier = list(
                    {p for r in rows.values() for p in r.event.parents if p not in found}
                )
        events = [r.event for r in sorted(found.values(), key=_POS)]
        return events if last is None else events[-last:]

    def get_event(self, event_id: str, namespace: str = "default") -> Event:
        """The stored event, or `UnknownEvent`."""
        ns = check_namespace(namespace)
        with self._b.reading():
            row = self._b.get_events(ns, [check_id(event_id, "event id")]).get(event_id)
        if row is None:
            raise UnknownEvent(event_id, ns)
        return row.event

    def events(
        self, *, namespace: str = "default", offset: int = 0, limit: int = 1000
    ) -> list[Event]:
        """Every event of the namespace in arrival order (on PostgreSQL: by write
        time, then place in the graph), ``limit`` at a time from ``offset``: for
        inspection and export (the gate is about derived records;
        use `path` for one branch's messages).

        >>> store = Store()
        >>> _ = store.add_events([{"id": "e1"}, {"id": "e2", "parent": "e1"},
        ...                       {"id": "e2b", "parent": "e1"}])
        >>> [e.id for e in store.events(offset=1)]
        ['e2', 'e2b']
        """
        ns = check_namespace(namespace)
        first, count = check_page(offset, limit)
        with self._b.reading():
            return [r.event for r in self._b.list_events(ns, first, count)]

    def records(
        self, *, namespace: str = "default", offset: int = 0, limit: int = 1000
    ) -> list[Memory]:
        """Every stored record of the namespace in write order, visible or not,
        ``limit`` at a time from ``offset``. The gate does not apply: this is for
        inspection and administration. What a model may see is `memories(at=)`;
        `explain` says why a record is hidden at an anchor.

        >>> store = Store()
        >>> _ = store.add_events([{"id": "e1"}, {"id": "e1b"}])
        >>> _ = store.add_memory("A", sources=["e1"]); _ = store.add_memory("B", sources=["e1b"])
        >>> [m.content for m in store.records()], [m.content for m in store.memories(at="e1")]
        (['A', 'B'], ['A'])
        """
        ns = check_namespace(namespace)
        first, count = check_page(offset, limit)
        with self._b.reading():
            return [r.memory for r in self._b.list_records(ns, first, count)]

    def get_memory(self, memory_id: str, namespace: str = "default") -> Memory:
        """The stored record (whatever its visibility), or `UnknownMemory`."""
        ns = check_namespace(namespace)
        with self._b.reading():
            row = self._b.get_records(ns, [check_id(memory_id, "memory id")]).get(memory_id)
        if row is None:
            raise UnknownMemory(memory_id, ns)
        return row.memory


_POS = attrgetter("pos")


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
