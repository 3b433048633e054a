"""PostgreSQL backend: the same store on a server database, many writers at once.

Every statement filters by one namespace (the ``%(ns)s`` parameter), and
every key leads with it, so a distributed PostgreSQL can shard by namespace
(docs/scaling.md). Batches travel as one statement over ``unnest`` of arrays
(large ones by ``COPY``); the gate's read joins the anchor's ``(segment, lo, up_to)`` ranges, passed
as three arrays, against ``records (ns, seg, pos)`` in one round trip.

Writers: a write transaction takes a transaction-level advisory lock keyed
by the namespace before its first statement on that namespace, so writes to
one namespace are serial (segment assignment and branch compare-and-set see
the latest committed state) while other namespaces proceed in parallel.
Reads run in a ``REPEATABLE READ`` transaction: one consistent view. The
connections, transactions and locks are `pg_conn`'s; this module holds the
statements.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Iterator
from dataclasses import replace
from typing import Any

from ..branch_types import AuditEntry, HeadMove, Snapshot
from ..model import Memory
from .base import BranchRow, DuplicateIds, EventRow, LifeRow, NewSegment, Pos, Ranges, RecordRow
from .pg_conn import PgConnection, columns, unnest
from .sqlrows import (
    BRANCH_COLS,
    EVENT_COLS,
    LIFE_COLS,
    MOVE_COLS,
    REC_COLS,
    SEP,
    SNAPSHOT_COLS,
    audit_from_row,
    branch_from_row,
    branch_values,
    cached_segments,
    dump_positions,
    event_from_row,
    event_values,
    load_positions,
    move_from_row,
    record_from_row,
    record_values,
    snapshot_from_row,
)

_EVENT_TYPES = "text, text, text, text, text, float8, int8, int8"
_REC_TYPES = (
    "int8, text, text, text, text, text, float8, text, text, float8, int8, int8, text, "
    "float8, float8, float8"
)


class PostgresBackend(PgConnection):
    """A store in one PostgreSQL database (and schema): `PgConnection`'s pool
    and transactions, and the statements of the `Backend` interface.

    ``schema`` names the schema to use (created if missing); without it the
    URL's ``search_path`` decides. ``trace`` sees every statement.

    >>> from branchmem import Store
    >>> Store("postgresql://app@db:5432/memory")  # doctest: +SKIP
    """

    shares_rows = False

    # events -------------------------------------------------------------------
    def get_events(self, ns: str, ids: Iterable[str]) -> dict[str, EventRow]:
        sql = f"SELECT {EVENT_COLS} FROM events WHERE ns = %(ns)s AND id = ANY(%(ids)s)"
        return {r[0]: event_from_row(ns, r) for r in self._ids(sql, ns, ids)}

    def event_positions(self, ns: str, ids: Iterable[str]) -> dict[str, Pos | None]:
        sql = "SELECT id, seg, seq FROM events WHERE ns = %(ns)s AND id = ANY(%(ids)s)"
        return {r[0]: (r[1], r[2]) if r[1] is not None else None for r in self._ids(sql, ns, ids)}

    def insert_events(self, ns: str, rows: list[EventRow]) -> None:
        if not rows:
            return
        values = [event_values(r) for r in rows]
        done = self._copy("events", EVENT_COLS, ns, values)
        if done == "duplicate":
            raise DuplicateIds(ns)
        if done == "skipped":
            # Under the namespace lock no other writer can add one of these ids now.
            sql = "SELECT id FROM events WHERE ns = %(ns)s AND id = ANY(%(ids)s) LIMIT 1"
            if self._q(sql, {"ns": ns, "ids": [v[0] for v in values]}):
                raise DuplicateIds(ns)
            self._q(
                f"INSERT INTO events (ns, {EVENT_COLS}) SELECT %(ns)s, u.* FROM "
                + unnest(EVENT_COLS, _EVENT_TYPES),
                {"ns": ns, **columns(values, 8)},
            )

    def set_event_positions(self, ns: str, positions: list[tuple[str, Pos]]) -> None:
        if positions:
            self._q(
                "UPDATE events e SET seg = u.seg, seq = u.seq FROM "
                + unnest("id, seg, seq", "text, int8, int8")
                + " WHERE e.ns = %(ns)s AND e.id = u.id",
                {"ns": ns, **columns([(i, s, q) for i, (s, q) in positions], 3)},
            )

    def _pairs(
        self, table: str, a: str, b: str, ns: str, ids: Iterable[str]
    ) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        sql = f"SELECT {a}, {b} FROM {table} WHERE ns = %(ns)s AND {a} = ANY(%(ids)s)"
        for x, y in self._ids(sql, ns, ids):
            out.setdefault(x, []).append(y)
        return out

    def _add_pairs(self, table: str, ns: str, pairs: list[tuple[str, str]]) -> None:
        if pairs:
            self._q(
                f"INSERT INTO {table} SELECT %(ns)s, u.* FROM {unnest('a, b', 'text, text')} "
                "ON CONFLICT DO NOTHING",
                {"ns": ns, **columns(pairs, 2)},
            )

    def _delete(self, table: str, col: str, ns: str, ids: list[str]) -> None:
        self._ids(f"DELETE FROM {table} WHERE ns = %(ns)s AND {col} = ANY(%(ids)s)", ns, ids)

    def waiting_children(self, ns: str, parent_ids: Iterable[str]) -> dict[str, list[str]]:
        return self._pairs("waits", "parent", "child", ns, parent_ids)

    def add_waits(self, ns: str, pairs: list[tuple[str, str]]) -> None:
        self._add_pairs("waits", ns, pairs)

    def drop_waits(self, ns: str, parent_ids: list[str]) -> None:
        self._delete("waits", "parent", ns, parent_ids)

    # segments -----------------------------------------------------------------
    def segment_parents(self, ns: str, segs: Iterable[int]) -> dict[int, tuple[Pos, ...]]:
        sql = "SELECT seg, parents FROM segments WHERE ns = %(ns)s AND seg = ANY(%(segs)s)"
        return self._segments(sql, ns, segs)

    def segment_ancestry(self, ns: str, segs: Iterable[int]) -> dict[int, tuple[Pos, ...]]:
        # Every segment above, in one statement (the cache lasts one transaction).
        sql = (
            "WITH RECURSIVE up(seg) AS (SELECT unnest(%(segs)s::int8[]) UNION "
            "SELECT (f.value->>0)::int8 FROM up JOIN segments s ON s.ns = %(ns)s "
            "AND s.seg = up.seg, jsonb_array_elements(s.parents::jsonb) AS f(value)) "
            "SELECT s.seg, s.parents FROM up JOIN segments s ON s.ns = %(ns)s AND s.seg = up.seg"
        )
        return self._segments(sql, ns, segs)

    def _segments(self, sql: str, ns: str, segs: Iterable[int]) -> dict[int, tuple[Pos, ...]]:
        """Fork points of ``segs`` from the cache, the rest (and whatever else
        ``sql`` returns, as ``seg, parents`` rows) fetched and cached."""
        cache = self._seg_cache
        out, missing = cached_segments(cache, ns, segs)
        if missing:
            for seg, parents in self._q(sql, {"ns": ns, "segs": missing}):
                val = load_positions(parents)
                if len(cache) < 1_000_000:
                    cache[(ns, seg)] = val
                out[seg] = val
        return out

    def segment_tips(self, ns: str, segs: Iterable[int]) -> dict[int, int]:
        sql = "SELECT seg, tip FROM segments WHERE ns = %(ns)s AND seg = ANY(%(segs)s)"
        want = list(segs)
        return dict(self._q(sql, {"ns": ns, "segs": want})) if want else {}

    def max_segment(self, ns: str) -> int:
        row = self._q("SELECT max(seg) FROM segments WHERE ns = %(ns)s", {"ns": ns})
        return -1 if not row or row[0][0] is None else int(row[0][0])

    def put_segments(self, ns: str, new: list[NewSegment], tips: dict[int, int]) -> None:
        fresh = {s.seg for s in new}
        if new:
            self._q(
                "INSERT INTO segments SELECT %(ns)s, u.* FROM "
                + unnest("seg, parents, tip", "int8, text, int8"),
                {
                    "ns": ns,
                    **columns(
                        [(s.seg, dump_positions(s.parents), tips.get(s.seg, 0)) for s in new], 3
                    ),
                },
            )
        moved = [(s, t) for s, t in tips.items() if s not in fresh]
        if moved:
            self._q(
                "UPDATE segments g SET tip = u.tip FROM "
                + unnest("seg, tip", "int8, int8")
                + " WHERE g.ns = %(ns)s AND g.seg = u.seg",
                {"ns": ns, **columns(moved, 2)},
            )

    # records ------------------------------------------------------------------
    def _records(self, where: str, params: dict[str, Any]) -> list[RecordRow]:
        ns = params["ns"]
        sql = f"SELECT {REC_COLS} FROM records WHERE ns = %(ns)s AND {where}"
        return [record_from_row(ns, r) for r in self._q(sql, params)]

    def get_records(self, ns: str, ids: Iterable[str]) -> dict[str, RecordRow]:
        want = list(ids)
        if not want:
            return {}
        return {r.memory.id: r for r in self._records("id = ANY(%(ids)s)", {"ns": ns, "ids": want})}

    def insert_records(self, ns: str, rows: list[RecordRow]) -> list[Memory]:
        if not rows:
            return []
        # Write order within the namespace, counted under the namespace lock.
        top = self._q("SELECT max(seq) FROM records WHERE ns = %(ns)s", {"ns": ns})
        first = 1 + (int(top[0][0]) if top and top[0][0] is not None else 0)
        out = [replace(r.memory, seq=first + i) for i, r in enumerate(rows)]
        values = [record_values(m, r) for m, r in zip(out, rows, strict=True)]
        if self._copy("records", REC_COLS, ns, values) != "done":
            self._q(
                f"INSERT INTO records (ns, {REC_COLS}) SELECT %(ns)s, u.* FROM "
                + unnest(REC_COLS, _REC_TYPES),
                {"ns": ns, **columns(values, 16)},
            )
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
        rows = self._q(sql, {"ns": ns, **columns(spans, 3)})
        return (record_from_row(ns, r) for r in rows)

    def retractions_of(self, ns: str, target_ids: Iterable[str]) -> list[RecordRow]:
        want = list(target_ids)
        if not want:
            return []
        return self._records("target = ANY(%(ids)s) ORDER BY seq", {"ns": ns, "ids": want})

    def records_waiting_on(self, ns: str, event_ids: Iterable[str]) -> dict[str, list[str]]:
        return self._pairs("record_waits", "event", "record", ns, event_ids)

    def add_record_waits(self, ns: str, pairs: list[tuple[str, str]]) -> None:
        self._add_pairs("record_waits", ns, pairs)

    def drop_record_waits(self, ns: str, event_ids: list[str]) -> None:
        self._delete("record_waits", "event", ns, event_ids)

    # branches -----------------------------------------------------------------
    def get_branch(self, ns: str, name: str) -> str | None:
        row = self.get_branch_row(ns, name)
        return None if row is None else row.head

    def set_branch(self, ns: str, name: str, head: str) -> None:
        self._q(
            "INSERT INTO branches (ns, name, head) VALUES (%(ns)s, %(name)s, %(head)s) "
            "ON CONFLICT (ns, name) DO UPDATE SET head = excluded.head",
            {"ns": ns, "name": name, "head": head},
        )

    def list_branches(self, ns: str) -> list[tuple[str, str]]:
        return [(r.name, r.head) for r in self.list_branch_rows(ns)]

    def get_branch_row(self, ns: str, name: str) -> BranchRow | None:
        sql = f"SELECT {BRANCH_COLS} FROM branches WHERE ns = %(ns)s AND name = %(name)s"
        rows = self._q(sql, {"ns": ns, "name": name})
        return branch_from_row(rows[0]) if rows else None

    def list_branch_rows(self, ns: str) -> list[BranchRow]:
        sql = f"SELECT {BRANCH_COLS} FROM branches WHERE ns = %(ns)s ORDER BY name"
        return [branch_from_row(r) for r in self._q(sql, {"ns": ns})]

    def put_branch_row(self, ns: str, row: BranchRow) -> None:
        names = BRANCH_COLS.split(", ")
        sets = ", ".join(f"{c} = excluded.{c}" for c in names[1:])
        self._q(
            f"INSERT INTO branches (ns, {BRANCH_COLS}) VALUES (%(ns)s, "
            + ", ".join(f"%({c})s" for c in names)
            + f") ON CONFLICT (ns, name) DO UPDATE SET {sets}",
            {"ns": ns, **dict(zip(names, branch_values(row), strict=True))},
        )

    def delete_branch(self, ns: str, name: str) -> None:
        self._ids("DELETE FROM branches WHERE ns = %(ns)s AND name = ANY(%(ids)s)", ns, [name])

    def _append(
        self, table: str, counter: str, cols: str, types: str, ns: str, rows: list[Any]
    ) -> None:
        """Insert ``rows`` numbered on from the namespace's highest ``counter``
        (counted under the namespace lock, so numbers never collide)."""
        if rows:
            self._q(
                f"INSERT INTO {table} (ns, {counter}, {cols}) SELECT %(ns)s, "
                f"(SELECT coalesce(max({counter}), 0) FROM {table} WHERE ns = %(ns)s) + u.i, "
                + ", ".join("u." + c for c in cols.split(", "))
                + " FROM "
                + unnest(cols + ", i", types, ordinality=True),
                {"ns": ns, **columns(rows, len(types.split(",")))},
            )

    def add_head_moves(self, ns: str, moves: list[HeadMove]) -> None:
        self._append(
            "head_moves", "n", MOVE_COLS, "text, text, text, text, text, float8", ns,
            [(m.branch, m.from_head, m.to_head, m.why, m.actor, m.at) for m in moves],
        )  # fmt: skip

    def head_moves(self, ns: str, name: str) -> list[HeadMove]:
        sql = f"SELECT {MOVE_COLS} FROM head_moves WHERE ns = %(ns)s AND branch = %(b)s ORDER BY n"
        return [move_from_row(ns, r) for r in self._q(sql, {"ns": ns, "b": name})]

    def get_snapshot(self, ns: str, name: str) -> Snapshot | None:
        sql = f"SELECT {SNAPSHOT_COLS} FROM snapshots WHERE ns = %(ns)s AND name = %(name)s"
        rows = self._q(sql, {"ns": ns, "name": name})
        return snapshot_from_row(ns, rows[0]) if rows else None

    def put_snapshot(self, ns: str, snap: Snapshot) -> None:
        self._q(
            f"INSERT INTO snapshots (ns, {SNAPSHOT_COLS}) VALUES (%(ns)s, %(n)s, %(b)s, %(e)s, "
            "%(t)s) ON CONFLICT (ns, name) DO UPDATE SET branch = excluded.branch, "
            "event = excluded.event, created_at = excluded.created_at",
            {"ns": ns, "n": snap.name, "b": snap.branch, "e": snap.event, "t": snap.created_at},
        )

    def list_snapshots(self, ns: str) -> list[Snapshot]:
        sql = f"SELECT {SNAPSHOT_COLS} FROM snapshots WHERE ns = %(ns)s ORDER BY name"
        return [snapshot_from_row(ns, r) for r in self._q(sql, {"ns": ns})]

    # lifecycle and erasure ------------------------------------------------------
    def has_lifecycle(self, ns: str) -> bool:
        rows = self._q(
            "SELECT EXISTS (SELECT 1 FROM life WHERE ns = %(ns)s) OR EXISTS (SELECT 1 FROM "
            "records WHERE ns = %(ns)s AND (expires_at IS NOT NULL OR valid_from IS NOT NULL "
            "OR valid_to IS NOT NULL))",
            {"ns": ns},
        )
        return bool(rows[0][0])

    def get_life(self, ns: str, ids: Iterable[str]) -> dict[str, LifeRow]:
        sql = f"SELECT {LIFE_COLS} FROM life WHERE ns = %(ns)s AND id = ANY(%(ids)s)"
        return {r[0]: LifeRow(r[1], r[2], r[3], r[4]) for r in self._ids(sql, ns, ids)}

    def put_life(self, ns: str, rows: dict[str, LifeRow]) -> None:
        if rows:
            self._q(
                f"INSERT INTO life (ns, {LIFE_COLS}) SELECT %(ns)s, u.* FROM "
                + unnest(LIFE_COLS, "text, float8, float8, int4, float8")
                + " ON CONFLICT (ns, id) DO UPDATE SET archived_at = excluded.archived_at, "
                "restored_at = excluded.restored_at, uses = excluded.uses, "
                "last_used = excluded.last_used",
                {
                    "ns": ns,
                    **columns(
                        [(i, r.archived_at, r.restored_at, r.uses, r.last_used)
                         for i, r in rows.items()],
                        5,
                    ),
                },
            )  # fmt: skip

    def expired_records(self, ns: str, now: float) -> list[str]:
        sql = "SELECT id FROM records WHERE ns = %(ns)s AND expires_at <= %(now)s ORDER BY seq"
        return [r[0] for r in self._q(sql, {"ns": ns, "now": now})]

    def records_with_sources(self, ns: str, event_ids: Iterable[str]) -> list[str]:
        # A scan of the namespace: erasure is rare, and sources are not indexed by event.
        sql = (
            "SELECT id FROM records WHERE ns = %(ns)s "
            "AND string_to_array(sources, %(sep)s) && %(ids)s::text[] ORDER BY seq"
        )
        want = list(event_ids)
        return [r[0] for r in self._q(sql, {"ns": ns, "sep": SEP, "ids": want})] if want else []

    def records_of_kind(self, ns: str, kind: str) -> list[RecordRow]:
        return self._records("kind = %(kind)s ORDER BY seq", {"ns": ns, "kind": kind})

    def delete_records(self, ns: str, ids: list[str]) -> None:
        self._erased()
        for table, col in (("records", "id"), ("life", "id"), ("record_waits", "record")):
            self._delete(table, col, ns, ids)

    def erase_event(self, ns: str, event_id: str) -> None:
        self._erased()
        self._ids(
            "UPDATE events SET content = '', meta = NULL WHERE ns = %(ns)s AND id = ANY(%(ids)s)",
            ns,
            [event_id],
        )

    def drop_namespace(self, ns: str) -> None:
        self._erased()
        for table in (
            "events", "waits", "segments", "records", "record_waits", "branches",
            "head_moves", "snapshots", "life",
        ):  # fmt: skip
            self._q(f"DELETE FROM {table} WHERE ns = %(ns)s", {"ns": ns})
        # The name (often a user id or an email) goes from the audit lines too:
        # they stay (ids and ops, never content) under a name no one can guess.
        detached = f"\x01purged {uuid.uuid4().hex}"
        self._q("UPDATE audit SET ns = %(to)s WHERE ns = %(ns)s", {"ns": ns, "to": detached})
        self._seg_cache = {k: v for k, v in self._seg_cache.items() if k[0] != ns}

    # audit --------------------------------------------------------------------
    def add_audit(self, ns: str, entries: list[AuditEntry]) -> None:
        self._append(
            "audit", "seq", "at, actor, op, ids", "float8, text, text, text", ns,
            [(e.at, e.actor, e.op, SEP.join(e.ids)) for e in entries],
        )  # fmt: skip

    def list_events(self, ns: str, offset: int, limit: int) -> list[EventRow]:
        # No arrival counter here: write time, then place in the graph, then id.
        sql = (
            f"SELECT {EVENT_COLS} FROM events WHERE ns = %(ns)s "
            "ORDER BY created_at, seg NULLS LAST, seq, id LIMIT %(limit)s OFFSET %(offset)s"
        )
        rows = self._q(sql, {"ns": ns, "limit": limit, "offset": offset})
        return [event_from_row(ns, r) for r in rows]

    def list_records(self, ns: str, offset: int, limit: int) -> list[RecordRow]:
        sql = (
            f"SELECT {REC_COLS} FROM records WHERE ns = %(ns)s "
            "ORDER BY seq LIMIT %(limit)s OFFSET %(offset)s"
        )
        rows = self._q(sql, {"ns": ns, "limit": limit, "offset": offset})
        return [record_from_row(ns, r) for r in rows]

    def audit(self, ns: str, since: float | None) -> list[AuditEntry]:
        sql = (
            "SELECT seq, at, actor, op, ids FROM audit WHERE ns = %(ns)s AND at >= %(low)s "
            "ORDER BY seq"
        )
        low = float("-inf") if since is None else since
        return [audit_from_row(ns, r) for r in self._q(sql, {"ns": ns, "low": low})]
