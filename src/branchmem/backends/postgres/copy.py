"""What a PostgreSQL transaction knows of a ``COPY`` in progress.

`postgres.conn` holds the transaction, `postgres.stream` the ``COPY``: each needs the
other only through this interface, so neither imports the other at run time
(`postgres.stream.CopyStream` implements it; `postgres.conn` ends or abandons it before
any other statement, and when the transaction rolls back).
"""

from __future__ import annotations

from typing import Protocol


class OpenCopy(Protocol):
    """A ``COPY`` a write transaction has open."""

    def end(self) -> None:
        """End it: the server has stored every row sent (may raise `DuplicateIds`)."""

    def close(self) -> None:
        """Abandon it (the server drops its rows and fails the transaction)."""
