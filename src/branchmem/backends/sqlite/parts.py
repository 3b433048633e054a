"""What the SQLite backend's table modules share: chunked ``IN`` lists,
multi-row inserts, and the attributes of `SQLiteBackend` they use."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from itertools import chain
from typing import TYPE_CHECKING, Any

from ..base import Pos
from ..sqlrows import event_from_row, record_from_row

CHUNK = 400  # ids per IN (...) list, well under SQLite's variable limit


def chunks(items: Sequence[Any], n: int = CHUNK) -> Iterator[Sequence[Any]]:
    for i in range(0, len(items), n):
        yield items[i : i + n]


def rowid_tables(db: sqlite3.Connection) -> frozenset[str]:
    """The tables of the file that have a rowid (all large ones from schema
    version 10; an older file opened read-only keeps them without)."""
    rows = db.execute("SELECT name, sql FROM sqlite_master WHERE type='table'").fetchall()
    return frozenset(n for n, sql in rows if "WITHOUT ROWID" not in (sql or "").upper())


def marks(n: int) -> str:
    return ",".join("?" * n)


def insert_rows(db: sqlite3.Connection, head: str, ncols: int, rows: list[Any]) -> None:
    """``head`` (``INSERT INTO t (cols)``) for every row, many rows per statement.

    A multi-row ``VALUES`` list costs SQLite about a fifth less than one
    statement per row on a batch import. Statements stay within 999
    parameters, the limit of the oldest SQLite versions.
    """
    k = max(1, 999 // ncols)
    one = f"({marks(ncols)})"
    full = len(rows) - len(rows) % k
    if full:
        flat = chain.from_iterable
        db.executemany(
            f"{head} VALUES {','.join([one] * k)}",
            (list(flat(rows[i : i + k])) for i in range(0, full, k)),
        )
    if full < len(rows):
        db.executemany(f"{head} VALUES {one}", rows[full:])


class SQLiteParts:
    """The state and helpers of `SQLiteBackend` that its table mixins use."""

    _db: sqlite3.Connection
    _depth: int
    _ns_ids: dict[str, int]
    _seg_cache: dict[tuple[int, int], tuple[Pos, ...]]
    # Facts that hold while no other connection writes (dropped when one has):
    _top: dict[int, int]  # namespace id -> its highest record seq
    _no_waits: set[int]  # namespaces without waiting events
    _no_record_waits: set[int]  # namespaces without records waiting for a source
    _tips: dict[tuple[int, int], int]  # (namespace id, segment) -> its last seq
    _seg_top: dict[int, int]  # namespace id -> its highest segment number
    _audit_top: dict[int, int]  # namespace id -> its last audit line's seq
    _branch_list: dict[int, list[tuple[str, str]]]  # namespace id -> (name, head) by name
    _branch_rows: dict[tuple[int, str], Any]  # (namespace id, name) -> BranchRow | None
    # (namespace id, event id) -> the row of `EVENT_COLS` this connection wrote
    # (connected events of small batches, the parents and sources of the next
    # single writes); also dropped by any erasure.
    _recent: dict[tuple[int, str], tuple[Any, ...]]
    _rowid: frozenset[str]  # the tables that have a rowid (`rowid_tables`)

    _event = staticmethod(event_from_row)
    _record = staticmethod(record_from_row)

    if TYPE_CHECKING:

        def _ns(self, ns: str, create: bool = False) -> int | None: ...

        def _wns(self, ns: str) -> int: ...

        def _mark_erasure(self) -> None: ...
