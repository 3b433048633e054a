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
copy each returned record needs to carry ``via`` makes a chain read cost
about two to three times the single reads together (see bench/branches.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from operator import attrgetter
from typing import TYPE_CHECKING, Any

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
    # Retractions first (few), then each record goes to the first view that sees it
    # and does not retract it. Inlined checks: this loop is the whole cost.
    ranges_of = [r for _, r in views]
    idx = range(len(views))
    retracted: list[set[str]] = [set() for _ in views]
    want_retractions = kind == RETRACTION
    groups: list[list[Memory]] = [[] for _ in views]
    for row in rows:
        m = row.memory
        if m.target is None or (as_of is not None and m.created_at > as_of):
            continue
        seg, seq = row.pos  # type: ignore[misc]  # rows from the index have one
        extra = row.extra
        first = True
        for i in idx:
            r = ranges_of[i]
            if r.get(seg, -1) >= seq and (not extra or all(r.get(a, -1) >= b for a, b in extra)):
                retracted[i].add(m.target)
                if want_retractions and first:
                    groups[i].append(m)
                    first = False
    if not want_retractions:
        for row in rows:
            m = row.memory
            if m.target is not None or (as_of is not None and m.created_at > as_of):
                continue
            if m.kind != kind if kind is not None else m.kind == CONFLICT:
                continue
            seg, seq = row.pos  # type: ignore[misc]
            extra = row.extra
            for i in idx:
                r = ranges_of[i]
                if (
                    r.get(seg, -1) >= seq
                    and (not extra or all(r.get(a, -1) >= b for a, b in extra))
                    and m.id not in retracted[i]
                ):
                    groups[i].append(m)
                    break
    out: list[Memory] = []
    for (name, _), g in zip(views, groups, strict=True):
        g.sort(key=_SEQ)
        out += [with_via(m, name) for m in g] if tag else g
    return out
