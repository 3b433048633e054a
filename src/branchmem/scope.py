"""Scope chains: one read through several anchors in priority order.

``memories(at=["chat", "user/main", "org/main"])`` returns every record
visible from at least one anchor, once, tagged with ``via``: the first anchor
(in the given order) from which it is visible. A record is visible from an
anchor exactly as in a single-anchor read: every source is on that anchor's
path and no retraction of it is. So a retraction on the conversation hides a
record there but not where the conversation cannot see it: if ``user/main``
still holds the record, it comes back ``via`` ``user/main`` (promote the
correction by merging it into ``user/main`` to make it hold there too).

The records of all anchors are fetched once, through the union of their
ancestor ranges, then each is checked against the anchors in order. On
SQLite, where fetching dominates, that costs less than the single-anchor
reads together; in memory, where a single read is a few list slices, the
per-record checks and the copy each record needs to carry ``via`` (kept in
`ViaCopies` for the next read) make a chain read cost about one and a half
times the single reads together (see bench/branches.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from operator import attrgetter
from typing import TYPE_CHECKING, Any

from .backends.base import RecordRow
from .branch_types import CONFLICT
from .errors import InvalidInput
from .lifecycle import anchor_as_of
from .model import RETRACTION, Memory

if TYPE_CHECKING:
    from .store import Store


_SEQ = attrgetter("seq")
_new = object.__new__
_set = object.__setattr__


def with_via(m: Memory, via: str) -> Memory:
    """A copy of ``m`` with ``via`` set (stored rows are shared, so never mutated)."""
    out: Memory = _new(Memory)
    d = m.__dict__.copy()
    d["via"] = via
    _set(out, "__dict__", d)
    return out


class ViaCopies:
    """Tagged copies of shared stored records, kept for the next chain read.

    A backend that shares its stored objects (memory) needs one copy per
    (record, anchor) to carry ``via``; copying is most of a chain read's cost
    there, and the same conversation is read again and again. An entry holds
    the stored object itself and is used only while the backend still returns
    that very object, so a purged or replaced record is never served. The
    cache is dropped whole when it reaches ``limit`` entries.
    """

    def __init__(self, limit: int = 200_000) -> None:
        self.limit = limit
        self._size = 0
        self._by_via: dict[str, dict[int, tuple[Memory, Memory]]] = {}

    def clear(self) -> None:
        """Forget every copy (a purge must not leave erased content in memory)."""
        self._by_via.clear()
        self._size = 0

    def tag(self, items: list[Memory], via: str) -> list[Memory]:
        if self._size + len(items) > self.limit:
            self._by_via.clear()
            self._size = 0
        cache = self._by_via.get(via)
        if cache is None:
            cache = self._by_via[via] = {}
        out: list[Memory] = []
        append = out.append
        for m in items:
            hit = cache.get(id(m))
            if hit is None or hit[0] is not m:
                hit = cache[id(m)] = (m, with_via(m, via))
                self._size += 1
            append(hit[1])
        return out


def tag_fresh(items: list[Memory], via: str) -> list[Memory]:
    """Set ``via`` on records built for this read alone (nobody else holds them)."""
    for m in items:
        m.__dict__["via"] = via
    return items


def _move_retracted(
    rows: list[RecordRow],
    ranges_of: list[dict[int, int]],
    retracted: list[set[str]],
    groups: list[list[Memory]],
) -> None:
    """Move each record retracted in its first view to the next view that sees it
    and does not retract it (or drop it)."""
    hit = {m.id: i for i, g in enumerate(groups) if retracted[i] for m in g if m.id in retracted[i]}
    if not hit:
        return
    for v in set(hit.values()):
        groups[v][:] = [m for m in groups[v] if hit.get(m.id) != v]
    for row in rows:
        m = row.memory
        at = hit.get(m.id)
        if at is None or m.target is not None:
            continue
        seg, seq = row.pos  # type: ignore[misc]
        for j in range(at + 1, len(ranges_of)):
            r = ranges_of[j]
            if (
                r.get(seg, -1) >= seq
                and all(r.get(a, -1) >= b for a, b in row.extra)
                and m.id not in retracted[j]
            ):
                groups[j].append(m)
                break


def check_anchors(at: Any) -> list[str]:
    if not isinstance(at, (list, tuple)):
        raise InvalidInput(
            f"`at` must be an event id, a branch name, or a list of them; got {at!r}"
        )
    for a in at:
        if not isinstance(a, str) or not a:
            raise InvalidInput(
                f"every anchor in `at` must be an event id or a branch name, got {a!r}"
            )
    return list(dict.fromkeys(at))


def read_chain(
    s: Store,
    ns: str,
    anchors: Sequence[str],
    kind: str | None,
    *,
    as_of: float | None = None,
    tag: bool = True,
) -> list[Memory]:
    """Records visible from any of ``anchors``; earlier anchors' records first.

    ``as_of`` keeps only what was written by then (anchors resolved as they
    were then); ``tag=False`` leaves ``via`` unset (a single-anchor read).
    """
    if not anchors:
        return []
    with s._b.reading():
        if as_of is None:
            views = [(a, r) for a in anchors if (r := s._ranges(ns, a)) is not None]
        else:
            views = []
            for a in anchors:
                event = anchor_as_of(s, ns, a, as_of)
                if event is not None and (r := s._ranges(ns, event)) is not None:
                    views.append((a, r))
        union: dict[int, int] = {}
        for _, ranges in views:
            for seg, upto in ranges.items():
                if union.get(seg, -1) < upto:
                    union[seg] = upto
        rows = list(s._b.records_in_ranges(ns, union)) if union else []
    # One pass: a retraction marks its target in every view that sees it; any other
    # record goes to the first view that sees it. Inlined checks: this loop is the
    # whole cost. A record retracted in that view moves on afterwards (rare).
    ranges_of = [r for _, r in views]
    idx = range(len(views))
    retracted: list[set[str]] = [set() for _ in views]
    want_retractions = kind == RETRACTION
    groups: list[list[Memory]] = [[] for _ in views]
    for row in rows:
        m = row.memory
        if as_of is not None and m.created_at > as_of:
            continue
        seg, seq = row.pos  # type: ignore[misc]  # rows from the index have one
        extra = row.extra
        if m.target is not None:
            first = True
            for i in idx:
                r = ranges_of[i]
                if r.get(seg, -1) >= seq and (
                    not extra or all(r.get(a, -1) >= b for a, b in extra)
                ):
                    retracted[i].add(m.target)
                    if want_retractions and first:
                        groups[i].append(m)
                        first = False
            continue
        if want_retractions or (m.kind != kind if kind is not None else m.kind == CONFLICT):
            continue
        for i in idx:
            r = ranges_of[i]
            if r.get(seg, -1) >= seq and (not extra or all(r.get(a, -1) >= b for a, b in extra)):
                groups[i].append(m)
                break
    if not want_retractions and any(retracted):
        _move_retracted(rows, ranges_of, retracted, groups)
    out: list[Memory] = []
    for (name, _), g in zip(views, groups, strict=True):
        g.sort(key=_SEQ)
        if not tag:
            out += g
        elif s._b.shares_rows:
            out += s._via_copies.tag(g, name)
        else:
            out += tag_fresh(g, name)
    return out
