"""Scope chains: one read through several anchors in priority order.

``memories(at=["chat", "user/main", "org/main"])`` returns every record
visible from at least one anchor, once, tagged with ``via``: the first anchor
(in the given order) from which it is visible. A record is visible from an
anchor exactly as in a single-anchor read: every source is on that anchor's
path and no retraction of it is. So a retraction on the conversation hides a
record there but not where the conversation cannot see it: if ``user/main``
still holds the record, it comes back ``via`` ``user/main`` (promote the
correction by merging it into ``user/main`` to make it hold there too).

Anchors are read in order by `branchmem.gate.read_views`, each fetching only
the part of its ancestor ranges that no earlier anchor covered. A
single-anchor read is the chain of one. So a chain costs one pass over the
union of its anchors' records, where the single reads together pass over
their shared ancestry once per anchor (see bench/branches.py). A search's
candidates are this read too (`read_groups`). In memory, where stored objects
are shared, carrying ``via`` means a copy of each record; the engine's
`ViaCopies` keeps them, so only the first read of a scope pays.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..engine import Engine
from ..gate import ranges, read_views
from ..model import Memory
from .times import anchor_as_of

_set = object.__setattr__


def tag_fresh(items: list[Memory], via: str) -> list[Memory]:
    """Set ``via`` on records built for this read alone (nobody else holds them)."""
    for m in items:
        _set(m, "via", via)
    return items


def read_groups(
    engine: Engine,
    ns: str,
    anchors: Sequence[str],
    kind: str | None,
    as_of: float | None = None,
) -> list[tuple[int, list[Memory]]]:
    """For each anchor that sees anything, its index in ``anchors`` and the
    records it is the first to show, oldest first.

    ``as_of`` keeps only what was written by then (anchors resolved as they
    were then). The caller holds the backend's read (or write) transaction."""
    views = []
    for i, a in enumerate(anchors):
        event = a if as_of is None else anchor_as_of(engine, ns, a, as_of)
        if event is not None and (r := ranges(engine, ns, event)) is not None:
            views.append((i, r))
    if not views:
        return []
    groups, _ = read_views(engine, ns, [r for _, r in views], kind, as_of)
    return [(i, g) for (i, _), g in zip(views, groups, strict=True)]


def read_chain(
    engine: Engine,
    ns: str,
    anchors: Sequence[str],
    kind: str | None,
    *,
    as_of: float | None = None,
    tag: bool = True,
) -> list[Memory]:
    """Records visible from any of ``anchors``; earlier anchors' records first.

    ``tag=False`` leaves ``via`` unset (a single-anchor read)."""
    if not anchors:
        return []
    b = engine.backend
    with b.reading():
        groups = read_groups(engine, ns, anchors, kind, as_of)
        if not tag:
            return groups[0][1] if len(groups) == 1 else [m for _, g in groups for m in g]
        out: list[Memory] = []
        for i, g in groups:
            if b.shares_rows:  # under the read lock: a purge clears the copies after
                engine.sync(b.generation())
                out += engine.via_copies.tag(g, anchors[i], ns)
            else:
                out += tag_fresh(g, anchors[i])
        return out
