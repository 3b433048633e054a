"""Every edge record of a namespace, indexed by entity and by segment, kept
between reads (a cache of the engine, under its one rule).

The index holds all edges, whichever branch they came from; a view keeps only
those whose index position lies in its anchor's ranges (`GraphView`). So that
a read touches only what can be visible, each entity's edges are grouped by
the segment of their position: a read looks at the segments its ranges and
the entity share, never at an abandoned branch's segment.

Kept up to date inside each read: when the namespace's ``writes`` moved, the
records written since are appended (`RecordLog`), and the few rows that were
waiting for a source are fetched again; a backend without a record log is
read again whole. After an erasure (seen by `Engine.sync`, whoever purged)
the index is rebuilt from what it holds: the backend's `RecordStamps` say
which edges and retractions are still stored, those gone (or stored again
under the same number, as a purge lets a number be given again) are left
out, and only the records it does not hold are read. The rebuilt index is a
new object: a view made before keeps the one it was made over.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable

from ..backends.base import RecordLog, RecordRow, RecordStamps, Stamp
from ..engine import Engine
from ..model import EDGE, RETRACTION
from .mentions import Mentions
from .model import ALIAS, Edge, edge_of, norm


class NsIndex:
    """One namespace's edges and the retractions that aim at records."""

    def __init__(self) -> None:
        self.writes: int | None = None
        self.top: int | None = None  # highest record seq read through the record log
        self.rows: dict[str, RecordRow] = {}
        self.edges: dict[str, Edge] = {}
        self.ends: dict[str, tuple[str, str]] = {}  # id -> normalised (subject, object)
        self.by_name: dict[str, dict[int, list[RecordRow]]] = {}
        self.display: dict[str, str] = {}  # normalised name -> first spelling seen
        self.alias_subjects: set[str] = set()
        self.alias_ids: set[str] = set()
        self.retractions: dict[str, list[RecordRow]] = {}
        self.pending: set[str] = set()
        self.lock = threading.Lock()
        self.names_version = 0
        self.max_seq = 0
        self.matcher: tuple[int, Mentions] | None = None
        self.timed = False  # does an edge have a time bound (valid_from/valid_to/expiry)?
        self.erased = False  # something was erased since it was read: rebuild before use

    def mentions(self) -> Mentions:
        """A matcher of every name an edge here names (kept until a new name comes)."""
        kept = self.matcher
        if kept is None or kept[0] != self.names_version:
            kept = self.matcher = (self.names_version, Mentions(list(self.display)))
        return kept[1]

    def add(self, row: RecordRow, edge: Edge | None = None) -> None:
        """Take in one record row (``edge``: its `Edge`, if already made)."""
        m = row.memory
        if m.seq > self.max_seq:
            self.max_seq = m.seq
        if m.target is not None:
            lst = self.retractions.setdefault(m.target, [])
            lst[:] = [r for r in lst if r.memory.id != m.id]
            lst.append(row)
        elif m.kind == EDGE:
            old = self.rows.get(m.id)
            if old is not None and old.pos is not None:
                return
            e = edge if edge is not None else edge_of(m)
            if m.valid_from is not None or m.valid_to is not None or m.expires_at is not None:
                self.timed = True
            s, o = norm(e.subject), norm(e.object)
            self.rows[m.id] = row
            self.edges[m.id] = e
            self.ends[m.id] = (s, o)
            for key, name in ((s, e.subject), (o, e.object)):
                if key not in self.display:
                    self.display[key] = name
                    self.names_version += 1
            if norm(e.predicate) == ALIAS:
                self.alias_subjects.add(s)
                self.alias_ids.add(m.id)
            if row.pos is not None:
                for key in {s, o}:
                    self.by_name.setdefault(key, {}).setdefault(row.pos[0], []).append(row)
        else:
            return
        if row.pos is None:
            self.pending.add(m.id)
        else:
            self.pending.discard(m.id)

    def add_all(self, rows: Iterable[RecordRow]) -> None:
        for row in rows:
            self.add(row)

    def held(self) -> dict[str, RecordRow]:
        """Every record row held (edges and retractions), by id."""
        out = dict(self.rows)
        for lst in self.retractions.values():
            for r in lst:
                out[r.memory.id] = r
        return out

    def rebuilt(
        self, stamps: dict[str, Stamp], read: Callable[[list[str]], Iterable[RecordRow]]
    ) -> NsIndex:
        """A new index of the rows held here that are still stored as they were
        (``stamps``: the backend's `RecordStamps` of edges and retractions) and
        of the rest, ``read`` by id."""
        kept: list[RecordRow] = []
        for rid, row in self.held().items():
            m = row.memory
            if stamps.get(rid) == (m.seq, m.created_at, m.content, m.sources, m.target):
                kept.append(row)
        have = {r.memory.id for r in kept}
        reuse = {i: e for i in have if (e := self.edges.get(i)) is not None}
        missing = [rid for rid in stamps if rid not in have]
        if missing:
            kept += read(missing)
        fresh = NsIndex()
        fresh.add_sorted(kept, reuse)
        return fresh

    def add_sorted(self, rows: list[RecordRow], edges: dict[str, Edge] | None = None) -> None:
        """Take in ``rows`` in seq order (as a fresh read would), the edges
        first; ``edges``: their `Edge` objects, where already made."""
        rows.sort(key=lambda r: (r.memory.kind != EDGE, r.memory.seq))
        got = edges.get if edges else None
        for row in rows:
            self.add(row, got(row.memory.id) if got else None)


class GraphIndexes:
    """The engine's cache of `NsIndex` objects, one per namespace."""

    def __init__(self) -> None:
        self._by_ns: dict[str, NsIndex] = {}
        self._lock = threading.Lock()

    def clear(self) -> None:
        # Something was erased, anywhere: each index is rebuilt at its next use.
        with self._lock:
            for idx in self._by_ns.values():
                idx.erased = True

    def forget(self, ns: str, ids: list[str] | None, /) -> None:
        with self._lock:
            if ids is None:
                self._by_ns.pop(ns, None)
            elif (idx := self._by_ns.get(ns)) is not None:
                idx.erased = True

    def get(self, engine: Engine, ns: str) -> NsIndex:
        """``ns``'s index, brought up to the backend's state. The caller holds
        the backend's read (or write) transaction."""
        b = engine.backend
        gen = b.generation(ns)
        engine.sync(gen)
        with self._lock:
            idx = self._by_ns.get(ns)
            if idx is None:
                idx = self._by_ns[ns] = NsIndex()
        if idx.writes == gen.writes and not idx.erased:
            return idx
        with idx.lock:
            if idx.writes is None:
                idx.erased = False  # never read: nothing held to rebuild from
            elif idx.writes == gen.writes and not idx.erased:
                return idx
            if idx.erased or not isinstance(b, RecordLog):
                if isinstance(b, RecordStamps) and isinstance(b, RecordLog):
                    top = b.record_top(ns)
                    stamps = b.record_stamps(ns, (EDGE, RETRACTION))
                    fresh = idx.rebuilt(stamps, lambda ids: b.get_records(ns, ids).values())
                    fresh.top = top
                else:  # read again whole, into a fresh index
                    fresh = NsIndex()
                    if isinstance(b, RecordLog):
                        fresh.top = b.record_top(ns)
                    fresh.add_all(b.records_of_kind(ns, EDGE))
                    fresh.add_all(b.records_of_kind(ns, RETRACTION))
                if fresh.pending:
                    fresh.add_all(b.get_records(ns, list(fresh.pending)).values())
                fresh.writes = gen.writes
                with self._lock:
                    if self._by_ns.get(ns) is idx:
                        self._by_ns[ns] = fresh
                return fresh
            if idx.top is not None:
                idx.add_all(b.records_since(ns, idx.top))
                idx.top = b.record_top(ns)
            else:
                idx.top = b.record_top(ns)
                idx.add_all(b.records_of_kind(ns, EDGE))
                idx.add_all(b.records_of_kind(ns, RETRACTION))
            if idx.pending:
                idx.add_all(b.get_records(ns, list(idx.pending)).values())
            idx.writes = gen.writes
        return idx


def index_of(engine: Engine, ns: str) -> NsIndex:
    """``ns``'s edge index (the caller holds the backend's read transaction)."""
    return engine.cache("graph", GraphIndexes).get(engine, ns)
