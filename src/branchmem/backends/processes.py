"""Optional backend protocols about durability, the log file and other
connections (found with ``isinstance``; re-exported by `branchmem.backends.base`)."""

from __future__ import annotations

from collections.abc import Iterable
from contextlib import AbstractContextManager
from typing import Protocol, runtime_checkable


@runtime_checkable
class UnsyncedCommits(Protocol):
    """Optional (found with ``isinstance``): a write transaction whose commit
    does not wait for the disk. It is as atomic as any, and a crash of the
    process loses none of it; a power cut may lose it until the next synced
    commit (or the close), which syncs everything committed before. For writes
    that a synced commit always follows soon (a graph step's pending writes
    before its checkpoint)."""

    def unsynced_transaction(self) -> AbstractContextManager[None]:
        """`transaction`, committed without a sync (inside an open transaction
        it joins it, which decides)."""
        ...


@runtime_checkable
class OtherWriters(Protocol):
    """Optional (found with ``isinstance``): tells whether another connection
    (another `Store` on the file or database, another process) committed since
    a last look, where this connection's own commits do not count. What a
    process keeps beside the store (the LangGraph long-term view) is read
    again when it moves. A backend without it (memory) has no other writers
    to tell of."""

    def others_version(self, namespaces: Iterable[str]) -> int:
        """A number that changes whenever another connection commits a write to
        one of ``namespaces``, never for this one's own commits. It may also
        change for other commits: SQLite's changes for any commit to the file
        (``data_version``); PostgreSQL's follows the namespaces' write
        counters alone, so writers of other namespaces never move it (and
        never wait on one row)."""
        ...


@runtime_checkable
class LogFile(Protocol):
    """Optional (found with ``isinstance``): a backend whose write-ahead log is a
    file next to the store (SQLite). After a purge the log may still hold the
    erased bytes while another connection reads; `erasure_pending` says so
    until `checkpoint` (tried again after every write and at close) has
    copied the log into the file and truncated it."""

    def checkpoint(self) -> bool:
        """Copy the log into the file and truncate it; True if it was complete."""
        ...

    def erasure_pending(self) -> bool:
        """Does the log (may) still hold bytes of a purge?"""
        ...
