"""SQLite backend: the embedded default, one file in WAL mode.

Every key leads with the namespace (an integer id) so that one namespace is
one contiguous slice of each index. The gate's read is a join of the
anchor's few ``(segment, up_to_seq)`` ranges against ``records(ns, seg, pos)``.

This module holds the connection, its transactions and the caches checked
against the file; the statements live with their tables in `sqlite.graph`
(events, segments, records) and `sqlite.meta` (branches, lifecycle, erasure,
vectors, audit), the schema and its versions in `sqlite.schema`. sqlite3's
errors become `StorageError` in the transaction wrapper here.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from ...errors import ReadOnlyStore, StorageError, StoreLocked
from ..base import (
    Generation,
    Pos,
)
from ..sqlrows import SEP as SEP  # callers join id lists with it
from .graph import GraphTables
from .jobs import SQLiteJobs
from .meta import MetaTables
from .parts import rowid_tables
from .schema import SCHEMA, check_readonly, prepare
from .tree import TreeTables

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


ERASE_WAIT = 0.5
"""Seconds a purge (and `SQLiteBackend.checkpoint`, `close`) waits for other
connections' reads to let the write-ahead log be truncated."""

_COUNTERS = "SELECT key, value FROM store_info WHERE key IN ('erasures', 'log_clean')"


class SQLiteBackend(TreeTables, GraphTables, MetaTables, SQLiteJobs):
    """One SQLite file (created if missing). Thread-safe through one lock.

    Several processes may open the same file: writes take SQLite's write lock
    (``BEGIN IMMEDIATE``) and only immutable facts (segment fork points,
    namespace ids) are cached in process. They are immutable until an erasure
    (a namespace dropped and rebuilt reuses segment numbers), so every
    transaction starts by checking SQLite's ``data_version`` (`_sync`): when
    another connection committed since, it reads the store's erasure counter
    and drops them if that moved. A few facts hold only while no other
    connection writes (a namespace's last record seq, the absence of waiting
    events or records); they go whenever ``data_version`` moves.
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
        self.durability = durability
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
        self._after: list[Callable[[], None]] = []  # run once the transaction commits
        self._ns_ids: dict[str, int] = {}
        self._seg_cache: dict[tuple[int, int], tuple[Pos, ...]] = {}
        self._top: dict[int, int] = {}
        self._no_waits: set[int] = set()
        self._no_record_waits: set[int] = set()
        self._tips: dict[tuple[int, int], int] = {}
        self._seg_top: dict[int, int] = {}
        self._audit_top: dict[int, int] = {}
        self._branch_list: dict[int, list[tuple[str, str]]] = {}
        self._branch_rows: dict[tuple[int, str], Any] = {}
        self._recent: dict[tuple[int, str], tuple[Any, ...]] = {}
        # A file's tables never lose their rowid (an upgrade adds it), so what
        # is read at open stays true.
        self._rowid = rowid_tables(self._db)
        # Generation: a count of changes seen (our commits, and data_version moves
        # for everyone else's) and the stored erasure counter as last read.
        self._writes = 0
        self._data_version = -1
        self._erasures = -1
        self._quick = Generation(0, -1)  # quick_generation's last answer
        self._erasing = False  # does the open write transaction delete or blank rows?
        # Erasures up to this count are out of the write-ahead log (see _finish_erasure).
        self._log_clean = 0

    # coherence ----------------------------------------------------------------
    def _sync(self, locked: bool = False) -> None:
        """Check the caches against the file (other connections may have written).

        ``locked``: inside ``BEGIN IMMEDIATE``, where no one else can commit, so
        an unmoved ``data_version`` (no other connection committed since the
        last look) spares reading the counters: a single write costs one
        statement less. A read first starts its snapshot, then compares.
        """
        if locked:
            (version,) = self._db.execute("PRAGMA data_version").fetchone()
            if version == self._data_version:
                return
        counters = dict(self._db.execute(_COUNTERS).fetchall())
        if not locked:
            (version,) = self._db.execute("PRAGMA data_version").fetchone()
        erasures = int(counters.get("erasures", 0))
        self._log_clean = int(counters.get("log_clean", 0))
        if erasures != self._erasures:
            self._ns_ids.clear()
            self._seg_cache.clear()
            self._erasures = erasures
        if version != self._data_version:
            self._data_version = version
            self._writes += 1
            self._forget_volatile()

    def _forget_volatile(self) -> None:
        """Drop what holds only while no other connection writes."""
        self._top.clear()
        self._no_waits.clear()
        self._no_record_waits.clear()
        self._tips.clear()
        self._seg_top.clear()
        self._audit_top.clear()
        self._branch_list.clear()
        self._branch_rows.clear()
        self._recent.clear()

    def generation(self, ns: str | None = None) -> Generation:
        with self._lock:  # store-wide counts: SQLite has one writer at a time anyway
            if self._depth == 0:
                self._sync()
            return Generation(self._writes, self._erasures)

    def quick_generation(self) -> Generation | None:
        """One statement: ``data_version`` (in a read of its own) unmoved since
        the last look means no other connection committed, and this one's
        commits are counted as they land."""
        with self._lock:
            if self._depth:
                return None
            (version,) = self._db.execute("PRAGMA data_version").fetchone()
            if version != self._data_version:
                return None
            g, w, e = self._quick, self._writes, self._erasures
            if g.writes != w or g.erasures != e:
                g = self._quick = Generation(w, e)
            return g

    def others_version(self, namespaces: Iterable[str] = ()) -> int:
        """SQLite's ``data_version``: it changes whenever another connection
        commits to the file, never for this one's commits (`OtherWriters`;
        whatever the ``namespaces``: the file has one version)."""
        with self._lock:
            (version,) = self._db.execute("PRAGMA data_version").fetchone()
            return int(version)

    def _mark_erasure(self) -> None:
        """Count this write transaction as an erasure when it commits, and zero
        the bytes it frees (SQLite may be built without secure-delete). What is
        kept between transactions goes: the erasure may change any of it."""
        self._forget_volatile()
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
                self._sync(locked=begin != "BEGIN")
            except sqlite3.Error as exc:
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                if "locked" in str(exc) or "busy" in str(exc):
                    raise StoreLocked(self.path, self.busy_timeout) from exc
                raise StorageError(f"SQLite store {self.path!r}: {exc}") from exc
            self._depth = 1
            self._after = []
            changes = self._db.total_changes
            try:
                yield
            except BaseException as exc:
                self._depth = 0
                self._after = []
                self._db.execute("ROLLBACK")
                if begin != "BEGIN" or self._db.total_changes != changes:
                    # (a read that raised, an unknown anchor say, wrote nothing:
                    # what it cached holds)
                    self._rolled_back()
                    self._db.execute("PRAGMA secure_delete=OFF")
                if isinstance(exc, sqlite3.Error):
                    raise StorageError(f"SQLite store {self.path!r}: {exc}") from exc
                raise
            self._depth = 0
            try:
                self._db.execute("COMMIT")
            except sqlite3.Error as exc:
                self._after = []
                self._db.execute("ROLLBACK")
                self._rolled_back()
                raise StorageError(f"SQLite store {self.path!r}: commit failed: {exc}") from exc
            after, self._after = self._after, []
            for fn in after:
                fn()
            if begin != "BEGIN":  # our own commits do not move data_version
                self._writes += 1
                if self._erasing:
                    self._erasing = False
                    self._erasures += 1
                    self._db.execute("PRAGMA secure_delete=OFF")
                    self._finish_erasure(ERASE_WAIT)
                elif self._erasures > self._log_clean:
                    self._finish_erasure(0.0)  # left by an earlier purge: try again

    def _finish_erasure(self, wait: float) -> bool:
        """Older copies of erased rows live on in the write-ahead log: copy it into
        the file and truncate it, waiting up to ``wait`` seconds for other
        connections' reads to move past it. Complete, the count of erasures out
        of the log (``log_clean`` in ``store_info``) catches up; held back, the
        erasure stays pending (`erasure_pending`), in the file for every
        connection, and the next write, `checkpoint` or `close` tries again."""
        done = self._erasures
        with self._waiting(wait):
            if not self._truncate():
                return False
            try:
                self._db.execute("BEGIN IMMEDIATE")
                self._db.execute(
                    "INSERT INTO store_info VALUES ('log_clean', ?1) ON CONFLICT (key) "
                    "DO UPDATE SET value = max(CAST(value AS INTEGER), ?1)",
                    (str(done),),
                )
                self._db.execute("COMMIT")
            except sqlite3.Error:
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                return False
            self._log_clean = max(self._log_clean, done)
            # That commit logged one store_info page (no erased text): truncate again.
            self._truncate()
        return True

    @contextmanager
    def _waiting(self, wait: float) -> Iterator[None]:
        """Wait at most ``wait`` seconds for other connections (not the store's
        whole busy timeout) in this block."""
        self._db.execute(f"PRAGMA busy_timeout={int(wait * 1000)}")
        try:
            yield
        finally:
            self._db.execute(f"PRAGMA busy_timeout={int(self.busy_timeout * 1000)}")

    def _truncate(self) -> bool:
        """``wal_checkpoint(TRUNCATE)``: True if the log is now empty."""
        try:
            busy, _, _ = self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        except sqlite3.Error:
            return False
        return not busy

    def checkpoint(self) -> bool:
        """Copy the write-ahead log into the file and truncate it to zero bytes,
        finishing any erasure still pending. True if it was complete (no other
        connection's read held part of it back)."""
        with self._lock:
            if self.readonly or self._depth:  # inside a transaction: after it commits
                return False
            self._sync()
            if self._erasures > self._log_clean:
                return self._finish_erasure(ERASE_WAIT)
            with self._waiting(ERASE_WAIT):
                return self._truncate()

    def erasure_pending(self) -> bool:
        """Does the write-ahead log (may) still hold bytes of a purge, because a
        read on another connection held its truncation back?"""
        with self._lock:
            if self._depth == 0:
                self._sync()
            return self._erasures > self._log_clean

    def _rolled_back(self) -> None:
        # A rolled-back write may have cached ids that no longer exist.
        self._ns_ids.clear()
        self._seg_cache.clear()
        self._forget_volatile()
        self._erasing = False

    def transaction(self) -> Any:
        return self._tx("BEGIN IMMEDIATE")

    @contextmanager
    def unsynced_transaction(self) -> Iterator[None]:
        """`transaction` whose commit does not sync the write-ahead log
        (``synchronous=NORMAL`` for it): the log's frames are written, so a
        crash of the process loses nothing, and the next synced commit (or a
        checkpoint of the log, or the close) syncs them with its own. Inside
        an open transaction it joins it, whose level holds."""
        with self._lock:
            if self._depth or self.durability == "normal" or self.readonly:
                with self._tx("BEGIN IMMEDIATE"):
                    yield
                return
            self._db.execute("PRAGMA synchronous=NORMAL")
            try:
                with self._tx("BEGIN IMMEDIATE"):
                    yield
            finally:
                self._db.execute(f"PRAGMA synchronous={DURABILITY[self.durability]}")

    def after_commit(self, fn: Callable[[], None]) -> None:
        """Run ``fn`` once the open transaction commits (at once outside one;
        never if it rolls back)."""
        with self._lock:
            if self._depth:
                self._after.append(fn)
                return
        fn()

    def reading(self) -> Any:
        return self._tx("BEGIN")

    def close(self) -> None:
        with self._lock:
            if not self.readonly:
                with suppress(sqlite3.Error):
                    self._sync()
                    if self._erasures > self._log_clean:
                        self._finish_erasure(ERASE_WAIT)
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
