"""Versions of the SQLite schema: create a new store, upgrade an older one.

Version 2 (the first release) kept its version in ``store_info``; version 3
adds the ``schema_version`` table, one row per applied version. ``store_info``
keeps the current version too, so that a release that knows only ``store_info``
refuses a newer file instead of misreading it.
"""

from __future__ import annotations

import sqlite3
import time

from ..errors import StorageError
from .migrations import CURRENT, plan, steps_to_apply

VERSION_TABLE = (
    "CREATE TABLE IF NOT EXISTS schema_version ("
    "version INTEGER PRIMARY KEY, applied_at REAL NOT NULL)"
)

# Statements that bring a store from the version before to the key's version.
STEPS: dict[int, list[str]] = {3: [VERSION_TABLE]}


def _found_version(db: sqlite3.Connection) -> int | None:
    """The store's version, or None for a file without a store in it yet."""
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    if "schema_version" in tables:
        row = db.execute("SELECT max(version) FROM schema_version").fetchone()
        if row is not None and row[0] is not None:
            return int(row[0])
    if "store_info" in tables:
        row = db.execute("SELECT value FROM store_info WHERE key='schema'").fetchone()
        if row is not None:
            return int(row[0])
    return None


def prepare(db: sqlite3.Connection, schema: str, where: str) -> None:
    """Create the store or upgrade it to `CURRENT`, all in one write transaction.

    ``schema`` is the current schema as ``CREATE ... IF NOT EXISTS`` statements.
    """
    if _found_version(db) == CURRENT:
        return  # nothing to write: opening never waits for another writer's lock
    db.execute("BEGIN IMMEDIATE")
    try:
        stmts, versions = plan(_found_version(db), STEPS, schema, where)
        for stmt in [*stmts, VERSION_TABLE]:
            db.execute(stmt)
        now = time.time()
        for v in versions:
            db.execute("INSERT INTO schema_version VALUES (?, ?)", (v, now))
        db.execute("INSERT OR REPLACE INTO store_info VALUES ('schema', ?)", (str(CURRENT),))
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise


def check_readonly(db: sqlite3.Connection, where: str) -> None:
    """A store opened read-only must already be at `CURRENT`: nothing can be upgraded."""
    found = _found_version(db)
    if found is None:
        raise StorageError(f"{where} has no schema version; it is not a branchmem store")
    if found != CURRENT:
        steps_to_apply(found, where)  # a newer store: refused with the reason
        raise StorageError(
            f"{where} has schema version {found}; open it once without readonly=True "
            f"to upgrade it to version {CURRENT}"
        )
