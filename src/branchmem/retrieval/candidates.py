"""The candidate set of a search: what the gate lets through, per anchor.

`gather` reads the gate (one ``store.memories(at=a)`` per anchor of the
chain), applies the filters, and notes for each record the first anchor that
sees it. The answer is kept, per store, keyed by namespace, anchors and
filters, with the `Generation` it was read at: a later search reuses it only
if nothing at all was committed since (``writes`` unchanged, by this `Store`
or any other on the same file) and the namespace has no time-dependent
records (`Backend.has_lifecycle`), so the answer cannot depend on ``now``.
Anything else reads the gate again. A reused answer is the very list object
of the last read, which lets the search state see at once that it is current.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Hashable, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from ..model import Memory
from .cache import numpy_or_none

if TYPE_CHECKING:
    from ..store import Store

MAX_KEPT = 4
"""Candidate sets kept per store."""

REUSE = True
"""False reads the gate on every search (the benchmark compares the two)."""


class Candidates:
    """The gated, filtered records of one search, and per record its anchor's index."""

    __slots__ = ("__weakref__", "_arrays", "_lock", "_pos", "mems", "via")

    def __init__(self, mems: list[Memory], via: list[int]) -> None:
        self.mems = mems
        self.via = via
        self._lock = threading.Lock()
        self._arrays: tuple[Any, Any, Any] | None = None
        self._pos: dict[str, int] | None = None

    def arrays(self) -> tuple[Any, Any, Any]:
        """numpy arrays of importance, created_at and via (made once per set)."""
        with self._lock:
            if self._arrays is None:
                np = numpy_or_none()
                ms = self.mems
                self._arrays = (
                    np.fromiter((m.importance for m in ms), dtype=np.float64, count=len(ms)),
                    np.fromiter((m.created_at for m in ms), dtype=np.float64, count=len(ms)),
                    np.asarray(self.via, dtype=np.int64),
                )
            return self._arrays

    def positions(self) -> dict[str, int]:
        """Record id -> its position in `mems` (made once per set)."""
        with self._lock:
            if self._pos is None:
                self._pos = {m.id: i for i, m in enumerate(self.mems)}
            return self._pos


class GateMemo:
    """The last few candidate sets of one store, with the generation they were read at."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._kept: dict[Hashable, tuple[int, Candidates]] = {}

    def clear(self) -> None:
        with self._lock:
            self._kept.clear()

    def get(self, key: Hashable, writes: int) -> Candidates | None:
        with self._lock:
            hit = self._kept.get(key)
        return hit[1] if hit is not None and hit[0] == writes else None

    def put(self, key: Hashable, writes: int, cands: Candidates) -> None:
        with self._lock:
            self._kept.pop(key, None)
            self._kept[key] = (writes, cands)
            while len(self._kept) > MAX_KEPT:
                del self._kept[next(iter(self._kept))]


_MEMOS: weakref.WeakKeyDictionary[Any, GateMemo] = weakref.WeakKeyDictionary()
_MEMOS_LOCK = threading.Lock()


def _memo(store: Store) -> GateMemo:
    with _MEMOS_LOCK:
        m = _MEMOS.get(store)
        if m is None:
            m = _MEMOS[store] = GateMemo()
        return m


class Filters(NamedTuple):
    """What a search keeps of the gate's answer (`keep`)."""

    kinds: list[str] | None = None
    key_prefix: str | None = None
    meta: Mapping[str, Any] | None = None


NO_FILTERS = Filters()


def gather(
    store: Store,
    anchors: list[str],
    ns: str,
    now: float | None,
    as_of: float | None,
    filters: Filters = NO_FILTERS,
) -> Candidates:
    """The records visible at any of ``anchors`` (each once, under the first
    anchor that sees it), filtered; the gate's answer, read or reused."""
    b = store._b
    with b.reading():  # one read view: the generation, then the gate
        writes = b.generation().writes
        key = (ns, tuple(anchors), repr(filters))
        reuse = REUSE and as_of is None and not b.has_lifecycle(ns)
        memo = _memo(store)
        if reuse:
            hit = memo.get(key, writes)
            if hit is not None:
                return hit
        cands = _read(store, anchors, ns, now, as_of, filters)
        if reuse:
            memo.put(key, writes, cands)
        return cands


def _read(
    store: Store, anchors: list[str], ns: str, now: float | None, as_of: float | None, f: Filters
) -> Candidates:
    filtering = f != NO_FILTERS or as_of is not None
    mems: list[Memory] = []
    via: list[int] = []
    seen: set[str] = set()
    for i, a in enumerate(anchors):
        # One ``memories(at=a)`` per anchor: the gate is the store's, untouched.
        # ``now`` and ``as_of`` go to the read, so expiry, validity and time
        # travel apply before ranking.
        visible = store.memories(at=a, namespace=ns, now=now, as_of=as_of)
        if i == 0 and not filtering:  # the common case: one anchor, nothing filtered
            mems = list(visible)
            via = [0] * len(mems)
            if len(anchors) > 1:
                seen.update(m.id for m in visible)
            continue
        for m in visible:
            if m.id in seen:
                continue
            seen.add(m.id)
            if not filtering or keep(m, f, as_of):
                mems.append(m)
                via.append(i)
    return Candidates(mems, via)


def keep(m: Memory, f: Filters, as_of: float | None) -> bool:
    """Does ``m`` pass the search's filters?"""
    kinds, key_prefix, meta = f
    if kinds is not None and m.kind not in kinds:
        return False
    if key_prefix is not None and (m.key is None or not m.key.startswith(key_prefix)):
        return False
    if as_of is not None and m.created_at > as_of:
        return False
    if meta:
        have = m.meta or {}
        return all(f in have and have[f] == v for f, v in meta.items())
    return True
