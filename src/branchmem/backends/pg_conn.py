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

from ..errors import StorageError
from .base import Generation, Pos
from .pg_schema import prepare

Trace = Callable[[str, Mapping[str, Any]], None]
"""Called with every statement and its parameters before it runs (for tests)."""

COPY_FROM = 500  # rows: larger batches go in by COPY
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,62}\Z")


def unnest(cols: str, types: str, alias: str = "u", *, ordinality: bool = False) -> str:
    """``unnest(%(c0)s::t0[], ...) AS u(cols)``: one array parameter per column
    (``WITH ORDINALITY``: the last of ``cols`` names the row number, from 1)."""
    arrays = ", ".join(f"%(c{i})s::{t.strip()}[]" for i, t in enumerate(types.split(",")))
    more = " WITH ORDINALITY" if ordinality else ""
    return f"unnest({arrays}){more} AS {alias}({cols})"


def columns(rows: list[tuple[Any, ...]], width: int) -> dict[str, Any]:
    """Rows to the ``c0..cN`` column arrays that `_unnest` reads."""
    cols = list(zip(*rows, strict=True)) if rows else [() for _ in range(width)]
    return {f"c{i}": list(c) for i, c in enumerate(cols)}


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
        # Segment fork points read in this transaction. Kept per transaction, not
        # per process: another process may purge a namespace and rebuild it with
        # the same segment numbers, and no shared counter tells this one so.
        self.seg_cache: dict[tuple[str, int], tuple[Pos, ...]] = {}


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
        trace: Trace | None = None,
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
        self._st = _Local()
        self._generations = itertools.count(1)
        self._erasures = 0
        # One plain connection first: a bad URL or a refused connection fails
        # here at once, and the schema is made or upgraded before the pool opens.
        try:
            with psycopg.connect(url, connect_timeout=10, **kwargs) as conn:
                if schema is not None and create:
                    conn.execute(f"CREATE SCHEMA IF NOT EXISTS {schema}")
                found = conn.execute("SELECT to_regclass('schema_version')").fetchone()
                if not create and (found is None or found[0] is None):
                    raise StorageError(
                        f"no branchmem store at {self.url!r}: the database has no "
                        "schema_version table; pass the URL of a store"
                    )
                prepare(conn, repr(self.url))
            self._pool = psycopg_pool.ConnectionPool(
                url, kwargs=kwargs, min_size=1, max_size=max_size, open=True
            )
        except psycopg.Error as exc:
            raise StorageError(
                f"cannot open PostgreSQL store at {self.url!r}: {exc}; check the URL and "
                "that the server accepts connections"
            ) from exc

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
            st.seg_cache = {}
            try:
                yield
            except BaseException as exc:
                st.conn, st.depth = None, 0
                self._seg_cache.clear()
                if st.begun and not conn.closed:
                    conn.execute("ROLLBACK")
                if isinstance(exc, errors):
                    raise StorageError(f"PostgreSQL store {self.url!r}: {exc}") from exc
                raise
            st.conn, st.depth = None, 0
            try:
                if st.begun:
                    conn.execute("COMMIT")
            except errors as exc:
                self._seg_cache.clear()
                raise StorageError(f"PostgreSQL store {self.url!r}: commit failed: {exc}") from exc
        finally:
            st.conn, st.depth = None, 0
            self._pool.putconn(conn)

    @property
    def _seg_cache(self) -> dict[tuple[str, int], tuple[Pos, ...]]:
        return self._st.seg_cache

    @_seg_cache.setter
    def _seg_cache(self, cache: dict[tuple[str, int], tuple[Pos, ...]]) -> None:
        self._st.seg_cache = cache

    def generation(self) -> Generation:
        """``writes`` is new at every call: nothing tells this process what others
        wrote, so answers derived from the store are recomputed every time (the
        backend's own segment cache is per transaction for the same reason).
        ``erasures`` counts this process's own deletions; another process's
        purge is not seen here (see docs/scaling.md)."""
        return Generation(next(self._generations), self._erasures)

    def _erased(self) -> None:
        self._erasures += 1

    def transaction(self) -> Any:
        return self._tx(True)

    def reading(self) -> Any:
        return self._tx(False)

    def close(self) -> None:
        self._pool.close()

    def _q(self, sql: str, params: Mapping[str, Any]) -> list[tuple[Any, ...]]:
        """Run one statement on the namespace ``params['ns']``; its rows, if any."""
        st = self._st
        if self._trace is not None:
            self._trace(sql, params)
        try:
            if st.conn is None:
                with self._pool.connection() as conn:
                    cur = conn.execute(sql, params)
                    return cur.fetchall() if cur.description else []
            conn = st.conn
            first: list[tuple[str, Mapping[str, Any] | None]] = []
            if not st.begun:
                first.append(
                    ("BEGIN" if st.write else "BEGIN ISOLATION LEVEL REPEATABLE READ", None)
                )
                st.begun = True
            if st.write and params["ns"] not in st.locked:
                # Serialises writers of this namespace until commit or rollback.
                lock = "SELECT pg_advisory_xact_lock(hashtextextended(%(ns)s, 0))"
                first.append((lock, {"ns": params["ns"]}))
                st.locked.add(params["ns"])
            if not first:
                cur = conn.execute(sql, params)
            else:  # all in one round trip
                with conn.pipeline():
                    for q, p in first:
                        if self._trace is not None and p is not None:
                            self._trace(q, p)
                        conn.execute(q, p)
                    cur = conn.execute(sql, params)
            return cur.fetchall() if cur.description else []
        except self._psycopg.Error as exc:
            if st.conn is not None:
                raise  # the transaction translates it after rolling back
            raise StorageError(f"PostgreSQL store {self.url!r}: {exc}") from exc

    def _copy(self, table: str, cols: str, ns: str, rows: list[tuple[Any, ...]]) -> str:
        """``COPY`` a large batch into ``table`` with ``ns`` on every row.

        Returns ``"done"``; ``"duplicate"`` if a key already existed (nothing of
        the batch is left: it runs under a savepoint); ``"skipped"`` (nothing
        done) for a small batch or outside a begun, locked write transaction.
        Arrays of many values cost psycopg far more to encode than ``COPY`` rows.
        """
        st = self._st
        if len(rows) < COPY_FROM or st.conn is None or not st.begun or ns not in st.locked:
            return "skipped"
        sql = f"COPY {table} (ns, {cols}) FROM STDIN"
        if self._trace is not None:
            self._trace(sql, {"ns": ns})
        conn = st.conn
        conn.execute("SAVEPOINT batch")
        try:
            with conn.cursor().copy(sql) as copy:
                for r in rows:
                    copy.write_row((ns, *r))
        except self._psycopg.errors.UniqueViolation:
            conn.execute("ROLLBACK TO SAVEPOINT batch")
            return "duplicate"
        conn.execute("RELEASE SAVEPOINT batch")
        return "done"

    def _ids(self, sql: str, ns: str, ids: Iterable[str]) -> list[tuple[Any, ...]]:
        want = list(ids)
        return self._q(sql, {"ns": ns, "ids": want}) if want else []
