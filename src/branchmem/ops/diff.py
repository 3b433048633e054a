"""`Store.diff`: what a move of the anchor from ``a`` to ``b`` changes.

Two gated reads (`ops.reads.memories`, scope chains allowed) compared by
id, and the fork point: a walk up from ``a``'s first anchor, one generation
per fetch, to the first event on ``b``'s first anchor's path (so it costs
the length of ``a``'s own part, not the depth of the conversation).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..backends.base import Pos
from ..engine import Engine
from ..errors import InvalidInput
from ..gate import anchor, ranges
from ..lineage import in_ranges
from ..tree_types import Diff
from ..validate import check_anchors, check_namespace
from .reads import memories


def _side(at: str | Sequence[str], what: str) -> str | tuple[str, ...]:
    if isinstance(at, str):
        return at
    if at is None:
        raise InvalidInput(f"{what} must be an event id, a branch name or a list of them")
    return tuple(check_anchors(at))


def diff(
    engine: Engine,
    a: str | Sequence[str],
    b: str | Sequence[str],
    *,
    kind: str | None,
    namespace: str,
) -> Diff:
    """`Store.diff`."""
    ns = check_namespace(namespace)
    sa, sb = _side(a, "a"), _side(b, "b")
    with engine.backend.reading():
        at_a = memories(engine, at=sa, kind=kind, namespace=ns, now=None, as_of=None,
                        include_archived=False, touch=False)  # fmt: skip
        at_b = memories(engine, at=sb, kind=kind, namespace=ns, now=None, as_of=None,
                        include_archived=False, touch=False)  # fmt: skip
        first_a = sa if isinstance(sa, str) else sa[0]
        first_b = sb if isinstance(sb, str) else sb[0]
        fork = fork_point(engine, ns, first_a, first_b)
    ids_a, ids_b = {m.id for m in at_a}, {m.id for m in at_b}
    return Diff(
        sa,
        sb,
        fork,
        tuple(m for m in at_a if m.id not in ids_b),
        tuple(m for m in at_b if m.id not in ids_a),
        len(ids_a & ids_b),
    )


def fork_point(engine: Engine, ns: str, a: str, b: str) -> str | None:
    """The nearest common ancestor-or-self of anchors ``a`` and ``b`` (None if none).

    The walk stops at each common ancestor it meets (everything above one is
    common too, and farther); below a merge several may be met, and the one
    kept is one that no other lies below.
    """
    rb = ranges(engine, ns, b)
    start, pos = anchor(engine, ns, a)
    if rb is None or pos is None:
        return None  # one of them waits for a parent: no path yet
    bk = engine.backend
    seen: set[str] = set()
    met: dict[str, Pos] = {}
    frontier = [start]
    while frontier:
        rows = bk.get_events(ns, frontier)
        seen.update(rows)
        up: set[str] = set()
        for r in rows.values():
            if r.pos is not None and in_ranges(r.pos, rb):
                met[r.event.id] = r.pos
            else:
                up.update(p for p in r.event.parents if p not in seen)
        frontier = list(up)
    if len(met) <= 1:
        return next(iter(met), None)
    below = {i: ranges(engine, ns, i) or {} for i in met}
    lowest = [i for i, p in met.items() if not any(j != i and in_ranges(p, below[j]) for j in met)]
    return max(lowest, key=lambda i: met[i])
