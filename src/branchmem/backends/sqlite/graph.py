"""SQLite tables of the event graph: events, waits, segments and records
(the gate's read is `records_in_ranges`)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from ...model import Memory, memory_with
from ..base import (
    DuplicateIds,
    EventRow,
    NewSegment,
    Pos,
    Ranges,
    RecordRow,
    Stamp,
)
from ..sqlrows import (
    REC_COLS,
    SEP,
    cached_segments,
    event_values,
    record_values,
    records_from_rows,
)
from .parts import CHUNK, SQLiteParts, chunks, insert_rows, marks

# Kept between transactions while no other connection writes (see `SQLiteParts`):
# the rows of batches up to RECENT_BATCH events, and at most RECENT_MAX entries.
RECENT_BATCH = 16
RECENT_MAX = 4096
SEG_CACHE_MAX = 1_000_000
"""Segments' fork points kept per connection, at most (they never change)."""

# The given segments (a JSON array) and every segment above them, one row per
# fork point (seg, its place in the list, fork segment, fork seq; a root has one
# row of NULLs): one statement for a whole forked path. UNION, so a segment
# reached twice (after a merge) is expanded once.
_ANCESTRY = """
WITH RECURSIVE up(seg, k, ps, pq) AS (
    SELECT s.seg, f.key, json_extract(f.value, '$[0]'), json_extract(f.value, '$[1]')
    FROM json_each(?2) AS w JOIN segments s ON s.ns = ?1 AND s.seg = w.value
    LEFT JOIN json_each(s.parents) AS f
    UNION
    SELECT s.seg, f.key, json_extract(f.value, '$[0]'), json_extract(f.value, '$[1]')
    FROM up JOIN segments s ON s.ns = ?1 AND s.seg = up.ps LEFT JOIN json_each(s.parents) AS f
)
SELECT seg, k, ps, pq FROM up
"""


class GraphTables(SQLiteParts):
    """Events, segments and records of one SQLite store (mixed into `SQLiteBackend`)."""

    # events -------------------------------------------------------------------
    def get_events(self, ns: str, ids: Iterable[str]) -> dict[str, EventRow]:
        nid = self._ns(ns)
        if nid is None:
            return {}
        out: dict[str, EventRow] = {}
        want = self._not_recent(nid, ids, lambda r: out.__setitem__(r[0], self._event(ns, r)))
        for chunk in chunks(want):
            sql = (
                "SELECT id, parents, role, content, meta, created_at, seg, seq FROM events "
                f"WHERE ns=? AND id IN ({marks(len(chunk))})"
            )
            for r in self._db.execute(sql, (nid, *chunk)):
                out[r[0]] = self._event(ns, r)
        return out

    def _not_recent(
        self, nid: int, ids: Iterable[str], found: Callable[[tuple[Any, ...]], object]
    ) -> list[str]:
        """Pass the rows of ``ids`` this connection wrote recently to ``found``
        (see ``_recent``); returns the ids still to fetch."""
        recent = self._recent
        if not recent:
            return list(ids)
        want = []
        for i in ids:
            r = recent.get((nid, i))
            if r is None:
                want.append(i)
            else:
                found(r)
        return want

    def event_positions(self, ns: str, ids: Iterable[str]) -> dict[str, Pos | None]:
        nid = self._ns(ns)
        if nid is None:
            return {}
        out: dict[str, Pos | None] = {}
        want = self._not_recent(nid, ids, lambda r: out.__setitem__(r[0], (r[6], r[7])))
        for chunk in chunks(want):
            sql = f"SELECT id, seg, seq FROM events WHERE ns=? AND id IN ({marks(len(chunk))})"
            for eid, seg, seq in self._db.execute(sql, (nid, *chunk)):
                out[eid] = (seg, seq) if seg is not None else None
        return out

    def insert_events(self, ns: str, rows: list[EventRow]) -> None:
        nid = self._wns(ns)
        dumps = json.dumps
        join = SEP.join
        if len(rows) == 1:  # one statement: a duplicate id undoes it alone
            try:
                self._insert_events(nid, rows, dumps, join)
            except sqlite3.IntegrityError as exc:
                raise DuplicateIds(ns) from exc
            return
        # A savepoint, so that a duplicate id leaves none of the batch behind.
        self._db.execute("SAVEPOINT insert_events")
        try:
            self._insert_events(nid, rows, dumps, join)
        except sqlite3.IntegrityError as exc:
            self._db.execute("ROLLBACK TO insert_events")
            self._db.execute("RELEASE insert_events")
            raise DuplicateIds(ns) from exc
        self._db.execute("RELEASE insert_events")

    def _insert_events(self, nid: int, rows: list[EventRow], dumps: Any, join: Any) -> None:
        values = [(nid, *event_values(r)) for r in rows]
        insert_rows(
            self._db,
            "INSERT INTO events (ns, id, parents, role, content, meta, created_at, seg, seq)",
            9,
            values,
        )
        if len(rows) <= RECENT_BATCH:
            recent = self._recent
            if len(recent) > RECENT_MAX:
                recent.clear()
            for v in values:
                if v[7] is not None:  # connected: its row changes only by an erasure
                    # As SQLite gives it back (created_at is a REAL column).
                    recent[(nid, v[1])] = (*v[1:6], float(v[6]), v[7], v[8])

    def set_event_positions(self, ns: str, positions: list[tuple[str, Pos]]) -> None:
        nid = self._wns(ns)
        for eid, _ in positions:
            self._recent.pop((nid, eid), None)
        self._db.executemany(
            "UPDATE events SET seg=?, seq=? WHERE ns=? AND id=?",
            ((s, q, nid, eid) for eid, (s, q) in positions),
        )

    def _range_query(self, spans: list[tuple[int, ...]], select: str) -> list[tuple[Any, ...]]:
        """The rows of ``select`` run against a table ``r`` of ``spans``: ``(seg, upto)``
        or ``(seg, lo, upto)`` rows, in chunks that stay under SQLite's parameter limit."""
        cols = "seg, upto" if len(spans[0]) == 2 else "seg, lo, upto"
        out: list[tuple[Any, ...]] = []
        for chunk in chunks(spans, CHUNK // len(spans[0]) * 2):
            values = ",".join("(" + ",".join("?" * len(spans[0])) + ")" for _ in chunk)
            params = [x for span in chunk for x in span]
            out += self._db.execute(f"WITH r({cols}) AS (VALUES {values}) {select}", params)
        return out

    def waiting_children(self, ns: str, parent_ids: Iterable[str]) -> dict[str, list[str]]:
        nid = self._ns(ns)
        if nid is None:
            return {}
        # Waiting events are rare; skip the lookups when there are none at all
        # (known from an earlier look while no other connection has written).
        if nid in self._no_waits:
            return {}
        if self._db.execute("SELECT 1 FROM waits WHERE ns=? LIMIT 1", (nid,)).fetchone() is None:
            self._no_waits.add(nid)
            return {}
        out: dict[str, list[str]] = {}
        for chunk in chunks(list(parent_ids)):
            sql = f"SELECT parent, child FROM waits WHERE ns=? AND parent IN ({marks(len(chunk))})"
            for p, c in self._db.execute(sql, (nid, *chunk)):
                out.setdefault(p, []).append(c)
        return out

    def add_waits(self, ns: str, pairs: list[tuple[str, str]]) -> None:
        nid = self._wns(ns)
        self._no_waits.discard(nid)
        self._db.executemany(
            "INSERT OR IGNORE INTO waits VALUES (?,?,?)", ((nid, p, c) for p, c in pairs)
        )

    def drop_waits(self, ns: str, parent_ids: list[str]) -> None:
        nid = self._wns(ns)
        self._db.executemany(
            "DELETE FROM waits WHERE ns=? AND parent=?", ((nid, p) for p in parent_ids)
        )

    # segments -----------------------------------------------------------------
    def segment_parents(self, ns: str, segs: Iterable[int]) -> dict[int, tuple[Pos, ...]]:
        nid = self._ns(ns)
        if nid is None:
            return {}
        cache = self._seg_cache
        out, missing = cached_segments(cache, nid, segs)
        for chunk in chunks(missing):
            sql = f"SELECT seg, parents FROM segments WHERE ns=? AND seg IN ({marks(len(chunk))})"
            for seg, parents in self._db.execute(sql, (nid, *chunk)):
                val = tuple((int(a), int(b)) for a, b in json.loads(parents))
                if self._depth == 0 or len(cache) < SEG_CACHE_MAX:
                    cache[(nid, seg)] = val
                out[seg] = val
        return out

    def segment_ancestry(self, ns: str, segs: Iterable[int]) -> dict[int, tuple[Pos, ...]]:
        nid = self._ns(ns)
        if nid is None:
            return {}
        cache = self._seg_cache
        out, missing = cached_segments(cache, nid, segs)
        if missing and cache:
            # A warm cache: a new segment's fork points most likely lie in known ones.
            out.update(self.segment_parents(ns, missing))
            missing = list(
                {
                    ps
                    for s in missing
                    for ps, _ in out.get(s, ())
                    if ps not in out and (nid, ps) not in cache
                }
            )
        if missing:
            found: dict[int, list[tuple[int, int, int]]] = {}
            for seg, k, ps, pq in self._db.execute(_ANCESTRY, (nid, json.dumps(missing))):
                forks = found.setdefault(seg, [])
                if ps is not None:
                    forks.append((k, ps, pq))
            for seg, forks in found.items():
                if len(forks) > 1:
                    forks.sort()
                val = tuple([(ps, pq) for _, ps, pq in forks])
                if len(cache) < SEG_CACHE_MAX:
                    cache[(nid, seg)] = val
                out[seg] = val
        return out

    def segment_tips(self, ns: str, segs: Iterable[int]) -> dict[int, int]:
        nid = self._ns(ns)
        if nid is None:
            return {}
        known = self._tips
        out, missing = cached_segments(known, nid, segs)
        for chunk in chunks(missing):
            sql = f"SELECT seg, tip FROM segments WHERE ns=? AND seg IN ({marks(len(chunk))})"
            for seg, tip in self._db.execute(sql, (nid, *chunk)):
                out[seg] = tip
                if len(known) < RECENT_MAX:
                    known[(nid, seg)] = tip
        return out

    def max_segment(self, ns: str) -> int:
        nid = self._ns(ns)
        if nid is None:
            return -1
        top = self._seg_top.get(nid)
        if top is None:
            row = self._db.execute("SELECT max(seg) FROM segments WHERE ns=?", (nid,)).fetchone()
            top = self._seg_top[nid] = -1 if row is None or row[0] is None else int(row[0])
        return top

    def put_segments(self, ns: str, new: list[NewSegment], tips: dict[int, int]) -> None:
        nid = self._wns(ns)
        fresh = {s.seg for s in new}
        if new:  # a reply extends its segment: the usual single write adds none
            if (top := self._seg_top.get(nid)) is not None:
                self._seg_top[nid] = max(top, *fresh)
            self._db.executemany(
                "INSERT INTO segments VALUES (?,?,?,?)",
                ((nid, s.seg, json.dumps(s.parents), tips.get(s.seg, 0)) for s in new),
            )
            cache = self._seg_cache  # (a rollback clears it: `_rolled_back`)
            if len(new) <= RECENT_MAX and len(cache) < SEG_CACHE_MAX:
                # as `segment_parents` would read them back
                for made in new:
                    cache[(nid, made.seg)] = tuple((int(a), int(b)) for a, b in made.parents)
        self._db.executemany(
            "UPDATE segments SET tip=? WHERE ns=? AND seg=?",
            ((t, nid, s) for s, t in tips.items() if s not in fresh),
        )
        known = self._tips
        if len(known) + len(tips) > RECENT_MAX:
            known.clear()
        if len(tips) <= RECENT_MAX:  # a large import keeps none
            for s, t in tips.items():
                known[(nid, s)] = t

    # records ------------------------------------------------------------------
    def get_records(self, ns: str, ids: Iterable[str]) -> dict[str, RecordRow]:
        nid = self._ns(ns)
        if nid is None:
            return {}
        out: dict[str, RecordRow] = {}
        for chunk in chunks(list(ids)):
            sql = (
                f"SELECT {REC_COLS} FROM records INDEXED BY records_id "
                f"WHERE ns=? AND id IN ({marks(len(chunk))})"
            )
            for r in self._db.execute(sql, (nid, *chunk)):
                out[r[1]] = self._record(ns, r)
        return out

    def insert_records(self, ns: str, rows: list[RecordRow]) -> list[Memory]:
        nid = self._wns(ns)
        # Numbered within the namespace (the (ns, seq) key answers this from its last
        # entry; known already after this connection's last write, unless another wrote).
        top = self._top.get(nid)
        if top is None:
            row = self._db.execute("SELECT max(seq) FROM records WHERE ns=?", (nid,)).fetchone()
            top = int(row[0]) if row and row[0] is not None else 0
        out = [memory_with(r.memory, seq=top + 1 + i) for i, r in enumerate(rows)]
        insert_rows(
            self._db,
            f"INSERT INTO records ({REC_COLS}, ns)",
            17,
            [(*record_values(m, r), nid) for m, r in zip(out, rows, strict=True)],
        )
        self._top[nid] = top + len(rows)
        return out

    def record_top(self, ns: str) -> int:
        nid = self._ns(ns)
        if nid is None:
            return 0
        row = self._db.execute("SELECT max(seq) FROM records WHERE ns=?", (nid,)).fetchone()
        return int(row[0]) if row and row[0] is not None else 0

    def record_stamps(self, ns: str, kinds: tuple[str, ...]) -> dict[str, Stamp]:
        nid = self._ns(ns)
        if nid is None:
            return {}
        sql = (
            "SELECT id, seq, created_at, content, sources, target FROM records "
            f"WHERE ns=? AND kind IN ({marks(len(kinds))})"
        )
        return {
            r[0]: (r[1], r[2], r[3], tuple(r[4].split(SEP)), r[5])
            for r in self._db.execute(sql, (nid, *kinds))
        }

    def records_since(self, ns: str, seq: int) -> list[RecordRow]:
        nid = self._ns(ns)
        if nid is None:
            return []
        sql = f"SELECT {REC_COLS} FROM records WHERE ns=? AND seq>? ORDER BY seq"
        return [self._record(ns, r) for r in self._db.execute(sql, (nid, seq))]

    def set_record_positions(
        self, ns: str, positions: list[tuple[str, Pos, tuple[Pos, ...]]]
    ) -> None:
        nid = self._wns(ns)
        self._db.executemany(
            "UPDATE records SET seg=?, pos=?, extra=? WHERE ns=? AND id=?",
            ((p[0], p[1], json.dumps(ex) if ex else None, nid, rid) for rid, p, ex in positions),
        )

    def records_in_ranges(
        self, ns: str, ranges: Ranges, after: Ranges | None = None
    ) -> Iterator[RecordRow]:
        nid = self._ns(ns)
        if nid is None or not ranges:
            return iter(())
        where = f"c.ns={nid} AND c.seg=r.seg AND c.pos<=r.upto"
        if after:
            spans: list[tuple[int, ...]] = [(s, after.get(s, -1), u) for s, u in ranges.items()]
            where += " AND c.pos>r.lo"
        else:
            spans = list(ranges.items())
        # The rows in rowid order (the order they were written in), found by the
        # index first: read in the index's order they fall on the table's pages
        # at random. Callers order what they show by seq.
        found = f"FROM r CROSS JOIN records c INDEXED BY records_pos WHERE {where}"
        if "records" in self._rowid:
            select = f"SELECT {REC_COLS} FROM records WHERE rowid IN (SELECT c.rowid {found})"
        else:
            select = "SELECT " + ", ".join("c." + c for c in REC_COLS.split(", ")) + f" {found}"
        return iter(records_from_rows(ns, self._range_query(spans, select)))

    def retractions_of(self, ns: str, target_ids: Iterable[str]) -> list[RecordRow]:
        nid = self._ns(ns)
        if nid is None:
            return []
        out: list[RecordRow] = []
        for chunk in chunks(list(target_ids)):
            sql = (
                f"SELECT {REC_COLS} FROM records INDEXED BY records_target WHERE ns=? "
                f"AND target IN ({marks(len(chunk))}) ORDER BY seq"
            )
            out.extend(self._record(ns, r) for r in self._db.execute(sql, (nid, *chunk)))
        return out

    def records_waiting_on(self, ns: str, event_ids: Iterable[str]) -> dict[str, list[str]]:
        nid = self._ns(ns)
        if nid is None:
            return {}
        if nid in self._no_record_waits:
            return {}
        sql = "SELECT 1 FROM record_waits WHERE ns=? LIMIT 1"
        if self._db.execute(sql, (nid,)).fetchone() is None:
            self._no_record_waits.add(nid)
            return {}
        out: dict[str, list[str]] = {}
        for chunk in chunks(list(event_ids)):
            sql = (
                "SELECT event, record FROM record_waits "
                f"WHERE ns=? AND event IN ({marks(len(chunk))})"
            )
            for e, r in self._db.execute(sql, (nid, *chunk)):
                out.setdefault(e, []).append(r)
        return out

    def add_record_waits(self, ns: str, pairs: list[tuple[str, str]]) -> None:
        nid = self._wns(ns)
        self._no_record_waits.discard(nid)
        self._db.executemany(
            "INSERT OR IGNORE INTO record_waits VALUES (?,?,?)", ((nid, e, r) for e, r in pairs)
        )

    def drop_record_waits(self, ns: str, event_ids: list[str]) -> None:
        nid = self._wns(ns)
        self._db.executemany(
            "DELETE FROM record_waits WHERE ns=? AND event=?", ((nid, e) for e in event_ids)
        )
