"""PostgreSQL backend: the same store on a server database, many writers at once.

Every statement filters by one namespace (the ``%(ns)s`` parameter), and
every key leads with it, so a distributed PostgreSQL can shard by namespace
(docs/scaling.md). A few rows go in as one ``INSERT ... VALUES``, more as one
statement over ``unnest`` of arrays, large batches by ``COPY`` (`postgres.sql`,
`postgres.rows`); the gate's read joins the anchor's ``(segment, lo, up_to)`` ranges, passed
as three arrays, against ``records (ns, seg, pos)`` in one round trip.

Writers: a write transaction takes a transaction-level advisory lock keyed
by the namespace before its first statement on that namespace, so writes to
one namespace are serial (segment assignment and branch compare-and-set see
the latest committed state) while other namespaces proceed in parallel.
Reads run in a ``REPEATABLE READ`` transaction: one consistent view. The
connections, transactions and locks are `postgres.conn`'s; this module holds the
statements.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import replace

from ...errors import StorageError
from ...model import Memory
from ..base import DuplicateIds, EventRow, Generation, NewSegment, Pos, Ranges, RecordRow
from ..sqlrows import (
    EVENT_COLS,
    REC_COLS,
    SEP,
    dump_positions,
    event_from_row,
    event_values,
    load_positions,
    record_from_row,
    record_values,
    records_from_rows,
)
from .conn import READ_WRITES
from .jobs import PgJobs
from .meta import HAS_LIFECYCLE
from .recordlog import PgRecordLog
from .sql import IDS, columns, each_key, unnest
from .stream import CopyStream
from .tree import PgTree
from .vector import PgVectors

PROBE_FROM = 1000
"""Ids from which a lookup of waiting rows first checks that the namespace has any."""
SEGS = "%(segs)s::int8[]"
_PAIR_COLS = {"waits": ("parent", "child"), "record_waits": ("event", "record")}
_EVENT_TYPES = "text, text, text, text, text, float8, int8, int8"
_REC_TYPES = (
    "int8, text, text, text, text, text, float8, text, text, float8, int8, int8, text, "
    "float8, float8, float8"
)


class EventStream:
    """`CopyStream` of `EventRow` objects (the interface `branchmem.ops.stream` uses)."""

    def __init__(self, copy: CopyStream) -> None:
        self._copy = copy
        self.finish = copy.finish
        self.abort = copy.abort

    def write(self, rows: list[EventRow]) -> None:
        self._copy.write(map(event_values, rows))


class PostgresBackend(PgTree, PgVectors, PgRecordLog, PgJobs):
    """A store in one PostgreSQL database (and schema): `PgConnection`'s pool
    and transactions, the event, segment and record statements here, and the
    rest of the `Backend` interface from `PgMeta`, vectors in pgvector where
    the server has it (`PgVectors`), records by seq for searches' kept
    candidates (`PgRecordLog`).

    ``schema`` names the schema to use (created if missing); without it the
    URL's ``search_path`` decides. ``trace`` sees every statement. The pool
    keeps ``min_size`` to ``max_size`` connections and closes one left unused
    for ``max_idle`` seconds.

    >>> from branchmem import Store
    >>> Store("postgresql://app@db:5432/memory")  # doctest: +SKIP
    """

    shares_rows = False

    def generation(self, ns: str | None = None) -> Generation:
        if ns is not None:  # a cache's check is usually followed by this question
            self._prefetch(("life", ns, None), HAS_LIFECYCLE, {"ns": ns})
        return super().generation(ns)

    def others_version(self, namespaces: Iterable[str]) -> int:
        """`OtherWriters`: what other connections committed to ``namespaces``,
        from their write counters (`conn.WROTE`) less this object's own raises
        of them (`postgres.others`); one round trip, on a connection of its own
        (the newest commits, whatever transaction this thread has open)."""
        return self._own.version(namespaces, self._read_counters)

    def _read_counters(self, nss: list[str]) -> list[int]:
        # One statement a namespace (each on one shard), in one pipeline.
        try:
            with self._pool.connection() as conn:
                with conn.pipeline():
                    curs = [self._run(conn, READ_WRITES, {"ns": ns}) for ns in nss]
                return [int(c.fetchone()[0]) for c in curs]
        except self._psycopg.Error as exc:
            raise StorageError(f"PostgreSQL store {self.url!r}: {exc}") from exc

    # events -------------------------------------------------------------------
    def get_events(self, ns: str, ids: Iterable[str]) -> dict[str, EventRow]:
        # A placed event never changes but by an erasure: those are cached.
        known, missing = self.cached("event", ns, ids)
        out = {i: EventRow(e, p) for i, (e, p) in known.items()}  # callers may set pos
        if missing:
            found = self._by_key(EVENT_COLS, "events", "id", ns, missing)
            rows = {r[0]: event_from_row(ns, r) for r in found}
            self.keep("event", ns, {i: (r.event, r.pos) for i, r in rows.items() if r.pos})
            out.update(rows)
        return out

    def event_positions(self, ns: str, ids: Iterable[str]) -> dict[str, Pos | None]:
        known, missing = self.cached("event", ns, ids)
        out: dict[str, Pos | None] = {i: p for i, (_, p) in known.items()}
        if missing:
            for i, seg, seq in self._by_key("id, seg, seq", "events", "id", ns, missing):
                out[i] = (seg, seq) if seg is not None else None
        return out

    def insert_events(self, ns: str, rows: list[EventRow]) -> None:
        if not rows:
            return
        values = [event_values(r) for r in rows]
        done = self._copy("events", EVENT_COLS, _EVENT_TYPES, ns, values)
        if done == "duplicate":
            raise DuplicateIds(ns)
        if done == "skipped":
            # All or nothing: a stored id keeps its row, and the rows that went
            # in beside it come out again (the namespace's lock keeps other
            # writers away from them meanwhile).
            tail = " ON CONFLICT DO NOTHING RETURNING id"
            got = self._insert("events", EVENT_COLS, _EVENT_TYPES, ns, values, tail, defer=False)
            if len(got) != len(values):
                self._delete("events", "id", ns, [r[0] for r in got])
                raise DuplicateIds(ns)

    def event_stream(self, ns: str) -> EventStream | None:
        """New events of ``ns`` sent to the server while the caller goes on
        (see `branchmem.ops.stream`); None outside a write transaction that
        holds the namespace's lock."""
        copy = self.stream("events", EVENT_COLS, _EVENT_TYPES, ns)
        return None if copy is None else EventStream(copy)

    def set_event_positions(self, ns: str, positions: list[tuple[str, Pos]]) -> None:
        if positions:
            self._q(
                "UPDATE events e SET seg = u.seg, seq = u.seq FROM "
                + unnest("id, seg, seq", "text, int8, int8")
                + " WHERE e.ns = %(ns)s AND e.id = u.id",
                {"ns": ns, **columns([(i, s, q) for i, (s, q) in positions], 3)},
                defer=True,
            )

    def _pairs(
        self, table: str, a: str, b: str, ns: str, ids: Iterable[str]
    ) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        ids = list(ids)
        # Waiting rows are rare: for a large batch, one look whether the
        # namespace has any costs less than sending every id.
        # A write transaction holds the namespace's lock: what it found empty
        # stays so until it adds rows itself (a batch checked in chunks asks once).
        probe = f"SELECT 1 FROM {table} WHERE ns = %(ns)s LIMIT 1"
        empty = self._st.empty
        if (table, ns) in empty:
            return out
        if len(ids) > PROBE_FROM and not self._q(probe, {"ns": ns}):
            if self._st.write and ns in self._st.locked:
                empty.add((table, ns))
            return out
        # In key order: the same answer whatever the plan (which varies with the
        # number of ids), so a batch is placed alike in one call or in chunks.
        for x, y in self._by_key(f"{a}, {b}", table, a, ns, ids, f" ORDER BY {a}, {b}"):
            out.setdefault(x, []).append(y)
        return out

    def _add_pairs(self, table: str, ns: str, pairs: list[tuple[str, str]]) -> None:
        if pairs:
            self._st.empty.discard((table, ns))
            a, b = _PAIR_COLS[table]
            self._insert(table, f"{a}, {b}", "text, text", ns, pairs, " ON CONFLICT DO NOTHING")

    def waiting_children(self, ns: str, parent_ids: Iterable[str]) -> dict[str, list[str]]:
        return self._pairs("waits", "parent", "child", ns, parent_ids)

    def add_waits(self, ns: str, pairs: list[tuple[str, str]]) -> None:
        self._add_pairs("waits", ns, pairs)

    def drop_waits(self, ns: str, parent_ids: list[str]) -> None:
        self._delete("waits", "parent", ns, parent_ids)

    # segments -----------------------------------------------------------------
    def segment_parents(self, ns: str, segs: Iterable[int]) -> dict[int, tuple[Pos, ...]]:
        sql = each_key("seg, parents", "segments", "seg", SEGS)
        return self._segments(sql, ns, segs)

    def segment_ancestry(self, ns: str, segs: Iterable[int]) -> dict[int, tuple[Pos, ...]]:
        # Every segment above, in one statement.
        sql = (
            "WITH RECURSIVE up(seg) AS (SELECT unnest(%(segs)s::int8[]) UNION "
            "SELECT (f.value->>0)::int8 FROM up JOIN segments s ON s.ns = %(ns)s "
            "AND s.seg = up.seg, jsonb_array_elements(s.parents::jsonb) AS f(value)) "
            "SELECT s.seg, s.parents FROM up JOIN segments s ON s.ns = %(ns)s AND s.seg = up.seg"
        )
        return self._segments(sql, ns, segs)

    def _segments(self, sql: str, ns: str, segs: Iterable[int]) -> dict[int, tuple[Pos, ...]]:
        """Fork points of ``segs`` from the cache, the rest (and whatever else
        ``sql`` returns, as ``seg, parents`` rows) fetched and kept."""
        out, missing = self.cached("seg", ns, segs)
        if missing:
            found = {
                seg: load_positions(parents)
                for seg, parents in self._q(sql, {"ns": ns, "segs": missing})
            }
            self.keep("seg", ns, found)
            out.update(found)
        return out

    def segment_tips(self, ns: str, segs: Iterable[int]) -> dict[int, int]:
        sql = each_key("seg, tip", "segments", "seg", SEGS)
        want = list(segs)
        return dict(self._q(sql, {"ns": ns, "segs": want})) if want else {}

    def max_segment(self, ns: str) -> int:
        row = self._q("SELECT max(seg) FROM segments WHERE ns = %(ns)s", {"ns": ns})
        return -1 if not row or row[0][0] is None else int(row[0][0])

    def put_segments(self, ns: str, new: list[NewSegment], tips: dict[int, int]) -> None:
        fresh = {s.seg for s in new}
        self._insert(
            "segments", "seg, parents, tip", "int8, text, int8", ns,
            [(s.seg, dump_positions(s.parents), tips.get(s.seg, 0)) for s in new],
        )  # fmt: skip
        moved = [(s, t) for s, t in tips.items() if s not in fresh]
        if moved:
            self._q(
                "UPDATE segments g SET tip = u.tip FROM "
                + unnest("seg, tip", "int8, int8")
                + " WHERE g.ns = %(ns)s AND g.seg = u.seg",
                {"ns": ns, **columns(moved, 2)},
                defer=True,
            )

    # records ------------------------------------------------------------------
    def get_records(self, ns: str, ids: Iterable[str]) -> dict[str, RecordRow]:
        want = list(ids)
        if not want:
            return {}
        rows = self._by_key(REC_COLS, "records", "id", ns, want)
        return {r[1]: record_from_row(ns, r) for r in rows}

    def insert_records(self, ns: str, rows: list[RecordRow]) -> list[Memory]:
        if not rows:
            return []
        # Write order within the namespace, counted under the namespace lock.
        first = self._numbers("records", ns, len(rows))
        out = [replace(r.memory, seq=first + i) for i, r in enumerate(rows)]
        values = [record_values(m, r) for m, r in zip(out, rows, strict=True)]
        if self._copy("records", REC_COLS, _REC_TYPES, ns, values) != "done":
            self._insert("records", REC_COLS, _REC_TYPES, ns, values)
        return out

    def set_record_positions(
        self, ns: str, positions: list[tuple[str, Pos, tuple[Pos, ...]]]
    ) -> None:
        if positions:
            self._q(
                "UPDATE records c SET seg = u.seg, pos = u.pos, extra = u.extra FROM "
                + unnest("id, seg, pos, extra", "text, int8, int8, text")
                + " WHERE c.ns = %(ns)s AND c.id = u.id",
                {
                    "ns": ns,
                    **columns(
                        [
                            (i, p[0], p[1], dump_positions(ex) if ex else None)
                            for i, p, ex in positions
                        ],
                        4,
                    ),
                },
                defer=True,
            )

    def records_in_ranges(
        self, ns: str, ranges: Ranges, after: Ranges | None = None
    ) -> Iterator[RecordRow]:
        if not ranges:
            return iter(())
        after = after or {}
        spans = [(s, after.get(s, -1), u) for s, u in ranges.items()]
        cols = ", ".join("c." + c for c in REC_COLS.split(", "))
        sql = (
            f"SELECT {cols} FROM {unnest('seg, lo, upto', 'int8, int8, int8', 'r')} "
            "JOIN records c ON c.ns = %(ns)s AND c.seg = r.seg AND c.pos > r.lo "
            "AND c.pos <= r.upto"
        )
        # The gate's read is usually followed by this question (`lifecycle.narrow`).
        self._prefetch(("life", ns, None), HAS_LIFECYCLE, {"ns": ns})
        return iter(records_from_rows(ns, self._q(sql, {"ns": ns, **columns(spans, 3)})))

    def retractions_of(self, ns: str, target_ids: Iterable[str]) -> list[RecordRow]:
        want = list(target_ids)
        if not want:
            return []
        return self._records(
            f"target = {IDS} ORDER BY seq",
            {"ns": ns, "ids": SEP.join(want)},
        )

    def records_waiting_on(self, ns: str, event_ids: Iterable[str]) -> dict[str, list[str]]:
        return self._pairs("record_waits", "event", "record", ns, event_ids)

    def add_record_waits(self, ns: str, pairs: list[tuple[str, str]]) -> None:
        self._add_pairs("record_waits", ns, pairs)

    def drop_record_waits(self, ns: str, event_ids: list[str]) -> None:
        self._delete("record_waits", "event", ns, event_ids)
