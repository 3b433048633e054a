"""Ancestor ranges kept between reads (see `RangesMemo`).

`branchmem.lineage` computes an anchor's ranges by walking the fork points
of every segment on its path; on a long forked path (a segment per step)
that walk is the larger part of a read. What lies above a segment never
changes once it is written, so it is kept here, per segment.
"""

from __future__ import annotations

from itertools import islice

from .backends.base import Pos
from .lineage import SegParents


class RangesMemo:
    """Ancestor ranges kept between reads: what lies above each segment.

    Everything above a segment's first event never changes once the segment
    is committed, so a read anchored at ``(s, q)`` costs a copy of what is
    above ``s`` plus ``{s: q}``, instead of a walk over every fork on the path.
    What is above a new segment is built by walking up only to the first
    segment already kept (in a conversation, usually the previous anchor's).

    Kept per ``(namespace, segment)`` for the segments reads were anchored in,
    up to ``limit`` ranges in all (then everything is dropped). Every entry is
    checked before use:

    - everything goes when the store's `Generation` ``erasures`` moved (a purge
      may rebuild a namespace with the same segment numbers), by this `Store`
      or another on the same file: the engine clears it (`Engine.sync`);
    - an entry keeps the fork-point tuple the backend gave for its segment and
      is used only while the backend returns that same object. A backend drops
      its segment cache on a rollback and after an erasure, so a segment made
      by a write that rolled back is never answered from here. (A backend that
      builds fresh tuples per transaction simply never hits.)
    """

    def __init__(self, limit: int = 1_000_000) -> None:
        self.limit = limit
        self._size = 0
        self._above: dict[tuple[str, int], tuple[tuple[Pos, ...], dict[int, int]]] = {}

    def clear(self) -> None:
        """Drop everything (the engine does when something was erased)."""
        self._above.clear()
        self._size = 0

    def forget(self, ns: str, ids: list[str] | None) -> None:
        """A purge through the engine: a whole namespace's entries go (its
        segment numbers may be used again); purged records change no ranges."""
        if ids is None:
            gone = [k for k in self._above if k[0] == ns]
            for k in gone:
                self._size -= len(self._above.pop(k)[1])

    def ranges(self, ns: str, pos: Pos, fetch: SegParents) -> dict[int, int]:
        """Equal to `ancestor_ranges` (a property test holds it to that).

        ``fetch`` returns the fork points of the segments asked for, and may
        return more (`Backend.segment_ancestry`): whatever it gives is kept
        for this walk, so a cold walk up a long path costs one call.
        """
        s, q = pos
        known = fetch([s])
        forks = known[s]
        hit = self._above.get((ns, s))
        if hit is not None and hit[0] is forks:
            out = hit[1].copy()
        else:
            out = self._walk(ns, forks, known, fetch)
            if any(a > b for a, b in zip(out, islice(out, 1, None), strict=False)):
                # Oldest segment first, so a read's rows come out nearly in write order.
                out = dict(sorted(out.items()))
            if hit is not None:  # stale: its fork points are not the backend's now
                self._size -= len(hit[1])
            if self._size + len(out) > self.limit:
                self.clear()
            self._above[ns, s] = (forks, out)
            self._size += len(out)
            out = out.copy()
        out[s] = q
        return out

    def _walk(
        self,
        ns: str,
        forks: tuple[Pos, ...],
        known: dict[int, tuple[Pos, ...]],
        fetch: SegParents,
    ) -> dict[int, int]:
        """Ranges above a segment whose fork points are ``forks``."""
        above = self._above
        out: dict[int, int] = {}
        done: set[int] = set()  # segments whose own ancestors are in ``out``
        todo = list(forks)
        while todo:
            level = []
            for ps, pq in todo:
                if out.get(ps, -1) < pq:
                    out[ps] = pq
                if ps not in done:
                    done.add(ps)
                    level.append(ps)
            todo = []
            miss = [x for x in level if x not in known]
            if miss:
                known.update(fetch(miss))
            for x in level:
                fx = known[x]
                hit = above.get((ns, x))
                if hit is None or hit[0] is not fx:
                    todo += fx
                    continue
                # Everything above x at once; merge the smaller dict into the larger.
                kept = hit[1]
                big, small = (kept.copy(), out) if len(kept) > len(out) else (out, kept)
                for k, v in small.items():
                    if big.get(k, -1) < v:
                        big[k] = v
                out = big
                done.update(kept)
        return out
