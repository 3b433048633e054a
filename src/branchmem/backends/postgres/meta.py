"""The PostgreSQL backend's branches, snapshots, lifecycle, erasure, vectors
and audit log (the event graph and records are `postgres`'s). Every statement
filters by one namespace, as there."""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ...branch_types import AuditEntry, HeadMove, Snapshot
from ..base import BranchRow, EventRow, LifeRow, RecordRow
from ..sqlrows import (
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
    event_from_row,
    move_from_row,
    record_from_row,
    snapshot_from_row,
)
from .rows import PgRows
from .sql import IDS

HAS_LIFECYCLE = (
    "SELECT EXISTS (SELECT 1 FROM life WHERE ns = %(ns)s) OR EXISTS (SELECT 1 FROM "
    "records WHERE ns = %(ns)s AND (expires_at IS NOT NULL OR valid_from IS NOT NULL "
    "OR valid_to IS NOT NULL))"
)


class PgMeta(PgRows):
    """Statements of the `Backend` interface beyond the event graph and records."""

    if TYPE_CHECKING:

        def _drop_jobs(self, ns: str) -> None: ...  # `postgres.jobs`

    def _records(self, where: str, params: dict[str, Any]) -> list[RecordRow]:
        ns = params["ns"]
        sql = f"SELECT {REC_COLS} FROM records WHERE ns = %(ns)s AND {where}"
        return [record_from_row(ns, r) for r in self._q(sql, params)]

    def _delete(self, table: str, col: str, ns: str, ids: list[str]) -> None:
        if ids:
            sql = f"DELETE FROM {table} WHERE ns = %(ns)s AND {col} = {IDS}"
            self._q(sql, {"ns": ns, "ids": SEP.join(ids)}, defer=True)

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
        self._prefetch_moves_top(ns, name)
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

    def swap_head(self, ns: str, name: str, old: str, new: str, at: float) -> bool:
        sql = (
            "UPDATE branches SET head = %(new)s, updated_at = %(at)s WHERE ns = %(ns)s "
            "AND name = %(name)s AND head = %(old)s RETURNING 1"
        )
        return bool(self._q(sql, {"ns": ns, "name": name, "old": old, "new": new, "at": at}))

    def delete_branch(self, ns: str, name: str) -> None:
        self._ids(
            f"DELETE FROM branches WHERE ns = %(ns)s AND name = {IDS}",
            ns,
            [name],
        )

    def _append(
        self,
        table: str,
        counter: str,
        cols: str,
        types: str,
        ns: str,
        rows: list[Any],
        branch: str = "",
    ) -> None:
        """Insert ``rows`` numbered on from the highest ``counter`` of the
        namespace (of head moves: of ``branch``) (`PgRows._numbers`)."""
        if rows:
            first = self._numbers(table, ns, len(rows), branch)
            numbered = [(first + i, *r) for i, r in enumerate(rows)]
            self._insert(table, f"{counter}, {cols}", f"int8, {types}", ns, numbered)

    def add_head_moves(self, ns: str, moves: list[HeadMove]) -> None:
        # Numbered per branch: only a branch's own moves are read in order.
        by_branch: dict[str, list[tuple[Any, ...]]] = {}
        for m in moves:
            row = (m.branch, m.from_head, m.to_head, m.why, m.actor, m.at)
            by_branch.setdefault(m.branch, []).append(row)
        for branch, rows in by_branch.items():
            self._append(
                "head_moves", "n", MOVE_COLS, "text, text, text, text, text, float8", ns, rows,
                branch,
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
        return bool(self._view_answer(("life", ns, None), HAS_LIFECYCLE, {"ns": ns}))

    def get_life(self, ns: str, ids: Iterable[str]) -> dict[str, LifeRow]:
        rows = self._by_key(LIFE_COLS, "life", "id", ns, ids)
        return {r[0]: LifeRow(r[1], r[2], r[3], r[4]) for r in rows}

    def put_life(self, ns: str, rows: dict[str, LifeRow]) -> None:
        self._insert(
            "life", LIFE_COLS, "text, float8, float8, int4, float8", ns,
            [(i, r.archived_at, r.restored_at, r.uses, r.last_used) for i, r in rows.items()],
            " ON CONFLICT (ns, id) DO UPDATE SET archived_at = excluded.archived_at, "
            "restored_at = excluded.restored_at, uses = excluded.uses, "
            "last_used = excluded.last_used",
            defer=False,
        )  # fmt: skip

    def expired_records(self, ns: str, now: float) -> list[str]:
        sql = "SELECT id FROM records WHERE ns = %(ns)s AND expires_at <= %(now)s ORDER BY seq"
        return [r[0] for r in self._q(sql, {"ns": ns, "now": now})]

    def consolidations(self, ns: str) -> list[str]:
        # The partial index `records_consolidated`'s own condition, so that it
        # is read (and no ORDER BY, which could send the planner down the key).
        sql = (
            "SELECT seq, id FROM records WHERE ns = %(ns)s "
            "AND strpos(meta, '\"consolidated_from\"') > 0"
        )
        return [str(rid) for _, rid in sorted(self._q(sql, {"ns": ns}))]

    def records_with_sources(self, ns: str, event_ids: Iterable[str]) -> list[str]:
        # A scan of the namespace: erasure is rare, and sources are not indexed by event.
        sql = (
            "SELECT id FROM records WHERE ns = %(ns)s "
            "AND string_to_array(sources, %(sep)s) && string_to_array(%(ids)s, %(sep)s) "
            "ORDER BY seq"
        )
        want = list(event_ids)
        return (
            [r[0] for r in self._q(sql, {"ns": ns, "sep": SEP, "ids": SEP.join(want)})]
            if want
            else []
        )

    def records_of_kind(self, ns: str, kind: str) -> list[RecordRow]:
        return self._records("kind = %(kind)s ORDER BY seq", {"ns": ns, "kind": kind})

    def delete_records(self, ns: str, ids: list[str]) -> None:
        self._erased()
        for table, col in (
            ("records", "id"), ("life", "id"), ("record_waits", "record"), ("vectors", "id"),
            ("terms", "id"),
        ):  # fmt: skip
            self._delete(table, col, ns, ids)

    def erase_event(self, ns: str, event_id: str) -> None:
        self._erased()
        self._ids(
            f"UPDATE events SET content = '', meta = NULL WHERE ns = %(ns)s AND id = {IDS}",
            ns,
            [event_id],
        )

    def drop_namespace(self, ns: str) -> None:
        self._dropped(ns)  # (its write counter: `conn.PgConnection._dropped`)
        self._drop_jobs(ns)  # (under the store-wide key: `postgres.jobs`)
        for table in (
            "events", "waits", "segments", "records", "record_waits", "branches",
            "head_moves", "snapshots", "life", "vectors", "terms",
        ):  # fmt: skip
            self._q(f"DELETE FROM {table} WHERE ns = %(ns)s", {"ns": ns}, defer=True)
        # The name (often a user id or an email) goes from the audit lines too:
        # they stay (ops, times and actors; not their ids, which integrations
        # build from thread ids and the like) under a name no one can guess.
        # Copied, then deleted: no statement rewrites a key's namespace (a
        # distributed table's shard column cannot be updated) or spans two.
        lines = self._q(
            "SELECT seq, at, actor, op, '' FROM audit WHERE ns = %(ns)s ORDER BY seq", {"ns": ns}
        )
        if lines:
            self._insert(
                "audit", "seq, at, actor, op, ids", "int8, float8, text, text, text",
                f"\x01purged {uuid.uuid4().hex}", lines,
            )  # fmt: skip
            self._q("DELETE FROM audit WHERE ns = %(ns)s", {"ns": ns}, defer=True)

    # vectors and tokens ---------------------------------------------------------
    def get_vectors(
        self, ns: str, embedder: str, ids: Iterable[str]
    ) -> dict[str, tuple[str, bytes]]:
        return self._blobs("SELECT id, digest, vec FROM vectors WHERE ns = %(ns)s "
                           "AND embedder = %(e)s", ns, embedder, ids)  # fmt: skip

    def put_vectors(self, ns: str, embedder: str, rows: list[tuple[str, str, bytes]]) -> None:
        self._put_blobs("vectors", "embedder", "vec", ns, embedder, rows)

    def get_terms(
        self, ns: str, tokenizer: str, ids: Iterable[str]
    ) -> dict[str, tuple[str, bytes]]:
        return self._blobs("SELECT id, digest, toks FROM terms WHERE ns = %(ns)s "
                           "AND tokenizer = %(e)s", ns, tokenizer, ids)  # fmt: skip

    def put_terms(self, ns: str, tokenizer: str, rows: list[tuple[str, str, bytes]]) -> None:
        self._put_blobs("terms", "tokenizer", "toks", ns, tokenizer, rows)

    def _blobs(
        self, select: str, ns: str, key: str, ids: Iterable[str]
    ) -> dict[str, tuple[str, bytes]]:
        want = list(ids)
        if not want:
            return {}
        rows = self._q(f"{select} AND id = {IDS}", {"ns": ns, "e": key, "ids": SEP.join(want)})
        return {rid: (digest, bytes(blob)) for rid, digest, blob in rows}

    def _put_blobs(
        self, table: str, key_col: str, col: str, ns: str, key: str,
        rows: list[tuple[str, str, bytes]],
    ) -> None:  # fmt: skip
        # Only for records still stored: a record purged meanwhile gets none.
        # (Under the namespace's lock, none is purged between this look and the insert.)
        if rows:
            stored = {r[0] for r in self._by_key("id", "records", "id", ns, [r[0] for r in rows])}
            self._insert(
                table, f"{key_col}, id, digest, {col}", "text, text, text, bytea", ns,
                [(key, *r) for r in rows if r[0] in stored],
                f" ON CONFLICT (ns, {key_col}, id) DO UPDATE SET digest = excluded.digest, "
                f"{col} = excluded.{col}",
            )  # fmt: skip

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
