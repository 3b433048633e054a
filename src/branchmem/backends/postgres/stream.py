"""Rows streamed into a PostgreSQL table by binary ``COPY``, in the open write transaction.

psycopg writes ``COPY``'s binary format a row at a time in C and sends it as
its buffer fills, so the server stores the first rows while the caller is
still producing the next: a large batch's events go out chunk by chunk while
the rest of the batch is checked and placed (`branchmem.ops.stream`).
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ..base import DuplicateIds
from .copy import OpenCopy

if TYPE_CHECKING:
    from .conn import PgConnection

_QUOTED = re.compile(r"[\"'«»„“”‘’‚]([A-Za-z_][A-Za-z0-9_]*)[\"'«»„“”‘’‚]")


def duplicate_key(exc: Exception, table: str) -> bool:
    """Is ``exc`` a stored key of ``table`` met by an insert or ``COPY``?

    PostgreSQL says so by its code (``23505``). A Citus coordinator re-raises
    its worker's error without it (``XX000: duplicate key value violates
    unique constraint "events_pkey_102008"``: the shard's constraint, the
    table's name with the shard id after it), so there the message must name
    ``table``'s primary key, quoted, with or without a shard suffix (in any
    language the server speaks). Taking another error for a duplicate costs
    little: the batch is planned again with every id looked up, and the error
    comes back from there.
    """
    code = getattr(exc, "sqlstate", None)
    if code == "23505":
        return True
    if code not in ("XX000", None):
        return False
    diag = getattr(exc, "diag", None)
    message = (diag.message_primary if diag is not None else None) or str(exc)
    key = f"{table}_pkey"
    for name in _QUOTED.findall(message):
        if name == key or (name.startswith(key + "_") and name[len(key) + 1 :].isdigit()):
            return True
    return False


class CopyStream(OpenCopy):
    """Rows of one table and namespace, streamed by ``COPY`` under one savepoint.

    `write` opens a ``COPY`` if none is open and sends the rows. Any other
    statement of the transaction first ends it (`PgConnection._flush` calls
    `end`, which waits for the server to store what was sent); the next
    `write` opens another. A key already stored surfaces as `DuplicateIds`
    from `end` (and so from `finish`, or from the statement that ended the
    ``COPY``), after which only `abort` is left. `abort` undoes every row
    the stream wrote; `finish` keeps them.
    """

    def __init__(self, pg: PgConnection, table: str, cols: str, types: str, ns: str) -> None:
        self._pg = pg
        self._ns = ns
        self._table = table
        self._sql = f"COPY {table} (ns, {cols}) FROM STDIN (FORMAT BINARY)"
        self._types = ["text", *(t.strip() for t in types.split(","))]
        self._open: Any = None  # the open COPY's context manager
        self._write: Any = None
        self._saved = False

    def write(self, rows: Iterable[tuple[Any, ...]]) -> None:
        """Send ``rows`` (the values of the table's columns after ``ns``)."""
        if self._write is None:
            self._start()
        write, ns = self._write, self._ns
        for row in rows:
            write((ns, *row))

    def _start(self) -> None:
        pg = self._pg
        st = pg._st
        if st.queue:
            pg._flush()  # COPY cannot join a pipeline
        conn = st.conn
        if not self._saved:
            conn.execute("SAVEPOINT batch")
            self._saved = True
        if pg._trace is not None:
            pg._trace(self._sql, {"ns": self._ns})
        opened = conn.cursor().copy(self._sql)
        copy = opened.__enter__()
        copy.set_types(self._types)
        self._open, self._write = opened, copy.write_row
        st.stream = self

    def end(self) -> None:
        """End the open ``COPY``, if any: the server has stored every row sent."""
        opened = self._open
        if opened is None:
            return
        self._open = self._write = None
        self._pg._st.stream = None
        try:
            opened.__exit__(None, None, None)
        except self._pg._psycopg.Error as exc:
            if duplicate_key(exc, self._table):
                raise DuplicateIds(self._ns) from exc
            raise

    def finish(self) -> None:
        """Keep what was written (raises `DuplicateIds` if a key was stored)."""
        self.end()
        if self._saved:
            self._pg._st.conn.execute("RELEASE SAVEPOINT batch")
            self._saved = False

    def abort(self) -> None:
        """Undo every row this stream wrote; the transaction goes on."""
        self.close()
        if self._saved:
            conn = self._pg._st.conn
            conn.execute("ROLLBACK TO SAVEPOINT batch")
            conn.execute("RELEASE SAVEPOINT batch")
            self._saved = False

    def close(self) -> None:
        """Abandon the open ``COPY``, if any (the server drops its rows and
        fails the transaction: before a rollback)."""
        opened = self._open
        if opened is None:
            return
        self._open = self._write = None
        self._pg._st.stream = None
        stop = RuntimeError("batch abandoned")
        with contextlib.suppress(Exception):
            opened.__exit__(RuntimeError, stop, None)
