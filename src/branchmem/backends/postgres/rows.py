"""Rows into the PostgreSQL backend's tables: inserts, ``COPY``, numbering.

An insert reads no table, so that a distributed PostgreSQL (Citus) can
route it to the namespace's shard (one that reads a table, ``INSERT ...
SELECT`` with a subquery, goes through the coordinator): what it must know
first is asked by a statement of its own, on one namespace, or answered by
the insert itself (``ON CONFLICT DO NOTHING RETURNING``). The numbers it
gives (audit lines and records count up per namespace, head moves per
branch) come from reads made with the namespace's lock, in the same round
trip (`postgres.conn.TOPS`), and are counted on in the transaction, which no
other writer of the namespace can overlap.
"""

from __future__ import annotations

from typing import Any

from ..base import DuplicateIds
from .conn import COPY_FROM, MOVES_TOP, TOPS, PgConnection
from .sql import insert
from .stream import CopyStream


class PgRows(PgConnection):
    """Inserts of rows (`_insert`, `_copy`, `stream`) and their numbers (`_numbers`)."""

    def _copy(self, table: str, cols: str, types: str, ns: str, rows: list[tuple[Any, ...]]) -> str:
        """``COPY`` a large batch into ``table`` with ``ns`` on every row.

        ``types`` names the PostgreSQL type of each of ``cols`` (see
        `CopyStream`). Returns ``"done"``; ``"duplicate"`` if a key already
        existed (nothing of the batch is left: it runs under a savepoint);
        ``"skipped"`` (nothing done) for a small batch or outside a begun,
        locked write transaction. Arrays of many values cost psycopg far more
        to encode than ``COPY`` rows.
        """
        st = self._st
        if len(rows) < COPY_FROM or st.conn is None or not st.begun or ns not in st.locked:
            return "skipped"
        stream = CopyStream(self, table, cols, types, ns)
        try:
            stream.write(rows)
            stream.finish()
        except DuplicateIds:
            stream.abort()
            return "duplicate"
        return "done"

    def stream(self, table: str, cols: str, types: str, ns: str) -> CopyStream | None:
        """A `CopyStream` into ``table``, in a write transaction that already
        holds ``ns``'s lock; None outside one."""
        st = self._st
        if st.conn is None or not st.write or not st.begun or ns not in st.locked:
            return None
        return CopyStream(self, table, cols, types, ns)

    def _numbers(self, table: str, ns: str, n: int, branch: str = "") -> int:
        """The first of ``n`` new numbers of ``table`` in ``ns`` (of head
        moves: in ``branch``), one past the highest stored. Kept by a write
        transaction that holds the namespace's lock (no one else numbers
        there until it ends); read from the table where not known yet."""
        st = self._st
        key = (table, ns, branch)
        top = st.tops.get(key)
        if top is None:
            if table == "head_moves":
                top = int(self._q(MOVES_TOP, {"ns": ns, "b": branch})[0][0])
            else:
                row = self._q(TOPS, {"ns": ns})[0]
                top = int(row[0] if table == "audit" else row[1])
                if st.write and ns in st.locked:
                    self._saw_tops(ns, row)
        if st.conn is not None and st.write and ns in st.locked:
            st.tops[key] = top + n
        return top + 1

    def _prefetch_moves_top(self, ns: str, branch: str) -> None:
        """In a write transaction, queue the read of ``branch``'s highest head
        move number to go with the next statement (a head move usually follows)."""
        st = self._st
        key = ("head_moves", ns, branch)
        if st.conn is not None and st.write and key not in st.tops:
            tops = st.tops
            self._enqueue(
                MOVES_TOP,
                {"ns": ns, "b": branch},
                lambda cur: tops.__setitem__(key, int(cur.fetchone()[0])),
            )

    def _insert(
        self,
        table: str,
        cols: str,
        types: str,
        ns: str,
        rows: list[tuple[Any, ...]],
        tail: str = "",
        *,
        defer: bool = True,
    ) -> list[tuple[Any, ...]]:
        """Insert ``rows`` (see `postgres.sql.insert`); ``defer`` as for `_q`, whose
        answer this is (the rows of a ``RETURNING`` tail)."""
        if not rows:
            return []
        sql, params = insert(table, cols, types, rows, tail)
        params["ns"] = ns
        return self._q(sql, params, defer=defer)
