"""PostgreSQL for the suite: a schema per store, dropped after, and a check
that every statement the backend issues stays on one namespace."""

from __future__ import annotations

import os
import re
import uuid
from collections.abc import Mapping
from typing import Any

PG_URL = os.environ.get("BRANCHMEM_TEST_POSTGRES", "")
SKIP_REASON = (
    "PostgreSQL tests need BRANCHMEM_TEST_POSTGRES=postgresql://postgres@127.0.0.1:5432/test "
    "(.ci/run sets it)"
)

_TABLE = re.compile(r"\b(?:FROM|JOIN|UPDATE|INTO)\s+(?!unnest\()([a-z_]+)")
_NS_FILTER = re.compile(r"\bns = %\(ns\)s")
_NS_VALUE = re.compile(r"\b(?:SELECT|VALUES \() ?%\(ns\)s")
_CTE = re.compile(r"\b([a-z_]+)(?:\([a-z_, ]*\))? AS \(")  # a WITH query's name, not a table


def examples(backend: str, n: int) -> int:
    """Hypothesis examples for a property on ``backend``: ``n``, or on PostgreSQL,
    where every read is a few round trips to a server, a 25th of it (at least 3)."""
    return max(3, n // 25) if backend == "postgres" else n


def statement_problem(sql: str, params: Mapping[str, Any]) -> str | None:
    """Why ``sql`` is not confined to one namespace, or None if it is.

    Each table a statement reads or writes must be matched by a filter
    ``ns = %(ns)s`` (or, for an insert, the value ``%(ns)s``), and the
    parameters carry exactly one namespace, a string.
    """
    if not isinstance(params.get("ns"), str):
        return "no single namespace parameter"
    ctes = set(_CTE.findall(sql))
    tables = [t for t in _TABLE.findall(sql) if t not in ctes]
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


class SchemaPool:
    """Schemas for test stores, reused: creating the tables costs far more than
    emptying them. Names are random, so parallel runs never share one; all are
    dropped when the session ends."""

    def __init__(self) -> None:
        self.free: list[str] = []
        self.made: list[str] = []

    def take(self) -> str:
        if self.free:
            return self.free.pop()
        name = "bmt_" + uuid.uuid4().hex[:16]
        self.made.append(name)
        return name

    def give_back(self, names: list[str]) -> None:
        if not names:
            return
        import psycopg

        from branchmem.backends.pg_schema import TABLES

        tables = [t for t in re.findall(r"CREATE TABLE IF NOT EXISTS (\w+)", TABLES)]
        tables.remove("schema_version")
        with psycopg.connect(PG_URL, autocommit=True) as conn:
            for name in names:
                conn.execute("; ".join(f"DELETE FROM {name}.{t}" for t in tables))
        self.free.extend(names)

    def drop_all(self) -> None:
        if not self.made:
            return
        import psycopg

        with psycopg.connect(PG_URL, autocommit=True) as conn:
            for name in self.made:
                conn.execute(f"DROP SCHEMA IF EXISTS {name} CASCADE")
        self.made.clear()
        self.free.clear()


SCHEMAS = SchemaPool()


def open_backend(tracer: Tracer) -> Any:
    """A PostgreSQL backend on a schema of its own, given back (emptied) on close."""
    from branchmem.backends.postgres import PostgresBackend

    class Pooled(PostgresBackend):
        returned = False

        def close(self) -> None:
            super().close()
            if not self.returned:
                self.returned = True
                SCHEMAS.give_back([name])

    name = SCHEMAS.take()
    return Pooled(PG_URL, schema=name, trace=tracer)
