"""The storage interface every backend implements.

A backend stores and fetches rows; it knows nothing of the gate, branches or
ranking, which live once above it (`branchmem.gate`, `branchmem.ops`, `branchmem.lineage`).
Positions are ``(segment, seq)`` pairs assigned by `branchmem.lineage`.
Every method takes the namespace first; nothing crosses namespaces.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from ..branch_types import AuditEntry, HeadMove, Snapshot
from ..model import Event, Memory

Pos = tuple[int, int]
"""``(segment, seq)``: where a connected event sits in the lineage index."""

Ranges = Mapping[int, int]
"""Ancestry of an anchor: segment -> highest seq that is an ancestor-or-self."""


@dataclass(slots=True)
class EventRow:
    """An event and its position; ``pos`` is None while a parent is still missing."""

    event: Event
    pos: Pos | None


@dataclass(slots=True)
class RecordRow:
    """A record and where the gate indexes it.

    ``pos`` is the position of its deepest source (None while a source is not
    connected). ``extra`` lists further source positions that must also be
    ancestors; it is empty when all sources lie on one chain.
    """

    memory: Memory
    pos: Pos | None
    extra: tuple[Pos, ...] = ()


class DuplicateIds(Exception):
    """Raised by `Backend.insert_events` when an id already exists; nothing was written.

    Batch ingest assumes the ids it is given are new and lets the unique key
    check it; on this error it plans again with a lookup of every id.
    """


@dataclass(slots=True)
class BranchRow:
    """A stored branch pointer and what it was made from."""

    name: str
    head: str
    fork_point: str | None = None
    parent: str | None = None
    created_at: float = 0.0
    updated_at: float = 0.0


@dataclass(slots=True)
class LifeRow:
    """Mutable lifecycle state of a record (the record itself never changes)."""

    archived_at: float | None = None
    restored_at: float | None = None
    uses: int = 0
    last_used: float | None = None


@dataclass(frozen=True, slots=True)
class Generation:
    """Where the store's contents stand, for caches that outlive a transaction.

    Several `Store` objects (in one process or many) may share one file, so
    anything kept between transactions must be checked against it. A cache
    notes the generation it was built at, calls `Backend.generation` inside
    each `Backend.reading` / `Backend.transaction`, and:

    - if ``erasures`` changed, drops everything: something was deleted or
      blanked (a purge, an expiry, a namespace dropped and perhaps rebuilt with
      the same ids), so neither facts nor text derived before may be trusted;
    - if only ``writes`` changed, keeps what was derived from immutable rows
      (records, segment fork points) and recomputes answers that depend on the
      set of rows (what is visible at an anchor, counts).

    Both are opaque counters: compare them for equality only.
    """

    writes: int
    """Changes whenever anything was committed to the store (to the namespace,
    for `Backend.generation` asked with one), by anyone."""
    erasures: int
    """Changes whenever a committed write deleted or blanked stored rows."""


@dataclass(frozen=True, slots=True)
class NewSegment:
    seg: int
    parents: tuple[Pos, ...]


class Backend(Protocol):
    """What `Store` needs from storage. One writer transaction at a time."""

    shares_rows: bool
    """True if reads return the same `Memory` objects each time (kept by the
    backend, never to be mutated); False if every read builds fresh ones."""

    def transaction(self) -> AbstractContextManager[None]:
        """A write transaction: all of it lands, or none of it (reentrant)."""
        ...

    def reading(self) -> AbstractContextManager[None]:
        """A consistent read view (a lock or a read transaction)."""
        ...

    def close(self) -> None: ...

    def generation(self, ns: str | None = None) -> Generation:
        """The store's `Generation` as of the current transaction's start.

        Call it inside `reading` or `transaction`: the backend reads it there
        (and drops its own caches when ``erasures`` moved), so the answer
        holds for the rest of that transaction. With ``ns``, ``writes`` need
        only change when something was committed to that namespace (a backend
        may count writes store-wide, or return a new value each time).
        """
        ...

    # events -----------------------------------------------------------------
    def get_events(self, ns: str, ids: Iterable[str]) -> dict[str, EventRow]:
        """The stored events among ``ids``, as new rows: planning a batch sets
        the ``pos`` of waiting ones before anything is written (or refused)."""
        ...

    def event_positions(self, ns: str, ids: Iterable[str]) -> dict[str, Pos | None]:
        """Positions of the stored events among ``ids`` (None while one waits):
        `get_events` without building the events, for writes that need only where."""
        ...

    def insert_events(self, ns: str, rows: list[EventRow]) -> None:
        """Store new events; raise `DuplicateIds` (writing nothing) if any id exists."""
        ...

    def set_event_positions(self, ns: str, positions: list[tuple[str, Pos]]) -> None: ...

    def waiting_children(self, ns: str, parent_ids: Iterable[str]) -> dict[str, list[str]]:
        """Events waiting for each of these (not yet connected) parents."""
        ...

    def add_waits(self, ns: str, pairs: list[tuple[str, str]]) -> None:
        """Record ``(parent, child)``: child cannot connect before parent does."""
        ...

    def drop_waits(self, ns: str, parent_ids: list[str]) -> None: ...

    # segments ---------------------------------------------------------------
    def segment_parents(self, ns: str, segs: Iterable[int]) -> dict[int, tuple[Pos, ...]]:
        """Fork points of each segment (immutable once written, so cacheable)."""
        ...

    def segment_ancestry(self, ns: str, segs: Iterable[int]) -> dict[int, tuple[Pos, ...]]:
        """Fork points of ``segs``, and of any segments above them that come in
        the same round trip (a database fetches all of them in one recursive
        statement): a cold walk up a long forked path then costs one query, not
        one per fork. Callers use what is returned and ask again for the rest."""
        ...

    def segment_tips(self, ns: str, segs: Iterable[int]) -> dict[int, int]: ...

    def max_segment(self, ns: str) -> int:
        """Highest segment id used in the namespace, -1 if none."""
        ...

    def put_segments(self, ns: str, new: list[NewSegment], tips: dict[int, int]) -> None: ...

    # records ----------------------------------------------------------------
    def get_records(self, ns: str, ids: Iterable[str]) -> dict[str, RecordRow]: ...

    def insert_records(self, ns: str, rows: list[RecordRow]) -> list[Memory]:
        """Store new records; returns them with ``seq`` (write order) filled in."""
        ...

    def set_record_positions(
        self, ns: str, positions: list[tuple[str, Pos, tuple[Pos, ...]]]
    ) -> None: ...

    def records_in_ranges(
        self, ns: str, ranges: Ranges, after: Ranges | None = None
    ) -> Iterator[RecordRow]:
        """Indexed records whose ``pos`` falls in ``ranges`` (``extra`` not yet checked).

        With ``after``, only those past it: ``after[seg] < seq <= ranges[seg]``
        (a segment missing from ``after`` starts at its beginning).
        """
        ...

    def retractions_of(self, ns: str, target_ids: Iterable[str]) -> list[RecordRow]: ...

    def records_waiting_on(self, ns: str, event_ids: Iterable[str]) -> dict[str, list[str]]:
        """Records (ids) not yet indexed because each of these sources is not connected."""
        ...

    def add_record_waits(self, ns: str, pairs: list[tuple[str, str]]) -> None:
        """Record ``(event_id, record_id)`` waits."""
        ...

    def drop_record_waits(self, ns: str, event_ids: list[str]) -> None: ...

    # branches ---------------------------------------------------------------
    def get_branch(self, ns: str, name: str) -> str | None: ...

    def set_branch(self, ns: str, name: str, head: str) -> None: ...

    def list_branches(self, ns: str) -> list[tuple[str, str]]: ...

    def get_branch_row(self, ns: str, name: str) -> BranchRow | None: ...

    def list_branch_rows(self, ns: str) -> list[BranchRow]:
        """Every branch of the namespace, sorted by name."""
        ...

    def put_branch_row(self, ns: str, row: BranchRow) -> None:
        """Create or replace the branch ``row.name``. Callers compare-and-set
        inside `transaction`, which admits one writer at a time."""
        ...

    def delete_branch(self, ns: str, name: str) -> None: ...

    def add_head_moves(self, ns: str, moves: list[HeadMove]) -> None: ...

    def head_moves(self, ns: str, name: str) -> list[HeadMove]:
        """Moves of branch ``name``, oldest first."""
        ...

    def get_snapshot(self, ns: str, name: str) -> Snapshot | None: ...

    def put_snapshot(self, ns: str, snap: Snapshot) -> None: ...

    def list_snapshots(self, ns: str) -> list[Snapshot]:
        """Every snapshot of the namespace, sorted by name."""
        ...

    # lifecycle and erasure ----------------------------------------------------
    def has_lifecycle(self, ns: str) -> bool:
        """Does any record of the namespace have lifecycle state or a time
        (``expires_at``, ``valid_from``, ``valid_to``)? Cheap: reads call it."""
        ...

    def get_life(self, ns: str, ids: Iterable[str]) -> dict[str, LifeRow]: ...

    def put_life(self, ns: str, rows: dict[str, LifeRow]) -> None: ...

    def expired_records(self, ns: str, now: float) -> list[str]:
        """Ids of records whose ``expires_at`` is at or before ``now``."""
        ...

    def records_with_sources(self, ns: str, event_ids: Iterable[str]) -> list[str]:
        """Ids of records with at least one of these sources."""
        ...

    def consolidations(self, ns: str) -> list[str]:
        """Ids of every record whose meta may name inputs (its text holds
        ``"consolidated_from"``: `ops.cascade`), found without reading the
        others (an index of them); callers check each one's meta."""
        ...

    def records_of_kind(self, ns: str, kind: str) -> list[RecordRow]: ...

    def delete_records(self, ns: str, ids: list[str]) -> None:
        """Delete records with their index entries, waits and lifecycle state."""
        ...

    def erase_event(self, ns: str, event_id: str) -> None:
        """Blank an event's content and meta; its id and place in the graph stay."""
        ...

    def drop_namespace(self, ns: str) -> None:
        """Delete everything of the namespace except its audit log."""
        ...

    # listing (inspection) -----------------------------------------------------
    def list_events(self, ns: str, offset: int, limit: int) -> list[EventRow]:
        """Events in arrival order, ``limit`` of them from ``offset``."""
        ...

    def list_records(self, ns: str, offset: int, limit: int) -> list[RecordRow]:
        """Records in write order, ``limit`` of them from ``offset``."""
        ...

    # the tree (children, siblings) -------------------------------------------
    def child_events(
        self, ns: str, parent: str | None, after: int, limit: int
    ) -> list[tuple[int, EventRow]]:
        """Events that list ``parent`` among their parents (the roots when None),
        in arrival order: the first ``limit`` whose key is above ``after`` (0:
        from the first). Keys are opaque, increasing in arrival order within
        one question; a next page passes the last key back as ``after``."""
        ...

    def sibling_events(
        self, ns: str, parents: tuple[str, ...], after: int, limit: int
    ) -> list[tuple[int, EventRow]]:
        """Events whose set of parents is the set ``parents`` (the roots when
        empty), in arrival order, paged like `child_events`."""
        ...

    def sibling_count(self, ns: str, parents: tuple[str, ...], upto: int | None) -> int:
        """How many `sibling_events` of ``parents`` there are, those with a key
        up to ``upto`` only when it is given."""
        ...

    def sibling_before(self, ns: str, parents: tuple[str, ...], key: int) -> str | None:
        """The id of the last of `sibling_events` of ``parents`` with a key below ``key``."""
        ...

    def sibling_key(self, ns: str, event_id: str) -> int | None:
        """The key `sibling_events` gives ``event_id`` (None if not stored)."""
        ...

    # audit ------------------------------------------------------------------
    def add_audit(self, ns: str, entries: list[AuditEntry]) -> None: ...

    def audit(self, ns: str, since: float | None) -> list[AuditEntry]:
        """Entries at or after ``since`` (all if None), oldest first, ``seq`` filled."""
        ...


@runtime_checkable
class HeadSwap(Protocol):
    """Optional (found with ``isinstance``): a branch head moves by
    compare-and-set in one statement, for backends whose writers may run at
    once (PostgreSQL). Others move it with `Backend.put_branch_row` under
    their one-writer lock, where the head read is still the head."""

    def swap_head(self, ns: str, name: str, old: str, new: str, at: float) -> bool:
        """Point branch ``name`` at ``new`` (``updated_at = at``) only if its
        head is still ``old``; whether it moved."""
        ...


@runtime_checkable
class VectorStore(Protocol):
    """Optional (found with ``isinstance``): record vectors kept with the
    records, so no process embeds a record twice. Keyed by (namespace,
    embedder name, record id); ``digest`` names the text a vector was made
    from. `Backend.delete_records` and `Backend.drop_namespace` delete a
    record's vectors with it.
    """

    def get_vectors(
        self, ns: str, embedder: str, ids: Iterable[str]
    ) -> dict[str, tuple[str, bytes]]:
        """``id -> (digest, float32 bytes)`` for the ids that have a vector."""
        ...

    def put_vectors(self, ns: str, embedder: str, rows: list[tuple[str, str, bytes]]) -> None:
        """Store ``(id, digest, float32 bytes)`` rows, replacing any for the same id;
        rows of records no longer stored are skipped."""
        ...

    def transaction(self) -> AbstractContextManager[None]: ...


@runtime_checkable
class TermStore(Protocol):
    """Optional (found with ``isinstance``): `VectorStore`'s twin for each
    record's keyword tokens, keyed by (namespace, tokenizer key, record id),
    the key naming the tokenizer and its version (`retrieval.terms`); apart
    from the vectors, so no vector index sees them. Deleted with the record."""

    def get_terms(
        self, ns: str, tokenizer: str, ids: Iterable[str]
    ) -> dict[str, tuple[str, bytes]]:
        """``id -> (digest, encoded tokens)`` for the ids that have them."""
        ...

    def put_terms(self, ns: str, tokenizer: str, rows: list[tuple[str, str, bytes]]) -> None:
        """Store ``(id, digest, encoded tokens)`` rows as `VectorStore.put_vectors` does."""
        ...

    def transaction(self) -> AbstractContextManager[None]: ...


Columns = tuple[list[str], list[str], list[bytes]]
"""Stored rows as three lists, one row at each position: ids, digests, bytes."""


@runtime_checkable
class StoredColumns(Protocol):
    """Optional (found with ``isinstance``): `VectorStore.get_vectors` and
    `TermStore.get_terms` as `Columns`, with no map by id. A large search
    state built whole compares the ids and digests with its records' in one
    step each, and uses the bytes as they are when both agree."""

    def vector_columns(self, ns: str, embedder: str, ids: list[str]) -> Columns:
        """The rows `VectorStore.get_vectors` gives for ``ids`` (each id once):
        in the order they were written when many are read in one pass, else
        in any order."""
        ...

    def term_columns(self, ns: str, tokenizer: str, ids: list[str]) -> Columns:
        """`vector_columns` of the stored tokens (`TermStore.get_terms`)."""
        ...


@runtime_checkable
class CommitHooks(Protocol):
    """Optional (found with ``isinstance``): run something once the open write
    transaction has committed, when other connections can see what it wrote
    (at once outside a transaction; never if it rolls back). A background
    embedder is told of new records this way."""

    def after_commit(self, fn: Callable[[], None]) -> None: ...


@runtime_checkable
class RecordLog(Protocol):
    """Optional (found with ``isinstance``): a namespace's records in the order
    of their ``seq``, from a given one on. A search's kept candidates are
    extended from it when only appends happened since they were read
    (`retrieval.candidates`)."""

    def record_top(self, ns: str) -> int:
        """The namespace's highest record seq (0 without records)."""
        ...

    def records_since(self, ns: str, seq: int) -> list[RecordRow]:
        """The namespace's records with a seq above ``seq``, by seq."""
        ...


@runtime_checkable
class QuickGeneration(Protocol):
    """Optional (found with ``isinstance``): the `Generation` as of now, told
    without opening a read view, for a cache that only needs to know that
    nothing moved (a repeated `Store.graph`). None when that cannot be told
    cheaply (a transaction is open, another connection committed since the
    backend last looked): the caller then opens `reading` and asks
    `generation` there. Its ``writes`` compare with those `generation` gives
    (with or without a namespace)."""

    def quick_generation(self) -> Generation | None: ...


Stamp = tuple[int, float, str, tuple[str, ...], str | None]
"""A record's ``(seq, created_at, content, sources, target)``: `RecordStamps`."""


@runtime_checkable
class RecordStamps(Protocol):
    """Optional (found with ``isinstance``): what identifies each stored record
    of some kinds, without reading the records. After an erasure a kept index
    of records compares these with what it holds, drops what is gone (or was
    written again under the same number) and reads only the rest."""

    def record_stamps(self, ns: str, kinds: tuple[str, ...]) -> dict[str, Stamp]:
        """The `Stamp` of every record of ``ns`` whose kind is in ``kinds``, by id."""
        ...


@runtime_checkable
class QueryLogRegistry(Protocol):
    """Optional (found with ``isinstance``): the query logs that searches of
    this store wrote to, kept with the store so that a purge in any later
    process reaches them (`branchmem.ops.purge`). Paths are absolute."""

    def query_logs(self) -> list[str]: ...

    def add_query_log(self, path: str) -> None:
        """Remember ``path`` (inside `transaction`; a known path is a no-op)."""
        ...

    def transaction(self) -> AbstractContextManager[None]: ...

    def reading(self) -> AbstractContextManager[None]: ...


# Optional protocols about the file and other processes (re-exported here).
from .processes import LogFile as LogFile  # noqa: E402
from .processes import OtherWriters as OtherWriters  # noqa: E402
from .processes import UnsyncedCommits as UnsyncedCommits  # noqa: E402
