"""Every edge record of a namespace, indexed by entity and by segment, kept
between reads (a cache of the engine, under its one rule).

The index holds all edges, whichever branch they came from; a view keeps only
those whose index position lies in its anchor's ranges (`GraphView`). So that
a read touches only what can be visible, each entity's edges are grouped by
the segment of their position: a read looks at the segments its ranges and
the entity share, never at an abandoned branch's segment.

Kept up to date inside each read: when the backend's ``writes`` moved, the
records written since are appended (`RecordLog`), and the few rows that were
waiting for a source are fetched again; a backend without a record log is
read again whole. An erasure clears it (`Engine.sync`).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable

from ..backends.base import RecordLog, RecordRow
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

    def mentions(self) -> Mentions:
        """A matcher of every name an edge here names (kept until a new name comes)."""
        kept = self.matcher
        if kept is None or kept[0] != self.names_version:
            kept = self.matcher = (self.names_version, Mentions(list(self.display)))
        return kept[1]

    def add(self, row: RecordRow) -> None:
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
            e = edge_of(m)
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


class GraphIndexes:
    """The engine's cache of `NsIndex` objects, one per namespace."""

    def __init__(self) -> None:
        self._by_ns: dict[str, NsIndex] = {}
        self._lock = threading.Lock()

    def clear(self) -> None:
        with self._lock:
            self._by_ns.clear()

    def forget(self, ns: str, ids: list[str] | None, /) -> None:
        with self._lock:
            self._by_ns.pop(ns, None)

    def get(self, engine: Engine, ns: str) -> NsIndex:
        """``ns``'s index, brought up to the backend's state. The caller holds
        the backend's read (or write) transaction."""
        b = engine.backend
        gen = b.generation()
        engine.sync(gen)
        with self._lock:
            idx = self._by_ns.get(ns)
            if idx is None:
                idx = self._by_ns[ns] = NsIndex()
        if idx.writes == gen.writes:
            return idx
        with idx.lock:
            if idx.writes == gen.writes:
                return idx
            if isinstance(b, RecordLog) and idx.top is not None:
                idx.add_all(b.records_since(ns, idx.top))
                idx.top = b.record_top(ns)
            elif isinstance(b, RecordLog):
                idx.top = b.record_top(ns)
                idx.add_all(b.records_of_kind(ns, EDGE))
                idx.add_all(b.records_of_kind(ns, RETRACTION))
            else:  # no record log: read again whole, into a fresh index
                fresh = NsIndex()
                fresh.add_all(b.records_of_kind(ns, EDGE))
                fresh.add_all(b.records_of_kind(ns, RETRACTION))
                fresh.writes = gen.writes
                with self._lock:
                    self._by_ns[ns] = fresh
                return fresh
            if idx.pending:
                idx.add_all(b.get_records(ns, list(idx.pending)).values())
            idx.writes = gen.writes
        return idx


def index_of(engine: Engine, ns: str) -> NsIndex:
    """``ns``'s edge index (the caller holds the backend's read transaction)."""
    return engine.cache("graph", GraphIndexes).get(engine, ns)
