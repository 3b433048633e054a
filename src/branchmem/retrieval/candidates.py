"""The candidate set of a search: what the gate lets through, per anchor.

`gather` reads the gate through the whole chain in one pass (the read of
`Store.memories`, `branchmem.ops.scope.read_groups`), leaves out what ``now``
and ``as_of`` hide, applies the filters, and notes for each record the first
anchor that sees it. The answer is kept, per engine (`GateMemo`, one of its
caches), keyed by namespace, anchors and
filters, with the `Generation` it was read at: a later search reuses it only
if nothing at all was committed since (``writes`` unchanged, by this `Store`
or any other on the same file) and the namespace has no time-dependent
records (`Backend.has_lifecycle`), so the answer cannot depend on ``now``.
A reused answer is the very list object of the last read, which lets the
search state see at once that it is current.

When something was committed since, or the search is at an anchor with no
kept answer, a single anchor's answer is extended instead of read again if
nothing can have changed but appends (`extend`): nothing erased (the
generation's ``erasures``), and a kept answer (same namespace and filters)
at the same event or at one of its ancestors. The newly visible records are
those the gate places in the part of the new anchor's ranges the old one's
do not cover (`Backend.records_in_ranges` with ``after``), and those written
since the kept read (`RecordLog`, by seq), each shown only if every source
is on the new path. Nothing else can become visible: an older record not
visible at the old anchor has a source off its path, and if that source is
on the new path but is not the record's index position, a merge lies between
the two anchors (the index position is the highest source, so the other one
descends from no ancestor of the old anchor), and then the gate is read
again. It is also read again when a retraction is among the new records
(it may hide a kept one), when one hides a new record, and when a new
record comes before a kept one in the gate's order (by seq): the new
records then follow the kept ones, as a read orders them. Events added
since change nothing at the old anchor: its ancestors were all connected
already, so a record waiting for an event that arrives later is never
visible there, and where it does become visible it is placed in the new
part of the ranges.

In a chat the anchor moves to the new message each turn: its kept answer is
the previous message's, extended by the turn's records, and the search state
(`retrieval.state`) follows it as appends, not rebuilt.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from operator import attrgetter
from typing import Any, NamedTuple

from ..backends.base import Generation, Pos, RecordLog, RecordRow
from ..branch_types import CONFLICT
from ..engine import Engine
from ..gate import anchor, ranges_at
from ..lineage import in_ranges, row_in_ranges
from ..model import EDGE, Memory
from ..ops.scope import read_groups
from ..ops.times import narrow
from .filters import Condition, holds
from .vectors import numpy_or_none

_SEQ = attrgetter("seq")

MAX_KEPT = 4
"""Candidate sets kept per engine."""

REUSE = True
"""False reads the gate on every search (the benchmark compares the two)."""

EXTEND = True
"""False reads the gate again after any write (the benchmark compares the two)."""


class Grown(list[Memory]):
    """A candidate list made by appending to ``base`` (a search state holding
    ``base`` takes the rest as new without comparing the shared part)."""

    __slots__ = ("base",)

    base: list[Memory] | None

    def __init__(self, base: list[Memory], new: list[Memory]) -> None:
        super().__init__(base)
        self.extend(new)
        self.base = base


class Candidates:
    """The gated, filtered records of one search, and per record its anchor's index."""

    __slots__ = ("__weakref__", "_arrays", "_lock", "_pos", "base", "mems", "via")

    def __init__(self, mems: list[Memory], via: list[int], base: Candidates | None = None) -> None:
        self.mems = mems
        self.via = via
        self.base = base  # the set this one extends (its records come first)
        self._lock = threading.Lock()
        self._arrays: tuple[Any, Any, Any] | None = None
        self._pos: dict[str, int] | None = None

    def extended(self, new: list[Memory]) -> Candidates:
        """This set with ``new`` (one anchor's) after it; itself when ``new`` is empty."""
        if not new:
            return self
        c = Candidates(Grown(self.mems, new), self.via + [0] * len(new), self)
        # One link back at most: a longer chain would keep every older set alive.
        self.base = None
        if isinstance(self.mems, Grown):
            self.mems.base = None
        with self._lock:
            if self._arrays is not None:  # extended, not made again from every record
                np = numpy_or_none()
                tail = Candidates(new, [0] * len(new)).arrays()
                c._arrays = (
                    np.concatenate((self._arrays[0], tail[0])),
                    np.concatenate((self._arrays[1], tail[1])),
                    np.concatenate((self._arrays[2], tail[2])),
                )
        return c

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


class Kept(NamedTuple):
    """A candidate set as read, with what `extend` needs to bring it up to date."""

    gen: Generation  # the store's generation when it was read
    cands: Candidates
    top: int | None = None  # the namespace's highest record seq then (None: not extendable)
    anchor: tuple[str, Pos | None] | None = None  # the single anchor's event and place


Key = tuple[str, tuple[str, ...], str]
"""A kept answer's namespace, anchors and filters (their ``repr``)."""


class GateMemo:
    """The last few candidate sets of one engine, with the generation they were
    read at (each is checked against it before use)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._kept: dict[Key, Kept] = {}

    def clear(self) -> None:
        with self._lock:
            self._kept.clear()

    def forget(self, ns: str, ids: list[str] | None) -> None:
        """A purge through the engine: every kept set goes (it may hold purged records)."""
        self.clear()

    def get(self, key: Key) -> Kept | None:
        with self._lock:
            return self._kept.get(key)

    def nearest(self, ns: str, frepr: str, rs: dict[int, int]) -> Kept | None:
        """The kept single-anchor answer (namespace ``ns``, filters ``frepr``)
        whose anchor is the deepest among those in ``rs`` (the ancestor
        ranges of the search's anchor), the latest read among equals; None
        if there is none."""
        best: tuple[Pos, int, Kept] | None = None
        with self._lock:
            for (kns, anchors, kf), kept in self._kept.items():
                at, top = kept.anchor, kept.top
                if kns != ns or kf != frepr or len(anchors) != 1 or top is None:
                    continue
                if at is None or at[1] is None or not in_ranges(at[1], rs):
                    continue
                # A descendant sits higher in (segment, seq) than its ancestors.
                if best is None or (at[1], top) > best[:2]:
                    best = (at[1], top, kept)
        return None if best is None else best[2]

    def put(self, key: Key, kept: Kept) -> None:
        with self._lock:
            self._kept.pop(key, None)
            self._kept[key] = kept
            while len(self._kept) > MAX_KEPT:
                del self._kept[next(iter(self._kept))]


class Filters(NamedTuple):
    """What a search keeps of the gate's answer (`keep`)."""

    kinds: list[str] | None = None
    key_prefix: str | None = None
    meta: Mapping[str, Any] | None = None
    where: tuple[Condition, ...] | None = None  # ``search(filter=)``, checked (`filters`)


NO_FILTERS = Filters()


def gather(
    engine: Engine,
    anchors: list[str],
    ns: str,
    now: float | None,
    as_of: float | None,
    filters: Filters = NO_FILTERS,
) -> Candidates:
    """The records visible at any of ``anchors`` (each once, under the first
    anchor that sees it), filtered; the gate's answer, read or reused."""
    b = engine.backend
    with b.reading():  # one read view: the generation, then the gate
        gen = b.generation(ns)
        engine.sync(gen)  # the caches checked in the view the records are read in
        key: Key = (ns, tuple(anchors), repr(filters))
        reuse = REUSE and as_of is None and not b.has_lifecycle(ns)
        if not reuse:
            return _read(engine, anchors, ns, now, as_of, filters)
        memo = engine.cache("gate", GateMemo)
        kept = memo.get(key)
        if kept is not None and kept.gen.writes == gen.writes:
            return kept.cands
        at = None
        if len(anchors) == 1 and isinstance(b, RecordLog):
            at = anchor(engine, ns, anchors[0])
            if EXTEND and at[1] is not None:
                grown = _advance(engine, ns, anchors[0], filters, memo, kept, gen, at)
                if grown is not None:
                    memo.put(key, grown)
                    return grown.cands
        cands = _read(engine, anchors, ns, now, as_of, filters)
        if at is not None and isinstance(b, RecordLog):
            memo.put(key, Kept(gen, cands, b.record_top(ns), at))
        else:
            memo.put(key, Kept(gen, cands))
        return cands


def _advance(
    engine: Engine,
    ns: str,
    at: str,
    f: Filters,
    memo: GateMemo,
    kept: Kept | None,
    gen: Generation,
    now_at: tuple[str, Pos | None],
) -> Kept | None:
    """The answer at ``at`` (the event and place ``now_at``) extended from the
    key's own kept answer if it is still at that event, else from the kept
    answer at the deepest ancestor; None if there is none or it cannot be."""
    if kept is not None and kept.top is not None and kept.anchor == now_at:
        return extend(engine, ns, at, f, kept, gen, now_at)
    assert now_at[1] is not None
    rs = ranges_at(engine, ns, now_at[1])
    old = memo.nearest(ns, repr(f), rs)
    if old is None:
        return None
    return extend(engine, ns, at, f, old, gen, now_at, rs)


def extend(
    engine: Engine,
    ns: str,
    at: str,
    f: Filters,
    kept: Kept,
    gen: Generation,
    now_at: tuple[str, Pos | None] | None = None,
    rs: dict[int, int] | None = None,
) -> Kept | None:
    """``kept`` (read at ``at`` or at an ancestor of it) brought up to ``gen``
    and over to ``at``, or None when something else may have changed (see the
    module's docstring). ``now_at`` and ``rs``, when given, are the anchor's
    event and place and its ancestor ranges. The caller holds the backend's
    read view and has checked the lifecycle."""
    b = engine.backend
    if kept.top is None or gen.erasures != kept.gen.erasures or not isinstance(b, RecordLog):
        return None
    if now_at is None:
        now_at = anchor(engine, ns, at)
    was = kept.anchor
    if was is None or was[1] is None or now_at[1] is None:
        return None
    moved = now_at != was
    if moved and rs is None:
        rs = ranges_at(engine, ns, now_at[1])
    if moved and (rs is None or not in_ranges(was[1], rs)):
        return None  # not an ancestor: its answer holds records hidden here
    since = b.records_since(ns, kept.top) if gen.writes != kept.gen.writes else []
    top = since[-1].memory.seq if since else kept.top
    if not since and not moved:
        return Kept(gen, kept.cands, top, now_at)
    if rs is None:
        rs = ranges_at(engine, ns, now_at[1])
    rows = since
    if moved:
        fresh = _fresh_rows(engine, ns, was[1], rs, kept.top)
        if fresh is None:
            return None
        rows = fresh + since
    new: list[Memory] = []
    for row in rows:
        if not row_in_ranges(row, rs):
            continue
        m = row.memory
        if m.target is not None:
            return None  # a retraction seen here may hide a kept record
        if m.kind != CONFLICT and m.kind != EDGE and (f == NO_FILTERS or keep(m, f, None)):
            new.append(m)
    if moved:
        new.sort(key=_SEQ)
        mems = kept.cands.mems
        if new and mems and new[0].seq < mems[-1].seq:
            return None  # it would go among the kept ones: the gate's order is by seq
    if new and any(row_in_ranges(r, rs) for r in b.retractions_of(ns, [m.id for m in new])):
        return None  # retracted where it is new, or an id written again after a purge
    return Kept(gen, kept.cands.extended(new), top, now_at)


def _fresh_rows(
    engine: Engine, ns: str, was: Pos, rs: dict[int, int], top: int
) -> list[RecordRow] | None:
    """The records (seq up to ``top``) the gate places in the part of ``rs``
    not among the ancestors of ``was``, an ancestor of the new anchor; None
    if a merge lies between the two (a record indexed on the old path may
    have another source in the new part: the gate is read again)."""
    old = ranges_at(engine, ns, was)
    added = [s for s in rs if s not in old]
    if added and any(len(p) > 1 for p in engine.seg_parents(ns)(added).values()):
        return None  # a merge's segment: its fork points join other paths
    fresh = {s: u for s, u in rs.items() if u > old.get(s, -1)}
    if not fresh:
        return []
    return [r for r in engine.backend.records_in_ranges(ns, fresh, old) if r.memory.seq <= top]


def _read(
    engine: Engine,
    anchors: list[str],
    ns: str,
    now: float | None,
    as_of: float | None,
    f: Filters,
) -> Candidates:
    """The chain's records, each under the first anchor that sees it, as
    `Store.memories` reads them (``now`` and ``as_of`` applied before
    ranking), filtered. The caller holds the backend's read view."""
    filtering = f != NO_FILTERS or as_of is not None
    mems: list[Memory] = []
    via: list[int] = []
    for i, group in read_groups(engine, ns, anchors, None, as_of):
        group = narrow(engine, ns, group, now=now, as_of=as_of, include_archived=False)
        if filtering:
            group = [m for m in group if keep(m, f, as_of)]
        if not mems:  # the common case: one anchor (``group`` is this read's own list)
            mems = group
            via = [i] * len(group)
        else:
            mems += group
            via += [i] * len(group)
    return Candidates(mems, via)


def keep(m: Memory, f: Filters, as_of: float | None) -> bool:
    """Does ``m`` pass the search's filters?"""
    kinds, key_prefix, meta, where = f
    if kinds is not None and m.kind not in kinds:
        return False
    if key_prefix is not None and (m.key is None or not m.key.startswith(key_prefix)):
        return False
    if as_of is not None and m.created_at > as_of:
        return False
    if where and not holds(m, where):
        return False
    if meta:
        have = m.meta or {}
        return all(f in have and have[f] == v for f, v in meta.items())
    return True
