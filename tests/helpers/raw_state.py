"""Everything a store holds, as one comparable value: "changes nothing" means equal.

SQLite: every row of every table (`iterdump`), read through a separate
connection. PostgreSQL: every row of every table of the store's schema, read on
a connection of its own. Memory: the repr of every namespace's rows and counters.
"""

from __future__ import annotations

import sqlite3

from branchmem import Store
from branchmem.backends.base import Backend
from branchmem.backends.memory import MemoryBackend
from branchmem.backends.postgres.conn import PgConnection
from branchmem.backends.sqlite import SQLiteBackend


def raw_state(store: Store) -> object:
    return backend_state(store._engine.backend)


def backend_state(b: Backend) -> object:
    """`raw_state` of a backend (the contract suite's ``raw_state``)."""
    if isinstance(b, SQLiteBackend):
        db = sqlite3.connect(b.path)
        try:
            return list(db.iterdump())
        finally:
            db.close()
    if isinstance(b, PgConnection):
        with b._pool.connection() as c:
            listed = "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"
            tables = sorted(r[0] for r in c.execute(listed))
            held = {t: sorted(repr(r) for r in _rows(c, t)) for t in tables}
            # An empty pgvector table holds nothing: one is made when first
            # needed and stays in a test schema that the next store reuses.
            return {t: rows for t, rows in held.items() if rows or not _pgvector(t)}
    assert isinstance(b, MemoryBackend)
    spaces = {ns: repr(sorted(vars(sp).items())) for ns, sp in b._spaces.items()}
    return spaces, sorted(b._query_logs), repr(b._detached)


def _pgvector(table: str) -> bool:
    return table.startswith(("hvec_", "vec_"))


def _rows(c: object, table: str) -> list[tuple[object, ...]]:
    """A table's rows; an ``arrival`` number (a sequence, which a rolled-back
    insert also advances) as its rank, so that only the order it gives counts."""
    cur = c.execute(f"SELECT * FROM {table}")  # type: ignore[attr-defined]
    names = [d.name for d in cur.description]
    rows = [tuple(r) for r in cur]
    if "arrival" not in names:
        return rows
    i = names.index("arrival")
    rank = {v: n for n, v in enumerate(sorted(r[i] for r in rows))}
    return [(*r[:i], rank[r[i]], *r[i + 1 :]) for r in rows]


def stored_state(store: Store) -> object:
    """`raw_state` less the schema version row, which holds the time it was made."""
    raw = raw_state(store)
    if isinstance(raw, list):
        return [line for line in raw if not line.startswith('INSERT INTO "schema_version"')]
    if isinstance(raw, dict):
        return {t: rows for t, rows in raw.items() if t != "schema_version"}
    return raw
