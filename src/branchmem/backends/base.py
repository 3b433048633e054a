"""The storage interface every backend implements.

A backend stores and fetches rows; it knows nothing of the gate, branches or
ranking, which live once above it (`branchmem.store`, `branchmem.lineage`).
Positions are ``(segment, seq)`` pairs assigned by `branchmem.lineage`.
Every method takes the namespace first; nothing crosses namespaces.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Protocol

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


@dataclass(frozen=True, slots=True)
class NewSegment:
    seg: int
    parents: tuple[Pos, ...]


class Backend(Protocol):
    """What `Store` needs from storage. One writer transaction at a time."""

    def transaction(self) -> AbstractContextManager[None]:
        """A write transaction: all of it lands, or none of it (reentrant)."""
        ...

    def reading(self) -> AbstractContextManager[None]:
        """A consistent read view (a lock or a read transaction)."""
        ...

    def close(self) -> None: ...

    # events -----------------------------------------------------------------
    def get_events(self, ns: str, ids: Iterable[str]) -> dict[str, EventRow]: ...

    def insert_events(self, ns: str, rows: list[EventRow]) -> None: ...

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

    def records_in_ranges(self, ns: str, ranges: Ranges) -> Iterator[RecordRow]:
        """Indexed records whose ``pos`` falls in ``ranges`` (``extra`` not yet checked)."""
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
