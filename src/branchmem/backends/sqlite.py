"""SQLite backend: the embedded default, one file in WAL mode.

Every key leads with the namespace (an integer id) so that one namespace is
one contiguous slice of each index. The gate's read is a join of the
anchor's few ``(segment, up_to_seq)`` ranges against ``records(ns, seg, pos)``.

This module holds the connection, its transactions and the caches checked
against the file; the statements live with their tables in `sqlite_graph`
(events, segments, records) and `sqlite_meta` (branches, lifecycle, erasure,
vectors, audit), the schema and its versions in `sqlite_schema`. sqlite3's
errors become `StorageError` in the transaction wrapper here.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..errors import ReadOnlyStore, StorageError, StoreLocked
from .base import (
    Generation,
    Pos,
)
from .sqlite_graph import GraphTables
from .sqlite_meta import MetaTables
from .sqlite_schema import SCHEMA, check_readonly, prepare
from .sqlrows import SEP as SEP  # callers join id lists with it

CHUNK = 400  # ids per IN (...) list, well under SQLite's variable limit


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


class SQLiteBackend(GraphTables, MetaTables):
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
