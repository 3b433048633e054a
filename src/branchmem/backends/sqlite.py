"""SQLite backend: the embedded default, one file in WAL mode.

Every key leads with the namespace (an integer id) so that one namespace is
one contiguous slice of each index. The gate's read is a join of the
anchor's few ``(segment, up_to_seq)`` ranges against ``records(ns, seg, pos)``.
sqlite3 is imported here only, and its errors become `StorageError` here.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from itertools import chain
from pathlib import Path
from typing import Any

from ..branch_types import AuditEntry, HeadMove, Snapshot
from ..errors import ReadOnlyStore, StorageError, StoreLocked
from ..model import Memory
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
)
from .sqlite_schema import check_readonly, prepare
from .sqlrows import (
    REC_COLS,
    SEP,
    branch_from_row,
    cached_segments,
    event_from_row,
    event_values,
    record_from_row,
    record_values,
)

CHUNK = 400  # ids per IN (...) list, well under SQLite's variable limit

SCHEMA = """
CREATE TABLE IF NOT EXISTS store_info (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS namespaces (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
-- A rowid table: rows append in arrival order, and only the small (ns, id)
-- index takes random inserts (measured faster to ingest than a clustered key).
CREATE TABLE IF NOT EXISTS events (
    ns INTEGER NOT NULL, id TEXT NOT NULL, parents TEXT, role TEXT NOT NULL,
    content TEXT NOT NULL, meta TEXT, created_at REAL NOT NULL, seg INTEGER, seq INTEGER
);
CREATE UNIQUE INDEX IF NOT EXISTS events_id ON events (ns, id);
CREATE TABLE IF NOT EXISTS waits (
    ns INTEGER NOT NULL, parent TEXT NOT NULL, child TEXT NOT NULL,
    PRIMARY KEY (ns, parent, child)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS segments (
    ns INTEGER NOT NULL, seg INTEGER NOT NULL, parents TEXT NOT NULL, tip INTEGER NOT NULL,
    PRIMARY KEY (ns, seg)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS records (
    seq INTEGER PRIMARY KEY, ns INTEGER NOT NULL, id TEXT NOT NULL, kind TEXT NOT NULL,
    content TEXT NOT NULL, sources TEXT NOT NULL, key TEXT, importance REAL NOT NULL,
    meta TEXT, target TEXT, created_at REAL NOT NULL, seg INTEGER, pos INTEGER, extra TEXT,
    expires_at REAL, valid_from REAL, valid_to REAL,
    UNIQUE (ns, id)
);
CREATE INDEX IF NOT EXISTS records_pos ON records (ns, seg, pos) WHERE seg IS NOT NULL;
CREATE INDEX IF NOT EXISTS records_target ON records (ns, target) WHERE target IS NOT NULL;
CREATE INDEX IF NOT EXISTS records_timed ON records (ns)
    WHERE expires_at IS NOT NULL OR valid_from IS NOT NULL OR valid_to IS NOT NULL;
CREATE TABLE IF NOT EXISTS record_waits (
    ns INTEGER NOT NULL, event TEXT NOT NULL, record TEXT NOT NULL,
    PRIMARY KEY (ns, event, record)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS branches (
    ns INTEGER NOT NULL, name TEXT NOT NULL, head TEXT NOT NULL,
    fork_point TEXT, parent TEXT, created_at REAL, updated_at REAL,
    PRIMARY KEY (ns, name)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS head_moves (
    ns INTEGER NOT NULL, branch TEXT NOT NULL, from_head TEXT, to_head TEXT,
    why TEXT NOT NULL, actor TEXT, at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS head_moves_branch ON head_moves (ns, branch);
CREATE TABLE IF NOT EXISTS snapshots (
    ns INTEGER NOT NULL, name TEXT NOT NULL, branch TEXT NOT NULL, event TEXT NOT NULL,
    created_at REAL NOT NULL, PRIMARY KEY (ns, name)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS audit (
    seq INTEGER PRIMARY KEY, ns INTEGER NOT NULL, at REAL NOT NULL, actor TEXT,
    op TEXT NOT NULL, ids TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS audit_ns ON audit (ns, at);
CREATE TABLE IF NOT EXISTS life (
    ns INTEGER NOT NULL, id TEXT NOT NULL, archived_at REAL, restored_at REAL,
    uses INTEGER NOT NULL, last_used REAL, PRIMARY KEY (ns, id)
) WITHOUT ROWID;
-- Record vectors per embedder (float32 bytes), deleted with their record.
CREATE TABLE IF NOT EXISTS vectors (
    ns INTEGER NOT NULL, embedder TEXT NOT NULL, id TEXT NOT NULL, digest TEXT NOT NULL,
    vec BLOB NOT NULL, PRIMARY KEY (ns, embedder, id)
) WITHOUT ROWID;
"""

_REC_COLS = REC_COLS


def _chunks(items: Sequence[Any], n: int = CHUNK) -> Iterator[Sequence[Any]]:
    for i in range(0, len(items), n):
        yield items[i : i + n]


def _marks(n: int) -> str:
    return ",".join("?" * n)


def _insert_rows(db: sqlite3.Connection, head: str, ncols: int, rows: list[Any]) -> None:
    """``head`` (``INSERT INTO t (cols)``) for every row, many rows per statement.

    A multi-row ``VALUES`` list costs SQLite about a fifth less than one
    statement per row on a batch import. Statements stay within 999
    parameters, the limit of the oldest SQLite versions.
    """
    k = max(1, 999 // ncols)
    one = f"({_marks(ncols)})"
    full = len(rows) - len(rows) % k
    if full:
        flat = chain.from_iterable
        db.executemany(
            f"{head} VALUES {','.join([one] * k)}",
            (list(flat(rows[i : i + k])) for i in range(0, full, k)),
        )
    if full < len(rows):
        db.executemany(f"{head} VALUES {one}", rows[full:])


DURABILITY = {"full": "FULL", "normal": "NORMAL"}
"""``durability=`` -> SQLite's ``synchronous``: ``"full"`` (the default) syncs the
log at every commit, so a committed write survives a power cut; ``"normal"``
syncs at checkpoints only: faster to ingest, and a power cut (not a crash of
the process) may lose the last commits, but never corrupts the file."""


def _create_private(p: Path) -> None:
    """Create an empty store file readable by its owner only (SQLite gives its
    -wal and -shm files the same mode)."""
    try:
        os.close(os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except FileExistsError:
        pass  # another process created it first
    except OSError as exc:
        raise StorageError(f"cannot create SQLite store at {str(p)!r}: {exc}") from exc


def _check_existing_store(p: Path) -> None:
    """Refuse a path that is not already a branchmem store (for read-only commands)."""
    if p.is_dir():
        raise StorageError(f"no branchmem store at {str(p)!r}: it is a folder; pass the store file")
    if not p.is_file():
        raise StorageError(f"no branchmem store at {str(p)!r}: the file does not exist")
    try:
        uri = f"{p.resolve().as_uri()}?mode=ro"
        with sqlite3.connect(uri, uri=True) as db:
            found = db.execute(
                "SELECT 1 FROM sqlite_master WHERE type='table' AND name='store_info'"
            ).fetchone()
        db.close()
    except sqlite3.Error as exc:
        raise StorageError(f"no branchmem store at {str(p)!r}: {exc}") from exc
    if found is None:
        raise StorageError(
            f"no branchmem store at {str(p)!r}: it is an SQLite file, but not one that "
            "branchmem wrote; pass the path of a store"
        )


class SQLiteBackend:
    """One SQLite file (created if missing). Thread-safe through one lock.

    Several processes may open the same file: writes take SQLite's write lock
    (``BEGIN IMMEDIATE``) and only immutable facts (segment fork points,
    namespace ids) are cached in process. They are immutable until an erasure
    (a namespace dropped and rebuilt reuses segment numbers), so every
    transaction starts by reading the store's erasure counter (`_sync`) and
    drops them when another connection has moved it.
    """

    shares_rows = False

    def __init__(
        self,
        path: str | Path,
        *,
        create: bool = True,
        readonly: bool = False,
        busy_timeout: float = 30.0,
        durability: str = "full",
    ) -> None:
        self.path = str(path)
        self.readonly = readonly
        self.busy_timeout = busy_timeout
        p = Path(self.path)
        if not p.parent.is_dir():
            raise StorageError(
                f"cannot open SQLite store at {self.path!r}: the folder {str(p.parent)!r} "
                "does not exist; create it first"
            )
        fresh = not p.exists() or (p.is_file() and p.stat().st_size == 0)
        if readonly or not create or not fresh:
            # Before anything writes to it: another application's database (or any
            # other file) is refused and left exactly as it was.
            _check_existing_store(p)
        try:
            if readonly:
                self._db = sqlite3.connect(
                    f"{p.resolve().as_uri()}?mode=ro",
                    uri=True,
                    isolation_level=None,
                    check_same_thread=False,
                    timeout=busy_timeout,
                )
            else:
                if not p.exists():
                    _create_private(p)
                self._db = sqlite3.connect(
                    self.path, isolation_level=None, check_same_thread=False, timeout=busy_timeout
                )
                # Larger pages make index inserts cheaper; this only takes effect on a
                # new file (before its first table), and an existing file keeps its own.
                self._db.execute("PRAGMA page_size=16384")
                self._db.execute("PRAGMA journal_mode=WAL")
                # FULL: a committed write survives a power cut (the WAL is synced at
                # every commit); NORMAL may lose the last commits, never corrupts.
                self._db.execute(f"PRAGMA synchronous={DURABILITY[durability]}")
            self._db.execute("PRAGMA cache_size=-65536")
            if readonly:
                check_readonly(self._db, repr(self.path))
            else:
                prepare(self._db, SCHEMA, repr(self.path))
        except sqlite3.Error as exc:
            if "locked" in str(exc) or "busy" in str(exc):
                raise StoreLocked(self.path, busy_timeout) from exc
            raise StorageError(f"cannot open SQLite store at {self.path!r}: {exc}") from exc
        self._lock = threading.RLock()
        self._depth = 0
        self._ns_ids: dict[str, int] = {}
        self._seg_cache: dict[tuple[int, int], tuple[Pos, ...]] = {}
        # Generation: a count of changes seen (our commits, and data_version moves
        # for everyone else's) and the stored erasure counter as last read.
        self._writes = 0
        self._data_version = -1
        self._erasures = -1
        self._erasing = False  # does the open write transaction delete or blank rows?

    # coherence ----------------------------------------------------------------
    def _sync(self) -> None:
        """Check the caches against the file (other connections may have written)."""
        row = self._db.execute("SELECT value FROM store_info WHERE key='erasures'").fetchone()
        erasures = int(row[0]) if row is not None else 0
        (version,) = self._db.execute("PRAGMA data_version").fetchone()
        if erasures != self._erasures:
            self._ns_ids.clear()
            self._seg_cache.clear()
            self._erasures = erasures
        if version != self._data_version:
            self._data_version = version
            self._writes += 1

    def generation(self) -> Generation:
        with self._lock:
            if self._depth == 0:
                self._sync()
            return Generation(self._writes, self._erasures)

    def _mark_erasure(self) -> None:
        """Count this write transaction as an erasure when it commits, and zero
        the bytes it frees (SQLite may be built without secure-delete)."""
        if not self._erasing:
            self._erasing = True
            self._db.execute("PRAGMA secure_delete=ON")
            self._db.execute(
                "INSERT INTO store_info VALUES ('erasures', '1') ON CONFLICT (key) "
                "DO UPDATE SET value = CAST(value AS INTEGER) + 1"
            )

    # transactions -------------------------------------------------------------
    @contextmanager
    def _tx(self, begin: str) -> Iterator[None]:
        with self._lock:
            if self._depth:
                self._depth += 1
                try:
                    yield
                finally:
                    self._depth -= 1
                return
            if self.readonly and begin != "BEGIN":
                raise ReadOnlyStore(self.path)
            try:
                self._db.execute(begin)
                self._sync()
            except sqlite3.Error as exc:
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                if "locked" in str(exc) or "busy" in str(exc):
                    raise StoreLocked(self.path, self.busy_timeout) from exc
                raise StorageError(f"SQLite store {self.path!r}: {exc}") from exc
            self._depth = 1
            try:
                yield
            except BaseException as exc:
                self._depth = 0
                self._db.execute("ROLLBACK")
                self._rolled_back()
                self._db.execute("PRAGMA secure_delete=OFF")
                if isinstance(exc, sqlite3.Error):
                    raise StorageError(f"SQLite store {self.path!r}: {exc}") from exc
                raise
            self._depth = 0
            try:
                self._db.execute("COMMIT")
            except sqlite3.Error as exc:
                self._db.execute("ROLLBACK")
                self._rolled_back()
                raise StorageError(f"SQLite store {self.path!r}: commit failed: {exc}") from exc
            if begin != "BEGIN":  # our own commits do not move data_version
                self._writes += 1
                if self._erasing:
                    self._erasing = False
                    self._erasures += 1
                    self._after_erasure()

    def _after_erasure(self) -> None:
        """Older copies of erased rows live on in the write-ahead log: copy it into
        the file and truncate it. A reader on another connection can hold the
        checkpoint back; then the next purge (or `checkpoint`) finishes it."""
        self._db.execute("PRAGMA secure_delete=OFF")
        self.checkpoint()

    def checkpoint(self) -> bool:
        """Copy the write-ahead log into the file and truncate it to zero bytes.
        True if it was complete (no other connection's read held part of it back)."""
        with self._lock:
            try:
                busy, _, _ = self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
            except sqlite3.Error:
                return False
            return not busy

    def _rolled_back(self) -> None:
        # A rolled-back write may have cached ids that no longer exist.
        self._ns_ids.clear()
        self._seg_cache.clear()
        self._erasing = False

    def transaction(self) -> Any:
        return self._tx("BEGIN IMMEDIATE")

    def reading(self) -> Any:
        return self._tx("BEGIN")

    def close(self) -> None:
        with self._lock:
            self._db.close()

    # namespaces ---------------------------------------------------------------
    def _ns(self, ns: str, create: bool = False) -> int | None:
        if self._depth == 0:  # a read outside any transaction: check the caches first
            with self._lock:
                self._sync()
        nid = self._ns_ids.get(ns)
        if nid is not None:
            return nid
        row = self._db.execute("SELECT id FROM namespaces WHERE name=?", (ns,)).fetchone()
        if row is None:
            if not create:
                return None
            cur = self._db.execute("INSERT INTO namespaces (name) VALUES (?)", (ns,))
            nid = int(cur.lastrowid or 0)
        else:
            nid = int(row[0])
        self._ns_ids[ns] = nid
        return nid

    def _wns(self, ns: str) -> int:
        nid = self._ns(ns, create=True)
        assert nid is not None
        return nid

    # events -------------------------------------------------------------------
    _event = staticmethod(event_from_row)

    def get_events(self, ns: str, ids: Iterable[str]) -> dict[str, EventRow]:
        nid = self._ns(ns)
        if nid is None:
            return {}
        out: dict[str, EventRow] = {}
        for chunk in _chunks(list(ids)):
            sql = (
                "SELECT id, parents, role, content, meta, created_at, seg, seq FROM events "
                f"WHERE ns=? AND id IN ({_marks(len(chunk))})"
            )
            for r in self._db.execute(sql, (nid, *chunk)):
                out[r[0]] = self._event(ns, r)
        return out

    def insert_events(self, ns: str, rows: list[EventRow]) -> None:
        nid = self._wns(ns)
        dumps = json.dumps
        join = SEP.join
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
        _insert_rows(
            self._db,
            "INSERT INTO events (ns, id, parents, role, content, meta, created_at, seg, seq)",
            9,
            [(nid, *event_values(r)) for r in rows],
        )

    def set_event_positions(self, ns: str, positions: list[tuple[str, Pos]]) -> None:
        nid = self._wns(ns)
        self._db.executemany(
            "UPDATE events SET seg=?, seq=? WHERE ns=? AND id=?",
            ((s, q, nid, eid) for eid, (s, q) in positions),
        )

    def _range_query(self, spans: list[tuple[int, ...]], select: str) -> Iterator[tuple[Any, ...]]:
        """Run ``select`` against a table ``r`` of ``spans``: ``(seg, upto)`` or
        ``(seg, lo, upto)`` rows, in chunks that stay under SQLite's parameter limit."""
        cols = "seg, upto" if len(spans[0]) == 2 else "seg, lo, upto"
        for chunk in _chunks(spans, CHUNK // len(spans[0]) * 2):
            values = ",".join("(" + ",".join("?" * len(spans[0])) + ")" for _ in chunk)
            params = [x for span in chunk for x in span]
            yield from self._db.execute(f"WITH r({cols}) AS (VALUES {values}) {select}", params)

    def waiting_children(self, ns: str, parent_ids: Iterable[str]) -> dict[str, list[str]]:
        nid = self._ns(ns)
        if nid is None:
            return {}
        # Waiting events are rare; skip the lookups when there are none at all.
        if self._db.execute("SELECT 1 FROM waits WHERE ns=? LIMIT 1", (nid,)).fetchone() is None:
            return {}
        out: dict[str, list[str]] = {}
        for chunk in _chunks(list(parent_ids)):
            sql = f"SELECT parent, child FROM waits WHERE ns=? AND parent IN ({_marks(len(chunk))})"
            for p, c in self._db.execute(sql, (nid, *chunk)):
                out.setdefault(p, []).append(c)
        return out

    def add_waits(self, ns: str, pairs: list[tuple[str, str]]) -> None:
        nid = self._wns(ns)
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
        for chunk in _chunks(missing):
            sql = f"SELECT seg, parents FROM segments WHERE ns=? AND seg IN ({_marks(len(chunk))})"
            for seg, parents in self._db.execute(sql, (nid, *chunk)):
                val = tuple((int(a), int(b)) for a, b in json.loads(parents))
                if self._depth == 0 or len(cache) < 1_000_000:
                    cache[(nid, seg)] = val
                out[seg] = val
        return out

    def segment_tips(self, ns: str, segs: Iterable[int]) -> dict[int, int]:
        nid = self._ns(ns)
        if nid is None:
            return {}
        out: dict[int, int] = {}
        for chunk in _chunks(list(segs)):
            sql = f"SELECT seg, tip FROM segments WHERE ns=? AND seg IN ({_marks(len(chunk))})"
            out.update(self._db.execute(sql, (nid, *chunk)))
        return out

    def max_segment(self, ns: str) -> int:
        nid = self._ns(ns)
        if nid is None:
            return -1
        row = self._db.execute("SELECT max(seg) FROM segments WHERE ns=?", (nid,)).fetchone()
        return -1 if row is None or row[0] is None else int(row[0])

    def put_segments(self, ns: str, new: list[NewSegment], tips: dict[int, int]) -> None:
        nid = self._wns(ns)
        fresh = {s.seg for s in new}
        self._db.executemany(
            "INSERT INTO segments VALUES (?,?,?,?)",
            ((nid, s.seg, json.dumps(s.parents), tips.get(s.seg, 0)) for s in new),
        )
        self._db.executemany(
            "UPDATE segments SET tip=? WHERE ns=? AND seg=?",
            ((t, nid, s) for s, t in tips.items() if s not in fresh),
        )

    # records ------------------------------------------------------------------
    _record = staticmethod(record_from_row)

    def get_records(self, ns: str, ids: Iterable[str]) -> dict[str, RecordRow]:
        nid = self._ns(ns)
        if nid is None:
            return {}
        out: dict[str, RecordRow] = {}
        for chunk in _chunks(list(ids)):
            sql = f"SELECT {_REC_COLS} FROM records WHERE ns=? AND id IN ({_marks(len(chunk))})"
            for r in self._db.execute(sql, (nid, *chunk)):
                out[r[1]] = self._record(ns, r)
        return out

    def insert_records(self, ns: str, rows: list[RecordRow]) -> list[Memory]:
        nid = self._wns(ns)
        row = self._db.execute("SELECT max(seq) FROM records").fetchone()
        first = 1 + (int(row[0]) if row and row[0] is not None else 0)
        out = [replace(r.memory, seq=first + i) for i, r in enumerate(rows)]
        _insert_rows(
            self._db,
            f"INSERT INTO records ({_REC_COLS}, ns)",
            17,
            [(*record_values(m, r), nid) for m, r in zip(out, rows, strict=True)],
        )
        return out

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
        cols = ", ".join("c." + c for c in _REC_COLS.split(", "))
        where = f"c.ns={nid} AND c.seg=r.seg AND c.pos<=r.upto"
        if after:
            spans: list[tuple[int, ...]] = [(s, after.get(s, -1), u) for s, u in ranges.items()]
            where += " AND c.pos>r.lo"
        else:
            spans = list(ranges.items())
        rows = self._range_query(spans, f"SELECT {cols} FROM r CROSS JOIN records c WHERE {where}")
        return (self._record(ns, r) for r in list(rows))

    def retractions_of(self, ns: str, target_ids: Iterable[str]) -> list[RecordRow]:
        nid = self._ns(ns)
        if nid is None:
            return []
        out: list[RecordRow] = []
        for chunk in _chunks(list(target_ids)):
            sql = (
                f"SELECT {_REC_COLS} FROM records WHERE ns=? "
                f"AND target IN ({_marks(len(chunk))}) ORDER BY seq"
            )
            out.extend(self._record(ns, r) for r in self._db.execute(sql, (nid, *chunk)))
        return out

    def records_waiting_on(self, ns: str, event_ids: Iterable[str]) -> dict[str, list[str]]:
        nid = self._ns(ns)
        if nid is None:
            return {}
        if (
            self._db.execute("SELECT 1 FROM record_waits WHERE ns=? LIMIT 1", (nid,)).fetchone()
            is None
        ):
            return {}
        out: dict[str, list[str]] = {}
        for chunk in _chunks(list(event_ids)):
            sql = (
                "SELECT event, record FROM record_waits "
                f"WHERE ns=? AND event IN ({_marks(len(chunk))})"
            )
            for e, r in self._db.execute(sql, (nid, *chunk)):
                out.setdefault(e, []).append(r)
        return out

    def add_record_waits(self, ns: str, pairs: list[tuple[str, str]]) -> None:
        nid = self._wns(ns)
        self._db.executemany(
            "INSERT OR IGNORE INTO record_waits VALUES (?,?,?)", ((nid, e, r) for e, r in pairs)
        )

    def drop_record_waits(self, ns: str, event_ids: list[str]) -> None:
        nid = self._wns(ns)
        self._db.executemany(
            "DELETE FROM record_waits WHERE ns=? AND event=?", ((nid, e) for e in event_ids)
        )

    # branches -----------------------------------------------------------------
    def get_branch(self, ns: str, name: str) -> str | None:
        nid = self._ns(ns)
        if nid is None:
            return None
        row = self._db.execute(
            "SELECT head FROM branches WHERE ns=? AND name=?", (nid, name)
        ).fetchone()
        return None if row is None else str(row[0])

    def set_branch(self, ns: str, name: str, head: str) -> None:
        nid = self._wns(ns)
        self._db.execute(
            "INSERT INTO branches VALUES (?,?,?) "
            "ON CONFLICT (ns, name) DO UPDATE SET head=excluded.head",
            (nid, name, head),
        )

    def list_branches(self, ns: str) -> list[tuple[str, str]]:
        nid = self._ns(ns)
        if nid is None:
            return []
        return [
            (str(a), str(b))
            for a, b in self._db.execute(
                "SELECT name, head FROM branches WHERE ns=? ORDER BY name", (nid,)
            )
        ]

    _BRANCH_COLS = "name, head, fork_point, parent, created_at, updated_at"

    _branch = staticmethod(branch_from_row)

    def get_branch_row(self, ns: str, name: str) -> BranchRow | None:
        nid = self._ns(ns)
        if nid is None:
            return None
        row = self._db.execute(
            f"SELECT {self._BRANCH_COLS} FROM branches WHERE ns=? AND name=?", (nid, name)
        ).fetchone()
        return None if row is None else self._branch(row)

    def list_branch_rows(self, ns: str) -> list[BranchRow]:
        nid = self._ns(ns)
        if nid is None:
            return []
        sql = f"SELECT {self._BRANCH_COLS} FROM branches WHERE ns=? ORDER BY name"
        return [self._branch(r) for r in self._db.execute(sql, (nid,))]

    def put_branch_row(self, ns: str, row: BranchRow) -> None:
        nid = self._wns(ns)
        self._db.execute(
            f"INSERT OR REPLACE INTO branches (ns, {self._BRANCH_COLS}) VALUES (?,?,?,?,?,?,?)",
            (nid, row.name, row.head, row.fork_point, row.parent, row.created_at, row.updated_at),
        )

    def delete_branch(self, ns: str, name: str) -> None:
        nid = self._wns(ns)
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
        # The second test is answered by the partial index records_timed.
        row = self._db.execute(
            "SELECT EXISTS (SELECT 1 FROM life WHERE ns=?) OR EXISTS (SELECT 1 FROM records "
            "WHERE ns=? AND (expires_at IS NOT NULL OR valid_from IS NOT NULL "
            "OR valid_to IS NOT NULL))",
            (nid, nid),
        ).fetchone()
        return bool(row[0])

    def get_life(self, ns: str, ids: Iterable[str]) -> dict[str, LifeRow]:
        nid = self._ns(ns)
        if nid is None:
            return {}
        out: dict[str, LifeRow] = {}
        for chunk in _chunks(list(ids)):
            sql = (
                "SELECT id, archived_at, restored_at, uses, last_used FROM life "
                f"WHERE ns=? AND id IN ({_marks(len(chunk))})"
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
        sql = "SELECT id FROM records WHERE ns=? AND expires_at<=? ORDER BY seq"
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

    def records_of_kind(self, ns: str, kind: str) -> list[RecordRow]:
        nid = self._ns(ns)
        if nid is None:
            return []
        sql = f"SELECT {_REC_COLS} FROM records WHERE ns=? AND kind=? ORDER BY seq"
        return [self._record(ns, r) for r in self._db.execute(sql, (nid, kind))]

    def delete_records(self, ns: str, ids: list[str]) -> None:
        nid = self._wns(ns)
        self._mark_erasure()
        for table, col in (
            ("records", "id"), ("life", "id"), ("record_waits", "record"), ("vectors", "id"),
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
            "head_moves", "snapshots", "life", "vectors",
        ):  # fmt: skip
            self._db.execute(f"DELETE FROM {table} WHERE ns=?", (nid,))
        # The name (often a user id or an email) goes; the number stays, never
        # reused, holding the audit lines (ids and ops, never content).
        self._db.execute("UPDATE namespaces SET name=? WHERE id=?", (f"\x00purged {nid}", nid))
        self._ns_ids.pop(ns, None)
        self._seg_cache = {k: v for k, v in self._seg_cache.items() if k[0] != nid}

    # vectors ------------------------------------------------------------------
    def get_vectors(
        self, ns: str, embedder: str, ids: Iterable[str]
    ) -> dict[str, tuple[str, bytes]]:
        nid = self._ns(ns)
        if nid is None:
            return {}
        out: dict[str, tuple[str, bytes]] = {}
        for chunk in _chunks(list(ids)):
            sql = (
                "SELECT id, digest, vec FROM vectors WHERE ns=? AND embedder=? "
                f"AND id IN ({_marks(len(chunk))})"
            )
            for rid, digest, vec in self._db.execute(sql, (nid, embedder, *chunk)):
                out[rid] = (digest, bytes(vec))
        return out

    def put_vectors(self, ns: str, embedder: str, rows: list[tuple[str, str, bytes]]) -> None:
        nid = self._wns(ns)
        # Only for records still stored: a record purged meanwhile gets no vector.
        self._db.executemany(
            "INSERT OR REPLACE INTO vectors SELECT ?, ?, ?, ?, ? "
            "WHERE EXISTS (SELECT 1 FROM records WHERE ns=? AND id=?)",
            ((nid, embedder, rid, digest, blob, nid, rid) for rid, digest, blob in rows),
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
        sql = f"SELECT {_REC_COLS} FROM records WHERE ns=? ORDER BY seq LIMIT ? OFFSET ?"
        return [self._record(ns, r) for r in self._db.execute(sql, (nid, limit, offset))]

    def add_audit(self, ns: str, entries: list[AuditEntry]) -> None:
        nid = self._wns(ns)
        self._db.executemany(
            "INSERT INTO audit (ns, at, actor, op, ids) VALUES (?,?,?,?,?)",
            ((nid, e.at, e.actor, e.op, SEP.join(e.ids)) for e in entries),
        )

    def audit(self, ns: str, since: float | None) -> list[AuditEntry]:
        nid = self._ns(ns)
        if nid is None:
            return []
        # Numbered within the namespace (the rowid counts every tenant's writes).
        sql = (
            "SELECT n, at, actor, op, ids FROM (SELECT row_number() OVER (ORDER BY seq) AS n, "
            "at, actor, op, ids FROM audit WHERE ns=?) WHERE at>=? ORDER BY n"
        )
        low = float("-inf") if since is None else since
        return [
            AuditEntry(at, op, tuple(ids.split(SEP)) if ids else (), actor, ns, seq)
            for seq, at, actor, op, ids in self._db.execute(sql, (nid, low))
        ]
