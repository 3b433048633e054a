"""Connections for the PostgreSQL backend: a pool, transactions, statements.

``BEGIN`` goes out with a transaction's first statement, and so does a write
transaction's advisory lock on each namespace it touches (one pipeline, one
round trip): writers of a namespace take turns until commit, while reads run
in ``REPEATABLE READ`` (one consistent view) and take no lock. Every
statement names its namespace as the ``%(ns)s`` parameter.
psycopg is imported here, when a store opens, and its errors become `StorageError` here.
"""

from __future__ import annotations

import itertools
import re
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from ...errors import StorageError
from ..base import Generation
from ..sqlrows import SEP
from .copy import OpenCopy
from .others import OwnRaises
from .schema import has_table, is_citus, make_schema, prepare
from .sql import each_key

Key = tuple[str, str, Any]
"""A cache key: (what, namespace, which)."""
Trace = Callable[[str, Mapping[str, Any]], None]
"""Called with every statement and its parameters before it runs (for tests)."""

COPY_FROM = 500  # rows: larger batches go in by COPY


LATERAL_UP_TO = 10_000
"""Keys up to which `each_key` looks each one up; more are matched by one
scan (``key = ANY(...)``): a lookup costs 3–5 µs a key, a scan of a
namespace without statistics about 1 µs a row (1,000 keys among 1M events:
4 ms against 120 ms; 50,000 among 100,000: 120 ms against 48 ms)."""


STORE_ROW = ""
"""The ``ns`` key of store-wide rows (no namespace is named by the empty string)."""
LOCK = "SELECT pg_advisory_xact_lock(hashtextextended(%(ns)s, 0))"
READ_ERASED = "SELECT coalesce(max(erasures), 0) FROM counters WHERE ns = %(ns)s"
ERASED = (
    "INSERT INTO counters (ns, erasures) VALUES (%(ns)s, 1) "
    "ON CONFLICT (ns) DO UPDATE SET erasures = counters.erasures + 1"
)
READ_WRITES = "SELECT coalesce(max(writes), 0) FROM ns_counters WHERE ns = %(ns)s"
WROTE = (
    "INSERT INTO ns_counters (ns, writes) VALUES (%(ns)s, 1) "
    "ON CONFLICT (ns) DO UPDATE SET writes = ns_counters.writes + 1"
)
"""A namespace's write counter, raised by every write transaction that holds its
lock, as it commits (the lock already serialises them: no new wait)."""
TOPS = (
    "SELECT (SELECT coalesce(max(seq), 0) FROM audit WHERE ns = %(ns)s), "
    "(SELECT coalesce(max(seq), 0) FROM records WHERE ns = %(ns)s), "
    "(SELECT coalesce(max(writes), 0) FROM ns_counters WHERE ns = %(ns)s)"
)
"""The highest audit and record numbers of a namespace and its write counter,
read with its lock (the counter's raise at commit gives one more: `others`)."""
MOVES_TOP = "SELECT coalesce(max(n), 0) FROM head_moves WHERE ns = %(ns)s AND branch = %(b)s"
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,62}\Z")


def configure(conn: Any) -> None:
    """Settings of every pooled connection, set once when it opens.

    Custom plans only: psycopg prepares a statement run five times, and
    PostgreSQL may then switch it to a generic plan, one that ignores the
    parameters' values. On a distributed PostgreSQL (Citus) such a plan no
    longer knows which shard ``ns = %(ns)s`` names: it runs on every shard, or
    fails. On plain PostgreSQL every run is planned for its values; timed
    against the code before, writes did not get slower (docs/scaling.md).
    (A setting of the session,
    not of the startup packet, so a connection pooler that refuses startup
    options still passes it; servers before 12 do not have it.)
    """
    if conn.info.server_version >= 120000:
        conn.execute("SET plan_cache_mode = force_custom_plan")


def public_url(url: str) -> str:
    """The URL without its password, for messages."""
    return re.sub(r"://([^:/@]*):[^@]*@", r"://\1:***@", url)


class _Local(threading.local):
    def __init__(self) -> None:
        self.conn: Any = None
        self.depth = 0
        self.write = False
        self.begun = False
        self.locked: set[str] = set()
        self.erasures: int | None = None  # the stored erasure counter, as this transaction saw it
        self.erasing = False  # has this transaction deleted or blanked rows?
        # Rows this transaction read and may not share yet (a write
        # transaction's, until it commits; any after an erasure in it).
        self.seg_cache: dict[Key, Any] = {}
        # Answers that hold for the rest of a read view (its one snapshot).
        self.view: dict[Key, Any] = {}
        # Statements not sent yet: they go with the next one that needs an answer.
        self.queue: list[tuple[str, Mapping[str, Any] | None, Callable[[Any], None] | None]] = []
        self.sent = False  # has anything of this transaction reached the server?
        # (table, namespace) pairs this write transaction found empty under the
        # namespace's lock: they stay empty until it adds rows (`PostgresBackend._pairs`).
        self.empty: set[tuple[str, str]] = set()
        self.stream: OpenCopy | None = None  # its open COPY, ended before any statement
        self.after: list[Callable[[], None]] = []  # run once this transaction commits
        # The highest number stored so far in a numbered table of a namespace
        # this write transaction holds the lock of, by (table, ns, branch):
        # audit lines and records by namespace, head moves by branch.
        self.tops: dict[tuple[str, str, str], int] = {}
        self.counted: dict[str, int] = {}  # each locked namespace's write counter, read with it
        self.dropped: set[str] = set()  # namespaces this transaction purged whole


class PgConnection:
    """A connection pool on one database (and schema), and the transaction
    machinery: `transaction`, `reading`, and `_q` for one statement."""

    def __init__(
        self,
        url: str,
        *,
        schema: str | None = None,
        create: bool = True,
        max_size: int = 8,
        min_size: int = 1,
        max_idle: float = 600.0,
        trace: Trace | None = None,
        durability: str = "full",
    ) -> None:
        import psycopg
        import psycopg_pool

        self.url = public_url(url)
        self._psycopg = psycopg
        self._trace = trace
        kwargs: dict[str, Any] = {"autocommit": True}
        if schema is not None:
            if not _IDENT.match(schema):
                raise StorageError(
                    f"schema name {schema!r} is not a plain identifier: use letters, "
                    "digits and underscores, starting with a letter"
                )
            kwargs["options"] = f"-c search_path={schema}"
        if durability == "normal":
            # A commit returns before its WAL reaches the disk: a crash of the
            # server may lose the last transactions, never half of one.
            kwargs["options"] = kwargs.get("options", "") + " -c synchronous_commit=off"
        self._fresh_state()
        self._citus = False
        # One plain connection first: a bad URL or a refused connection fails
        # here at once, and the schema is made or upgraded before the pool opens.
        try:
            with psycopg.connect(url, connect_timeout=10, **kwargs) as conn:
                if schema is not None and create:
                    make_schema(conn, schema)
                if not create and not has_table(conn, "schema_version"):
                    raise StorageError(
                        f"no branchmem store at {self.url!r}: the database has no "
                        "schema_version table; pass the URL of a store"
                    )
                prepare(conn, repr(self.url))
                self._citus = is_citus(conn)  # (asked once; a purge asks mid-transaction)
            self._pool = psycopg_pool.ConnectionPool(
                url,
                kwargs=kwargs,
                configure=configure,
                min_size=min_size,
                max_size=max_size,
                max_idle=max_idle,
                open=True,
            )
        except psycopg.Error as exc:
            raise StorageError(
                f"cannot open PostgreSQL store at {self.url!r}: {exc}; check the URL and "
                "that the server accepts connections"
            ) from exc

    def _fresh_state(self) -> None:
        """Per-object state: transactions, caches (nothing shared with a copy)."""
        self._st = _Local()
        self._generations = itertools.count(1)
        # Rows that never change once written (segment fork points, placed
        # events), shared by this object's transactions while the stored
        # erasure counter stays at ``_segs_at``: only an erasure changes or
        # removes them (see `_share_segments`).
        self._segs: dict[Key, Any] = {}
        self._segs_at: int | None = None
        self._segs_lock = threading.Lock()
        self._own = OwnRaises()  # this object's raises of the write counters (`others`)

    # transactions -------------------------------------------------------------
    @contextmanager
    def _tx(self, write: bool) -> Iterator[None]:
        st = self._st
        if st.depth:
            if write and not st.write:
                # A write inside a read view: lock from the next statement on. A
                # view already begun is REPEATABLE READ, so a row another writer
                # changed since fails the write (StorageError) instead of losing it.
                st.write = True
            st.depth += 1
            try:
                yield
            finally:
                st.depth -= 1
            return
        errors = self._psycopg.Error
        conn = self._pool.getconn()
        try:
            # BEGIN is sent with the first statement (see `_q`), so a transaction
            # that issues none costs no round trip at all.
            st.conn, st.depth, st.write, st.begun, st.locked = conn, 1, write, False, set()
            st.erasures, st.erasing, st.seg_cache, st.queue, st.sent = None, False, {}, [], False
            st.view, st.empty, st.after, st.tops, st.counted = {}, set(), [], {}, {}
            st.dropped = set()
            try:
                yield
            except BaseException as exc:
                st.after = []
                if st.stream is not None:
                    st.stream.close()
                st.conn, st.depth, st.queue = None, 0, []
                if st.sent and not conn.closed:
                    conn.execute("ROLLBACK")
                if isinstance(exc, errors):
                    raise StorageError(f"PostgreSQL store {self.url!r}: {exc}") from exc
                raise
            raised: list[tuple[str, int]] = []
            committed = False
            try:
                if st.begun:
                    if st.write:
                        raised = self._own_raises()
                        # A purged namespace's counter row went with it (it holds the name).
                        for ns in sorted(st.locked - st.dropped):
                            st.queue.append((WROTE, {"ns": ns}, None))
                    if st.erasing:
                        # Last, so no lock is taken after this row's: purges of
                        # different namespaces queue here, never in a cycle.
                        st.queue.append((ERASED, {"ns": STORE_ROW}, None))
                    st.queue.append(("COMMIT", None, None))
                    self._flush()
                committed = True
            except errors as exc:
                st.after = []
                if not conn.closed:
                    conn.execute("ROLLBACK")
                raise StorageError(f"PostgreSQL store {self.url!r}: commit failed: {exc}") from exc
            finally:
                self._own.end(raised, committed)
                if committed:
                    self._own.restart(st.dropped)
            if st.seg_cache and not st.erasing:
                self._share_segments(st.erasures, st.seg_cache)
        finally:
            st.conn, st.depth, st.queue = None, 0, []
            self._pool.putconn(conn)
        after, st.after = st.after, []
        for fn in after:
            fn()

    def _own_raises(self) -> list[tuple[str, int]]:
        # The counter values this commit gives (the reads with the locks first, if queued).
        st, own = self._st, self._own
        if st.queue and any(own.watched(ns) and ns not in st.counted for ns in st.locked):
            self._flush()
        return own.begin(
            {ns: st.counted[ns] + 1 for ns in st.locked - st.dropped if ns in st.counted}
        )

    def after_commit(self, fn: Callable[[], None]) -> None:
        """Run ``fn`` once this thread's transaction commits (at once outside one;
        never if it rolls back)."""
        if self._st.depth:
            self._st.after.append(fn)
        else:
            fn()

    def _share_segments(self, at: int | None, found: dict[Key, Any]) -> None:
        """Add fork points read at erasure count ``at`` to the shared cache
        (only if that is still the count the cache holds)."""
        with self._segs_lock:
            if at is not None and at == self._segs_at and len(self._segs) < 1_000_000:
                self._segs.update(found)

    def _saw_erasures(self, count: int) -> None:
        """A transaction read the stored erasure counter: a higher one than the
        shared cache was built at means rows were deleted since; start over."""
        self._st.erasures = count
        with self._segs_lock:
            if self._segs_at is None or count > self._segs_at:
                self._segs.clear()
                self._segs_at = count

    def cached(self, what: str, ns: str, keys: Iterable[Any]) -> tuple[dict[Any, Any], list[Any]]:
        """Rows of ``keys`` this object already knows (never-changing ones, see
        `_segs`), and the keys to fetch."""
        st = self._st
        shared = self._segs if st.erasures == self._segs_at and not st.erasing else {}
        local = st.seg_cache
        out: dict[Any, Any] = {}
        missing = []
        for k in keys:
            hit = shared.get((what, ns, k))
            if hit is None:
                hit = local.get((what, ns, k))
            if hit is None:
                missing.append(k)
            else:
                out[k] = hit
        return out, missing

    def keep(self, what: str, ns: str, found: Mapping[Any, Any]) -> None:
        """Remember never-changing rows just read: shared at once in a read
        view (its snapshot holds them), at commit in a write transaction."""
        st = self._st
        if st.conn is None or not found:
            return
        rows = {(what, ns, k): v for k, v in found.items()}
        if st.write:
            if len(st.seg_cache) < 1_000_000:
                st.seg_cache.update(rows)
        else:
            self._share_segments(st.erasures, rows)

    def generation(self, ns: str | None = None) -> Generation:
        """``erasures`` is the stored erasure counter, which every transaction
        that deletes or blanks rows raises as it commits, whichever process it
        runs in. With ``ns``, in a read view, ``writes`` is the namespace's
        stored write counter (`WROTE`), read in the same snapshot as the data;
        otherwise it is new at every call: a store-wide write counter would
        make every writer of every namespace wait on one row."""
        st = self._st
        if ns is None or st.conn is None or st.write:
            if st.conn is None or not st.begun:
                self._q(READ_ERASED, {"ns": STORE_ROW})  # begins the transaction, if any
            return Generation(-next(self._generations), self._st.erasures or 0)
        key = ("writes", ns, None)
        view = st.view
        if key not in view:
            self._enqueue(READ_WRITES, {"ns": ns}, lambda c: view.__setitem__(key, c.fetchone()[0]))
            self._flush()
        return Generation(int(view[key]), st.erasures or 0)

    def _dropped(self, ns: str) -> None:
        """This write transaction purges ``ns`` whole: its write counter's row
        (which holds the name) is deleted, and not raised again as it commits."""
        self._erased()
        self._st.dropped.add(ns)
        self._q("DELETE FROM ns_counters WHERE ns = %(ns)s", {"ns": ns}, defer=True)

    def _erased(self) -> None:
        """This write transaction deletes or blanks rows: raise the stored
        erasure counter as it commits, and from here on trust no row read before."""
        self._st.erasing = True
        self._st.seg_cache.clear()
        self._st.tops.clear()  # a number deleted may be given again, as max() + 1 gives it

    def transaction(self) -> Any:
        return self._tx(True)

    def reading(self) -> Any:
        return self._tx(False)

    def close(self) -> None:
        self._pool.close()

    def _run(self, conn: Any, sql: str, params: Mapping[str, Any] | None) -> Any:
        if self._trace is not None and params is not None:
            self._trace(sql, params)
        return conn.execute(sql, params)

    def _flush(self) -> Any:
        """Send the queued statements, in one round trip; the last one's cursor."""
        st = self._st
        if st.stream is not None:
            st.stream.end()
        queue, st.queue = st.queue, []
        conn = st.conn
        st.sent = True
        if len(queue) == 1:
            cur = self._run(conn, queue[0][0], queue[0][1])
            curs = [cur]
        else:
            with conn.pipeline():
                curs = [self._run(conn, q, p) for q, p, _ in queue]
        for (_, _, then), c in zip(queue, curs, strict=True):
            if then is not None:
                then(c)
        return curs[-1]

    def _q(
        self, sql: str, params: Mapping[str, Any], *, defer: bool = False
    ) -> list[tuple[Any, ...]]:
        """Run one statement on the namespace ``params['ns']``; its rows, if any.

        ``defer``: in a write transaction, send it with the next statement that
        needs an answer (or the commit), saving a round trip; its errors then
        surface there, still inside the transaction.
        """
        st = self._st
        try:
            if st.conn is None:
                with self._pool.connection() as conn:
                    cur = self._run(conn, sql, params)
                    rows = cur.fetchall() if cur.description else []
                if sql is READ_ERASED:
                    self._saw_erasures(int(rows[0][0]))
                return rows
            if sql is READ_ERASED:
                self._enqueue(sql, params, self._read_counter)
                self._flush()
                return []
            self._enqueue(sql, params, None)
            if defer and st.write:
                return []
            cur = self._flush()
            return cur.fetchall() if cur.description else []
        except self._psycopg.Error as exc:
            if st.conn is not None:
                raise  # the transaction translates it after rolling back
            raise StorageError(f"PostgreSQL store {self.url!r}: {exc}") from exc

    def _enqueue(
        self, sql: str, params: Mapping[str, Any], then: Callable[[Any], None] | None
    ) -> None:
        """Queue a statement of the open transaction, after what must precede
        it: ``BEGIN``, the namespace's lock, the erasure counter."""
        st = self._st
        ns = params["ns"]
        queue = st.queue
        if not st.begun:
            begin = "BEGIN" if st.write else "BEGIN ISOLATION LEVEL REPEATABLE READ"
            queue.append((begin, None, None))
            st.begun = True
        # (Once per round trip: a statement queued ahead may have asked already.)
        count = st.erasures is None and all(q[0] is not READ_ERASED for q in queue)
        if st.write and ns not in st.locked and ns != STORE_ROW:
            # Serialises writers of this namespace until commit or rollback.
            queue.append((LOCK, {"ns": ns}, None))
            st.locked.add(ns)
            count = True  # a purge of it may have committed while we waited
            if sql is not TOPS:
                # Nearly every write numbers an audit line, many a record: the
                # numbers go with the lock, in the same round trip.
                queue.append((TOPS, {"ns": ns}, lambda cur: self._saw_tops(ns, cur.fetchone())))
        if count and sql is not READ_ERASED:
            queue.append((READ_ERASED, {"ns": STORE_ROW}, self._read_counter))
        queue.append((sql, params, then))

    def _view_answer(self, key: Key, sql: str, params: Mapping[str, Any]) -> Any:
        """The first value of ``sql``'s first row, kept for the rest of a read
        view (one snapshot); in a write transaction, asked every time."""
        st = self._st
        if key in st.view and not st.write:
            return st.view[key]
        answer = self._q(sql, params)[0][0]
        if st.conn is not None and not st.write:
            st.view[key] = answer
        return answer

    def _prefetch(self, key: Key, sql: str, params: Mapping[str, Any]) -> None:
        """In a read view, queue ``sql`` to go with the next statement, its
        answer kept for `_view_answer`: a question that usually follows costs
        no round trip of its own."""
        st = self._st
        if st.conn is not None and not st.write and key not in st.view:
            view = st.view
            self._enqueue(sql, params, lambda cur: view.__setitem__(key, cur.fetchone()[0]))

    def _saw_tops(self, ns: str, row: tuple[Any, ...]) -> None:
        tops = self._st.tops
        tops["audit", ns, ""], tops["records", ns, ""] = int(row[0]), int(row[1])
        self._st.counted[ns] = int(row[2])

    def _read_counter(self, cur: Any) -> None:
        self._saw_erasures(int(cur.fetchone()[0]))

    def _ids(self, sql: str, ns: str, ids: Iterable[str]) -> list[tuple[Any, ...]]:
        # One string, not an array: ids are printable, so the separator is in none.
        want = SEP.join(ids)
        return self._q(sql, {"ns": ns, "ids": want}) if want else []

    def _by_key(
        self, cols: str, table: str, key: str, ns: str, ids: Iterable[str], then: str = ""
    ) -> list[tuple[Any, ...]]:
        """The rows of ``table`` whose ``key`` is one of ``ids`` (see
        `each_key`); ``then`` follows the statement (an ``ORDER BY``)."""
        want = ids if isinstance(ids, list) else list(ids)
        sql = each_key(cols, table, key, many=len(want) > LATERAL_UP_TO)
        return self._ids(sql + then, ns, want)
