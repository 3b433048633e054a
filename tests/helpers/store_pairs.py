"""Two `Store` objects on one fresh store (a memory backend shared, one SQLite
file, one PostgreSQL schema of their own), as two processes would have: the
factory behind the two-stores tests' ``open_pair`` fixtures."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from branchmem import Store
from branchmem.backends.memory import MemoryBackend
from helpers.pg_helpers import PG_URL


@contextmanager
def store_pairs(
    tmp_path: Path, prefix: str, trace: Any = None
) -> Iterator[Callable[[str], tuple[Store, Store]]]:
    """A factory of pairs by kind (``"memory"``, ``"sqlite"``, ``"postgres"``);
    on leaving, every store is closed and every schema dropped. ``trace`` is
    passed to the PostgreSQL backends (a `Tracer`)."""
    opened: list[Store] = []
    schemas: list[str] = []
    counter = iter(range(10**6))

    def factory(kind: str) -> tuple[Store, Store]:
        if kind == "memory":
            b = MemoryBackend()
            pair = (Store(backend=b), Store(backend=b))
        elif kind == "sqlite":
            p = tmp_path / f"two{next(counter)}.db"
            pair = (Store(p), Store(p))
        else:
            from branchmem.backends.postgres import PostgresBackend

            schema = f"{prefix}_{uuid.uuid4().hex[:12]}"
            schemas.append(schema)
            pair = (
                Store(backend=PostgresBackend(PG_URL, schema=schema, trace=trace)),
                Store(backend=PostgresBackend(PG_URL, schema=schema, trace=trace)),
            )
        opened.extend(pair)
        return pair

    try:
        yield factory
    finally:
        for s in opened:
            s.close()
        if schemas:
            import psycopg

            with psycopg.connect(PG_URL, autocommit=True) as conn:
                for schema in schemas:
                    conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
