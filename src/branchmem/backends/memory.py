"""In-memory backend: dicts and sorted per-segment lists. For tests and ephemeral agents."""

from __future__ import annotations

import sys
import threading
from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from itertools import islice
from typing import Any

from ..branch_types import AuditEntry, HeadMove, Snapshot
from ..model import CONSOLIDATED_FROM, Memory, memory_with
from .base import (
    BranchRow,
    DuplicateIds,
    EventRow,
    Generation,
    LifeRow,
    NewSegment,
    Pos,
    Ranges,
    RecordRow,
    Stamp,
)
from .jobs import Job
from .memory_index import COLD as _COLD
from .memory_index import SEQ as _SEQ
from .memory_index import upto as _upto
from .memory_index import warm as _warm
from .memory_jobs import MemoryJobs
from .memory_rows import StoredEvent, StoredRecord, compact_ids, stored_event, stored_record
from .memory_tree import Kids, TreeReads, index_kids
from .memory_vectors import Rows, VectorRows
from .memory_vectors import forget as forget_vectors


class _Space:
    """Everything of one namespace."""

    def __init__(self) -> None:
        self.events: dict[str, StoredEvent] = {}
        self.waits: dict[str, list[str]] = {}
        self.seg_parents: dict[int, tuple[Pos, ...]] = {}
        self.tips: dict[int, int] = {}
        self.records: dict[str, StoredRecord] = {}
        # seg -> [rows, top, warm]: the stored records indexed in the segment,
        # sorted by the seq of their position; the first ``warm`` of them hold
        # their Memory (see `_warm`); ``top`` is the last one's seq if all do,
        # else _COLD (so a read checks one number for a segment read whole).
        self.index: dict[int, list[Any]] = {}
        self.by_target: dict[str, list[str]] = {}
        self.consolidated: set[str] = set()  # records whose meta names inputs
        self.record_waits: dict[str, list[str]] = {}
        self.branches: dict[str, BranchRow] = {}
        self.moves: dict[str, list[HeadMove]] = {}
        self.snapshots: dict[str, Snapshot] = {}
        self.audit: list[AuditEntry] = []
        self.life: dict[str, LifeRow] = {}
        self.timed = 0  # records with expires_at, valid_from or valid_to
        self.top = 0  # the highest record seq (seqs count within the namespace)
        self.vectors: Rows = {}  # embedder -> id -> vec
        self.terms: Rows = {}  # tokenizer key -> id -> tokens
        self.kids: Kids | None = None  # built by the first tree read (`memory_tree`)


_EMPTY = _Space()


def _row_of(r: StoredRecord, ns: str) -> RecordRow:
    """A new row for a stored record, around its shared `Memory`."""
    return RecordRow(r.warm(ns), r.pos, r.extra)


class MemoryBackend(TreeReads, VectorRows, MemoryJobs):
    """Keeps everything in process memory; a lock makes it safe across threads.

    Writes are planned and checked before they reach a backend, so a write
    that raises midway here is a bug, not bad input.
    """

    shares_rows = True

    def __init__(self) -> None:
        self._spaces: dict[str, _Space] = {}
        self._lock = threading.RLock()
        self._tx_depth = 0
        self._after: list[Callable[[], None]] = []  # run once the transaction ends well
        self._writes = 0
        self._erasures = 0
        self._quick = Generation(0, 0)  # quick_generation's last answer
        self._detached: list[list[AuditEntry]] = []  # audit logs of dropped namespaces
        self._query_logs: set[str] = set()
        self._jobs: dict[tuple[str, str], Job] = {}  # the extraction queue (`memory_jobs`)

    def _read(self, ns: str) -> _Space:
        # Reads of an unknown namespace see an empty space and create nothing.
        return self._spaces.get(ns) or _EMPTY

    def _space(self, ns: str) -> _Space:
        sp = self._spaces.get(ns)
        if sp is None:
            sp = self._spaces[ns] = _Space()
        return sp

    @contextmanager
    def transaction(self) -> Iterator[None]:
        with self._lock:
            self._tx_depth += 1
            done = False
            try:
                yield
                done = True
            finally:
                self._writes += 1
                self._tx_depth -= 1
                if not self._tx_depth:
                    after, self._after = self._after, []
                    for fn in after if done else ():
                        fn()

    def after_commit(self, fn: Callable[[], None]) -> None:
        """Run ``fn`` once the open write transaction ends well (at once outside one)."""
        with self._lock:
            if self._tx_depth:
                self._after.append(fn)
                return
        fn()

    def generation(self, ns: str | None = None) -> Generation:
        return Generation(self._writes, self._erasures)  # store-wide: one writer

    def quick_generation(self) -> Generation | None:
        # Both counters move inside a transaction only; none is open, so the pair
        # is a committed state (one that moves meanwhile shows as a new pair later).
        if self._tx_depth:
            return None
        g, w, e = self._quick, self._writes, self._erasures
        if g.writes != w or g.erasures != e:
            g = self._quick = Generation(w, e)
        return g

    @contextmanager
    def reading(self) -> Iterator[None]:
        with self._lock:
            yield

    def close(self) -> None:
        pass

    # events -----------------------------------------------------------------
    def get_events(self, ns: str, ids: Iterable[str]) -> dict[str, EventRow]:
        # New rows and events each time: a planner may set a row's pos.
        events = self._read(ns).events
        return {i: EventRow(r.event(ns), r.pos) for i in ids if (r := events.get(i)) is not None}

    def event_positions(self, ns: str, ids: Iterable[str]) -> dict[str, Pos | None]:
        events = self._read(ns).events
        return {i: r.pos for i in ids if (r := events.get(i)) is not None}

    def insert_events(self, ns: str, rows: list[EventRow]) -> None:
        sp = self._space(ns)
        events = sp.events
        if any(r.event.id in events for r in rows):
            raise DuplicateIds(ns)
        for r in rows:
            ev = r.event
            events[ev.id] = stored_event(ev, compact_ids(ev.parents, events), r.pos)
        if sp.kids is not None:
            index_kids(sp.kids, (events[r.event.id] for r in rows))

    def set_event_positions(self, ns: str, positions: list[tuple[str, Pos]]) -> None:
        events = self._space(ns).events
        for eid, (seg, seq) in positions:
            row = events[eid]
            row.seg, row.seq = seg, seq

    def waiting_children(self, ns: str, parent_ids: Iterable[str]) -> dict[str, list[str]]:
        waits = self._read(ns).waits
        if not waits:
            return {}
        return {p: list(c) for p in parent_ids if (c := waits.get(p))}

    def add_waits(self, ns: str, pairs: list[tuple[str, str]]) -> None:
        waits = self._space(ns).waits
        for p, c in pairs:
            waits.setdefault(p, []).append(c)

    def drop_waits(self, ns: str, parent_ids: list[str]) -> None:
        waits = self._space(ns).waits
        for p in parent_ids:
            waits.pop(p, None)

    # segments ---------------------------------------------------------------
    def segment_parents(self, ns: str, segs: Iterable[int]) -> dict[int, tuple[Pos, ...]]:
        sp = self._read(ns).seg_parents
        return {s: sp[s] for s in segs}

    segment_ancestry = segment_parents  # nothing to save: every lookup is a dict's

    def segment_tips(self, ns: str, segs: Iterable[int]) -> dict[int, int]:
        tips = self._read(ns).tips
        # As the SQL backends: a segment not stored is left out.
        return {s: tips[s] for s in segs if s in tips}

    def max_segment(self, ns: str) -> int:
        sp = self._read(ns)
        return len(sp.seg_parents) - 1

    def put_segments(self, ns: str, new: list[NewSegment], tips: dict[int, int]) -> None:
        sp = self._space(ns)
        for s in new:
            sp.seg_parents[s.seg] = s.parents
        sp.tips.update(tips)

    # records ----------------------------------------------------------------
    def get_records(self, ns: str, ids: Iterable[str]) -> dict[str, RecordRow]:
        # New rows around the shared (built once, immutable) Memory objects.
        recs = self._read(ns).records
        return {i: _row_of(r, ns) for i in ids if (r := recs.get(i)) is not None}

    def insert_records(self, ns: str, rows: list[RecordRow]) -> list[Memory]:
        sp = self._space(ns)
        events = sp.events
        out = []
        for r in rows:
            sp.top += 1  # numbered within the namespace, like the SQL backends
            # Sources as the stored events' own id strings: one copy of each id.
            srcs = compact_ids(r.memory.sources, events)
            sources = () if srcs is None else (srcs,) if isinstance(srcs, str) else srcs
            m = memory_with(r.memory, seq=sp.top, sources=sources)
            row = stored_record(m, srcs)
            sp.records[m.id] = row
            if m.expires_at is not None or m.valid_from is not None or m.valid_to is not None:
                sp.timed += 1
            if m.target is not None:
                sp.by_target.setdefault(m.target, []).append(m.id)
            if m.meta is not None and CONSOLIDATED_FROM in m.meta:
                sp.consolidated.add(m.id)
            if r.pos is not None:
                self._index(sp, row, r.pos, r.extra)
            out.append(m)
        return out

    @staticmethod
    def _index(sp: _Space, row: StoredRecord, pos: Pos, extra: tuple[Pos, ...]) -> None:
        row.pos, row.extra = pos, extra
        entry = sp.index.get(pos[0])
        if entry is None:
            entry = sp.index[pos[0]] = [[], _COLD, 0, {}]
        rows = entry[0]
        entry[1] = _COLD  # the new row has no Memory yet
        if not rows or rows[-1]._seq <= pos[1]:
            rows.append(row)
        else:
            i = bisect_right(rows, pos[1], key=_SEQ)
            rows.insert(i, row)
            entry[2] = min(entry[2], i)  # the rows from i on are checked again
            entry[3] = {}  # cuts past i moved

    def set_record_positions(
        self, ns: str, positions: list[tuple[str, Pos, tuple[Pos, ...]]]
    ) -> None:
        sp = self._space(ns)
        for rid, pos, extra in positions:
            self._index(sp, sp.records[rid], pos, extra)

    def records_in_ranges(
        self, ns: str, ranges: Ranges, after: Ranges | None = None
    ) -> Iterator[RecordRow]:
        get = self._read(ns).index.get
        # One flat list, extended in C. On a long forked path there is a range
        # per fork, most of them a segment's every row: a slice or an iterator
        # per fork made the read several times slower. The rows handed out are
        # the stored ones, each holding its Memory (built here on a first read).
        out: list[RecordRow] = []
        add = out.extend
        if after:
            for seg, upto in ranges.items():
                if (entry := get(seg)) is not None:
                    rows, top, warm, _ = entry
                    hi = len(rows) if top <= upto else _upto(entry, upto)
                    if warm < hi:
                        _warm(entry, hi, ns)
                    add(rows[bisect_right(rows, after.get(seg, -1), key=_SEQ) : hi])
            return iter(out)
        for seg, upto in ranges.items():
            if (entry := get(seg)) is not None:
                rows, top, warm, _ = entry
                if top <= upto:  # every row in range, each with its Memory
                    add(rows)
                    continue
                hi = _upto(entry, upto)
                if warm < hi:
                    _warm(entry, hi, ns)
                add(rows if hi == len(rows) else rows[:hi])
        return iter(out)

    def retractions_of(self, ns: str, target_ids: Iterable[str]) -> list[RecordRow]:
        sp = self._read(ns)
        return [_row_of(sp.records[r], ns) for t in target_ids for r in sp.by_target.get(t, ())]

    def records_waiting_on(self, ns: str, event_ids: Iterable[str]) -> dict[str, list[str]]:
        waits = self._read(ns).record_waits
        if not waits:
            return {}
        return {e: list(r) for e in event_ids if (r := waits.get(e))}

    def add_record_waits(self, ns: str, pairs: list[tuple[str, str]]) -> None:
        waits = self._space(ns).record_waits
        for e, r in pairs:
            waits.setdefault(e, []).append(r)

    def drop_record_waits(self, ns: str, event_ids: list[str]) -> None:
        waits = self._space(ns).record_waits
        for e in event_ids:
            waits.pop(e, None)

    # branches ---------------------------------------------------------------
    def get_branch(self, ns: str, name: str) -> str | None:
        row = self._read(ns).branches.get(name)
        return None if row is None else row.head

    def set_branch(self, ns: str, name: str, head: str) -> None:
        branches = self._space(ns).branches
        row = branches.get(name)
        if row is None:
            branches[name] = BranchRow(name, head, head)
        else:
            row.head = head

    def list_branches(self, ns: str) -> list[tuple[str, str]]:
        return sorted((n, r.head) for n, r in self._read(ns).branches.items())

    def get_branch_row(self, ns: str, name: str) -> BranchRow | None:
        row = self._read(ns).branches.get(name)
        return None if row is None else replace(row)

    def list_branch_rows(self, ns: str) -> list[BranchRow]:
        rows = self._read(ns).branches
        return [replace(rows[n]) for n in sorted(rows)]

    def put_branch_row(self, ns: str, row: BranchRow) -> None:
        self._space(ns).branches[row.name] = replace(row)

    def delete_branch(self, ns: str, name: str) -> None:
        self._space(ns).branches.pop(name, None)

    def add_head_moves(self, ns: str, moves: list[HeadMove]) -> None:
        sp = self._space(ns)
        for m in moves:
            sp.moves.setdefault(m.branch, []).append(m)

    def head_moves(self, ns: str, name: str) -> list[HeadMove]:
        return list(self._read(ns).moves.get(name, ()))

    def get_snapshot(self, ns: str, name: str) -> Snapshot | None:
        return self._read(ns).snapshots.get(name)

    def put_snapshot(self, ns: str, snap: Snapshot) -> None:
        self._space(ns).snapshots[snap.name] = snap

    def list_snapshots(self, ns: str) -> list[Snapshot]:
        snaps = self._read(ns).snapshots
        return [snaps[n] for n in sorted(snaps)]

    # lifecycle and erasure ----------------------------------------------------
    def has_lifecycle(self, ns: str) -> bool:
        sp = self._read(ns)
        return sp.timed > 0 or bool(sp.life)

    def get_life(self, ns: str, ids: Iterable[str]) -> dict[str, LifeRow]:
        life = self._read(ns).life
        return {i: replace(r) for i in ids if (r := life.get(i)) is not None}

    def put_life(self, ns: str, rows: dict[str, LifeRow]) -> None:
        life = self._space(ns).life
        for i, r in rows.items():
            life[i] = replace(r)

    def expired_records(self, ns: str, now: float) -> list[str]:
        return [
            i
            for i, r in self._read(ns).records.items()
            if (e := r.expires_at) is not None and e <= now
        ]

    def consolidations(self, ns: str) -> list[str]:
        sp = self._read(ns)
        return sorted(sp.consolidated, key=lambda rid: sp.records[rid].seq)

    def records_with_sources(self, ns: str, event_ids: Iterable[str]) -> list[str]:
        want = set(event_ids)
        return [i for i, r in self._read(ns).records.items() if want.intersection(r.source_ids())]

    def records_of_kind(self, ns: str, kind: str) -> list[RecordRow]:
        return [_row_of(r, ns) for r in self._read(ns).records.values() if r.kind == kind]

    def delete_records(self, ns: str, ids: list[str]) -> None:
        sp = self._space(ns)
        self._erasures += 1
        gone = set(ids)
        segs = set()
        for rid in ids:
            row = sp.records.pop(rid, None)
            sp.life.pop(rid, None)
            sp.consolidated.discard(rid)
            forget_vectors(sp, rid)
            if row is None:
                continue
            if row.timed:
                sp.timed -= 1
            t = row.target
            if t is not None and t in sp.by_target:
                sp.by_target[t] = [x for x in sp.by_target[t] if x != rid]
            if row.pos is not None:
                segs.add(row.pos[0])
        for seg in segs:  # each touched segment is rebuilt once
            sp.index[seg] = [[r for r in sp.index[seg][0] if r.id not in gone], _COLD, 0, {}]
        for rid in ids:
            sp.by_target.pop(rid, None)
        # The next seq follows the highest one left (as max(seq) + 1 does in SQL).
        sp.top = max((r.seq for r in sp.records.values()), default=0)
        for ev, recs in list(sp.record_waits.items()):
            sp.record_waits[ev] = [r for r in recs if r not in gone]

    def erase_event(self, ns: str, event_id: str) -> None:
        sp = self._space(ns)
        self._erasures += 1
        row = sp.events.get(event_id)
        if row is not None:
            row.erase()

    def drop_namespace(self, ns: str) -> None:
        sp = self._spaces.pop(ns, None)
        self._erasures += 1
        self._drop_jobs(ns)
        # The name goes; the audit lines (ops, times and actors, not their ids) stay, detached.
        if sp is not None and sp.audit:
            self._detached.append([replace(e, ids=()) for e in sp.audit])

    # audit ------------------------------------------------------------------
    def list_events(self, ns: str, offset: int, limit: int) -> list[EventRow]:
        rows = islice(self._read(ns).events.values(), offset, _stop(offset, limit))
        return [EventRow(r.event(ns), r.pos) for r in rows]

    def record_top(self, ns: str) -> int:
        return self._read(ns).top

    def record_stamps(self, ns: str, kinds: tuple[str, ...]) -> dict[str, Stamp]:
        return {
            r.id: (r.seq, r.at, r.content, r.source_ids(), r.target)
            for r in self._read(ns).records.values()
            if r.kind in kinds
        }

    def records_since(self, ns: str, seq: int) -> list[RecordRow]:
        # The stored rows, like records_in_ranges: each holds its (shared) Memory.
        out: list[RecordRow] = []
        for r in reversed(self._read(ns).records.values()):  # inserted in seq order
            if r.seq <= seq:
                break
            r.warm(ns)
            out.append(r)
        out.reverse()
        return out

    def list_records(self, ns: str, offset: int, limit: int) -> list[RecordRow]:
        # Built for the listing alone: paging through the store keeps no Memory.
        rows = islice(self._read(ns).records.values(), offset, _stop(offset, limit))
        return [RecordRow(r.memory or r.build(ns), r.pos, r.extra) for r in rows]

    def add_audit(self, ns: str, entries: list[AuditEntry]) -> None:
        log = self._space(ns).audit
        for e in entries:  # numbered within the namespace: no tenant sees another's volume
            log.append(replace(e, seq=len(log) + 1))

    def audit(self, ns: str, since: float | None) -> list[AuditEntry]:
        log = self._read(ns).audit
        return list(log) if since is None else [e for e in log if e.at >= since]

    # query logs ---------------------------------------------------------------
    def query_logs(self) -> list[str]:
        return sorted(self._query_logs)

    def add_query_log(self, path: str) -> None:
        self._query_logs.add(path)


def _stop(offset: int, limit: int) -> int:
    """Where a page ends, for `islice` (which takes no stop past ``sys.maxsize``)."""
    return min(offset + limit, sys.maxsize)
