"""SQLite tables around the graph: branches, head moves, snapshots, the
lifecycle, erasure, vectors and tokens, listing and the audit log."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable
from copy import copy
from itertools import compress
from operator import itemgetter
from typing import Any

from ...branch_types import AuditEntry, HeadMove, Snapshot
from ..base import (
    BranchRow,
    Columns,
    EventRow,
    LifeRow,
    RecordRow,
)
from ..sqlrows import (
    REC_COLS,
    SEP,
    branch_from_row,
)
from .parts import SQLiteParts, chunks, marks

WHOLE_MIN = 2000
"""Ids from which stored vectors or tokens are read in one pass over the namespace's."""


_FIRST, _SECOND, _THIRD = itemgetter(0), itemgetter(1), itemgetter(2)


def _as_map(cols: Columns) -> dict[str, tuple[str, bytes]]:
    ids, digests, blobs = cols
    return dict(zip(ids, zip(digests, blobs, strict=True), strict=True))


def _whole(
    db: Any, table: str, keycol: str, col: str, args: tuple[Any, ...], want: list[str]
) -> Columns | None:
    """`MetaTables._columns` of many ids in one pass over the key's rows of
    ``table``, or None when the ids are a small part of those rows (a lookup
    per id costs less). In rowid order (the order rows were written in; a
    walk of the key's index would read the table's pages at random), by a
    plain scan when the key holds most of the table's rows (no index at all),
    and split into columns by built-in loops (a comprehension over 100,000
    rows cost more than reading them)."""
    cols, under = f"id, digest, {col}", f"WHERE ns=? AND {keycol}=?"
    # The table's top rowid bounds its rows from above in one step (a count
    # would read every namespace's); deletions only make it err toward rowids.
    (top,) = db.execute(f"SELECT max(rowid) FROM {table}").fetchone()
    top = top or 0
    scan = len(want) * 2 >= top  # at most twice the rows asked for: no count needed
    if not scan:
        (held,) = db.execute(f"SELECT count(*) FROM {table} {under}", args).fetchone()
        if len(want) * 4 < held:
            return None
        scan = held * 2 >= top
    if scan:
        sql = f"SELECT {cols} FROM {table} NOT INDEXED {under}"
    else:
        sql = f"SELECT {cols} FROM {table} WHERE rowid IN (SELECT rowid FROM {table} {under})"
    rows = db.execute(sql, args).fetchall()
    ids = list(map(_FIRST, rows))
    # Usually every record's row, in the records' order; else the rows of other ids left out.
    if ids != want:
        keep = list(map(set(want).__contains__, ids))
        if not all(keep):
            rows = list(compress(rows, keep))
            ids = list(map(_FIRST, rows))
    return ids, list(map(_SECOND, rows)), list(map(_THIRD, rows))


_UNKNOWN = object()
_HELD_BRANCHES = 4096
"""Branch rows kept per connection (`MetaTables._hold_branch`)."""


class MetaTables(SQLiteParts):
    """Branches, lifecycle, erasure, vectors and audit of one SQLite store
    (mixed into `SQLiteBackend`)."""

    # branches -----------------------------------------------------------------
    def get_branch(self, ns: str, name: str) -> str | None:
        nid = self._ns(ns)
        if nid is None:
            return None
        held = self._branch_rows.get((nid, name), _UNKNOWN)
        if held is not _UNKNOWN:
            return None if held is None else held.head
        row = self._db.execute(
            "SELECT head FROM branches WHERE ns=? AND name=?", (nid, name)
        ).fetchone()
        return None if row is None else str(row[0])

    def set_branch(self, ns: str, name: str, head: str) -> None:
        nid = self._wns(ns)
        self._keep_branch(nid, name, head)
        self._branch_rows.pop((nid, name), None)
        self._db.execute(
            "INSERT INTO branches VALUES (?,?,?) "
            "ON CONFLICT (ns, name) DO UPDATE SET head=excluded.head",
            (nid, name, head),
        )

    def list_branches(self, ns: str) -> list[tuple[str, str]]:
        nid = self._ns(ns)
        if nid is None:
            return []
        known = self._branch_list.get(nid)
        if known is None:
            sql = "SELECT name, head FROM branches WHERE ns=? ORDER BY name"
            known = [(str(a), str(b)) for a, b in self._db.execute(sql, (nid,))]
            self._branch_list[nid] = known
        return list(known)

    def _keep_branch(self, nid: int, name: str, head: str) -> None:
        """Keep the namespace's listed branches (when held) as this write leaves
        them: ``name`` at ``head``, in name order (SQLite's, by code point)."""
        known = self._branch_list.get(nid)
        if known is None:
            return
        i = bisect_left(known, (name,))
        if i < len(known) and known[i][0] == name:
            known[i] = (name, head)
        else:
            known.insert(i, (name, head))

    _BRANCH_COLS = "name, head, fork_point, parent, created_at, updated_at"

    _branch = staticmethod(branch_from_row)

    def get_branch_row(self, ns: str, name: str) -> BranchRow | None:
        nid = self._ns(ns)
        if nid is None:
            return None
        held = self._branch_rows.get((nid, name), _UNKNOWN)
        if held is not _UNKNOWN:  # a copy: callers move a head by changing the row
            return None if held is None else copy(held)
        row = self._db.execute(
            f"SELECT {self._BRANCH_COLS} FROM branches WHERE ns=? AND name=?", (nid, name)
        ).fetchone()
        out = None if row is None else self._branch(row)
        self._hold_branch(nid, name, None if out is None else copy(out))
        return out

    def _hold_branch(self, nid: int, name: str, row: BranchRow | None) -> None:
        """Keep a branch row as read or written on this connection: it holds
        until another connection commits (`_forget_volatile`, on a moved
        ``data_version``), a rollback, or an erasure."""
        held = self._branch_rows
        if len(held) >= _HELD_BRANCHES:
            held.clear()
        held[(nid, name)] = row

    def list_branch_rows(self, ns: str) -> list[BranchRow]:
        nid = self._ns(ns)
        if nid is None:
            return []
        sql = f"SELECT {self._BRANCH_COLS} FROM branches WHERE ns=? ORDER BY name"
        return [self._branch(r) for r in self._db.execute(sql, (nid,))]

    def put_branch_row(self, ns: str, row: BranchRow) -> None:
        nid = self._wns(ns)
        self._keep_branch(nid, row.name, row.head)
        self._db.execute(
            f"INSERT OR REPLACE INTO branches (ns, {self._BRANCH_COLS}) VALUES (?,?,?,?,?,?,?)",
            (nid, row.name, row.head, row.fork_point, row.parent, row.created_at, row.updated_at),
        )
        self._hold_branch(nid, row.name, copy(row))

    def delete_branch(self, ns: str, name: str) -> None:
        nid = self._wns(ns)
        self._branch_list.pop(nid, None)
        self._branch_rows.pop((nid, name), None)
        self._db.execute("DELETE FROM branches WHERE ns=? AND name=?", (nid, name))

    def add_head_moves(self, ns: str, moves: list[HeadMove]) -> None:
        nid = self._wns(ns)
        self._db.executemany(
            "INSERT INTO head_moves VALUES (?,?,?,?,?,?,?)",
            ((nid, m.branch, m.from_head, m.to_head, m.why, m.actor, m.at) for m in moves),
        )

    def head_moves(self, ns: str, name: str) -> list[HeadMove]:
        nid = self._ns(ns)
        if nid is None:
            return []
        sql = (
            "SELECT branch, from_head, to_head, why, actor, at FROM head_moves "
            "WHERE ns=? AND branch=? ORDER BY rowid"
        )
        return [
            HeadMove(b, f, t, why, actor, at, ns)
            for b, f, t, why, actor, at in self._db.execute(sql, (nid, name))
        ]

    def get_snapshot(self, ns: str, name: str) -> Snapshot | None:
        nid = self._ns(ns)
        if nid is None:
            return None
        row = self._db.execute(
            "SELECT name, branch, event, created_at FROM snapshots WHERE ns=? AND name=?",
            (nid, name),
        ).fetchone()
        return None if row is None else Snapshot(row[0], row[1], row[2], ns, row[3])

    def put_snapshot(self, ns: str, snap: Snapshot) -> None:
        nid = self._wns(ns)
        self._db.execute(
            "INSERT OR REPLACE INTO snapshots VALUES (?,?,?,?,?)",
            (nid, snap.name, snap.branch, snap.event, snap.created_at),
        )

    def list_snapshots(self, ns: str) -> list[Snapshot]:
        nid = self._ns(ns)
        if nid is None:
            return []
        sql = "SELECT name, branch, event, created_at FROM snapshots WHERE ns=? ORDER BY name"
        return [Snapshot(r[0], r[1], r[2], ns, r[3]) for r in self._db.execute(sql, (nid,))]

    # lifecycle and erasure ------------------------------------------------------
    def has_lifecycle(self, ns: str) -> bool:
        nid = self._ns(ns)
        if nid is None:
            return False
        # The second test is answered by the partial index records_timed (named:
        # the planner would rather scan the namespace in the records' key).
        row = self._db.execute(
            "SELECT EXISTS (SELECT 1 FROM life WHERE ns=?) OR EXISTS (SELECT 1 FROM records "
            "INDEXED BY records_timed WHERE ns=? AND (expires_at IS NOT NULL "
            "OR valid_from IS NOT NULL OR valid_to IS NOT NULL))",
            (nid, nid),
        ).fetchone()
        return bool(row[0])

    def get_life(self, ns: str, ids: Iterable[str]) -> dict[str, LifeRow]:
        nid = self._ns(ns)
        if nid is None:
            return {}
        out: dict[str, LifeRow] = {}
        for chunk in chunks(list(ids)):
            sql = (
                "SELECT id, archived_at, restored_at, uses, last_used FROM life "
                f"WHERE ns=? AND id IN ({marks(len(chunk))})"
            )
            for rid, a, r, u, lu in self._db.execute(sql, (nid, *chunk)):
                out[rid] = LifeRow(a, r, u, lu)
        return out

    def put_life(self, ns: str, rows: dict[str, LifeRow]) -> None:
        nid = self._wns(ns)
        self._db.executemany(
            "INSERT OR REPLACE INTO life VALUES (?,?,?,?,?,?)",
            ((nid, i, r.archived_at, r.restored_at, r.uses, r.last_used) for i, r in rows.items()),
        )

    def expired_records(self, ns: str, now: float) -> list[str]:
        nid = self._ns(ns)
        if nid is None:
            return []
        sql = (
            "SELECT id FROM records INDEXED BY records_timed "
            "WHERE ns=? AND expires_at<=? ORDER BY seq"
        )
        return [r[0] for r in self._db.execute(sql, (nid, now))]

    def records_with_sources(self, ns: str, event_ids: Iterable[str]) -> list[str]:
        nid = self._ns(ns)
        if nid is None:
            return []
        want = set(event_ids)
        # A scan: erasure is rare, and sources are not indexed by event.
        sql = "SELECT id, sources FROM records WHERE ns=?"
        return [
            rid for rid, src in self._db.execute(sql, (nid,)) if want.intersection(src.split(SEP))
        ]

    def consolidations(self, ns: str) -> list[str]:
        nid = self._ns(ns)
        if nid is None:
            return []
        # The very condition of the partial index `records_consolidated`, so that
        # the planner reads it (a read-only store of version 11 lacks it: a
        # scan), and no ORDER BY: by seq, the planner would walk the key instead.
        sql = "SELECT seq, id FROM records WHERE ns=? AND instr(meta, '\"consolidated_from\"') > 0"
        return [str(rid) for _, rid in sorted(self._db.execute(sql, (nid,)))]

    def records_of_kind(self, ns: str, kind: str) -> list[RecordRow]:
        nid = self._ns(ns)
        if nid is None:
            return []
        sql = f"SELECT {REC_COLS} FROM records WHERE ns=? AND kind=? ORDER BY seq"
        return [self._record(ns, r) for r in self._db.execute(sql, (nid, kind))]

    def delete_records(self, ns: str, ids: list[str]) -> None:
        nid = self._wns(ns)
        self._mark_erasure()
        self._top.pop(nid, None)
        for table, col in (
            ("records", "id"), ("life", "id"), ("record_waits", "record"), ("vectors", "id"),
            ("terms", "id"),
        ):  # fmt: skip
            self._db.executemany(
                f"DELETE FROM {table} WHERE ns=? AND {col}=?", ((nid, i) for i in ids)
            )

    def erase_event(self, ns: str, event_id: str) -> None:
        nid = self._wns(ns)
        self._mark_erasure()
        self._db.execute(
            "UPDATE events SET content='', meta=NULL WHERE ns=? AND id=?", (nid, event_id)
        )

    def drop_namespace(self, ns: str) -> None:
        nid = self._ns(ns)
        if nid is None:
            return
        self._mark_erasure()
        for table in (
            "events", "waits", "segments", "records", "record_waits", "branches",
            "head_moves", "snapshots", "life", "vectors", "terms", "jobs",
        ):  # fmt: skip
            self._db.execute(f"DELETE FROM {table} WHERE ns=?", (nid,))
        # The name (often a user id or an email) goes; the number stays, never
        # reused, holding the audit lines (ops, times and actors; not their ids,
        # which integrations build from thread ids and the like: `branchmem.derived`).
        self._db.execute("UPDATE audit SET ids='' WHERE ns=?", (nid,))
        self._db.execute("UPDATE namespaces SET name=? WHERE id=?", (f"\x00purged {nid}", nid))
        self._ns_ids.pop(ns, None)
        self._seg_cache = {k: v for k, v in self._seg_cache.items() if k[0] != nid}
        self._top.pop(nid, None)

    # vectors and tokens ---------------------------------------------------------
    def get_vectors(
        self, ns: str, embedder: str, ids: Iterable[str]
    ) -> dict[str, tuple[str, bytes]]:
        return _as_map(self._columns("vectors", "embedder", "vec", ns, embedder, list(ids)))

    def vector_columns(self, ns: str, embedder: str, ids: list[str]) -> Columns:
        return self._columns("vectors", "embedder", "vec", ns, embedder, ids)

    def put_vectors(self, ns: str, embedder: str, rows: list[tuple[str, str, bytes]]) -> None:
        self._put_blobs("vectors", ns, embedder, rows)

    def get_terms(
        self, ns: str, tokenizer: str, ids: Iterable[str]
    ) -> dict[str, tuple[str, bytes]]:
        return _as_map(self._columns("terms", "tokenizer", "toks", ns, tokenizer, list(ids)))

    def term_columns(self, ns: str, tokenizer: str, ids: list[str]) -> Columns:
        return self._columns("terms", "tokenizer", "toks", ns, tokenizer, ids)

    def put_terms(self, ns: str, tokenizer: str, rows: list[tuple[str, str, bytes]]) -> None:
        self._put_blobs("terms", ns, tokenizer, rows)

    def _columns(
        self, table: str, keycol: str, col: str, ns: str, key: str, want: list[str]
    ) -> Columns:
        nid = self._ns(ns)
        if nid is None:
            return [], [], []
        if len(want) >= WHOLE_MIN and table in self._rowid:
            # Many ids: one pass over the namespace's rows (under its key) costs
            # less than a lookup per id, unless the ids are a small part of them.
            whole = _whole(self._db, table, keycol, col, (nid, key), want)
            if whole is not None:
                return whole
        ids: list[str] = []
        digests: list[str] = []
        blobs: list[bytes] = []
        sql = f"SELECT id, digest, {col} FROM {table} WHERE ns=? AND {keycol}=? AND id IN "
        for chunk in chunks(list(dict.fromkeys(want))):
            for rid, digest, blob in self._db.execute(
                f"{sql}({marks(len(chunk))})", (nid, key, *chunk)
            ):
                ids.append(rid)
                digests.append(digest)
                blobs.append(blob)
        return ids, digests, blobs

    def _put_blobs(self, table: str, ns: str, key: str, rows: list[tuple[str, str, bytes]]) -> None:
        nid = self._wns(ns)
        # Only for records still stored: a record purged meanwhile gets none.
        self._db.executemany(
            f"INSERT OR REPLACE INTO {table} SELECT ?, ?, ?, ?, ? "
            "WHERE EXISTS (SELECT 1 FROM records WHERE ns=? AND id=?)",
            ((nid, key, rid, digest, blob, nid, rid) for rid, digest, blob in rows),
        )

    # audit --------------------------------------------------------------------
    def list_events(self, ns: str, offset: int, limit: int) -> list[EventRow]:
        nid = self._ns(ns)
        if nid is None:
            return []
        sql = (
            "SELECT id, parents, role, content, meta, created_at, seg, seq FROM events "
            "WHERE ns=? ORDER BY rowid LIMIT ? OFFSET ?"
        )
        return [self._event(ns, r) for r in self._db.execute(sql, (nid, limit, offset))]

    def list_records(self, ns: str, offset: int, limit: int) -> list[RecordRow]:
        nid = self._ns(ns)
        if nid is None:
            return []
        sql = f"SELECT {REC_COLS} FROM records WHERE ns=? ORDER BY seq LIMIT ? OFFSET ?"
        return [self._record(ns, r) for r in self._db.execute(sql, (nid, limit, offset))]

    def add_audit(self, ns: str, entries: list[AuditEntry]) -> None:
        nid = self._wns(ns)
        # Numbered within the namespace: no tenant sees another's volume. The
        # last number is kept while no other connection writes.
        top = self._audit_top.get(nid)
        if top is None:
            row = self._db.execute("SELECT max(seq) FROM audit WHERE ns=?", (nid,)).fetchone()
            top = int(row[0]) if row and row[0] is not None else 0
        self._db.executemany(
            "INSERT INTO audit VALUES (?,?,?,?,?,?)",
            [
                (nid, top + i, e.at, e.actor, e.op, SEP.join(e.ids))
                for i, e in enumerate(entries, 1)
            ],
        )
        self._audit_top[nid] = top + len(entries)

    def audit(self, ns: str, since: float | None) -> list[AuditEntry]:
        nid = self._ns(ns)
        if nid is None:
            return []
        sql = "SELECT seq, at, actor, op, ids FROM audit WHERE ns=? AND at>=? ORDER BY seq"
        low = float("-inf") if since is None else since
        return [
            AuditEntry(at, op, tuple(ids.split(SEP)) if ids else (), actor, ns, seq)
            for seq, at, actor, op, ids in self._db.execute(sql, (nid, low))
        ]

    # query logs ---------------------------------------------------------------
    def query_logs(self) -> list[str]:
        return [r[0] for r in self._db.execute("SELECT path FROM query_logs ORDER BY path")]

    def add_query_log(self, path: str) -> None:
        self._db.execute("INSERT OR IGNORE INTO query_logs VALUES (?)", (path,))
