"""The order `BranchmemSaver.list` gives a thread's checkpoints (`in_put_order`)."""

from __future__ import annotations

from bisect import bisect_right
from itertools import pairwise

from ._tasks import Desc

Seen = list[tuple[float, tuple[str, str]]]
"""(written at, (checkpoint_ns, checkpoint_id)) pairs."""


def in_put_order(roots: Seen, listed: Seen) -> list[tuple[str, str]]:
    """The (checkpoint_ns, checkpoint_id) pairs of a thread: by namespace in the
    order of their first put, newest id first within each.

    ``roots``: the roots that hold their data, in the order they were written;
    ``listed``: the listing records (the layout before, and a checkpoint put
    where its root was already: put again, or after its pending writes), in
    theirs. A listing record is placed before the first root written after it
    by the store's clock, which only ever orders a listing record among roots
    (a clock set back between two puts cannot reorder the roots).

    >>> in_put_order([(1.0, ("a", "1")), (0.5, ("b", "2"))], [(2.0, ("b", "2"))])
    [('a', '1'), ('b', '2')]
    """
    # (slot, kind, index): a root's slot is its place in write order; a
    # listing record's the first root written after it (kind 0: before it).
    keyed: list[tuple[tuple[int, int, int], tuple[str, str]]] = [
        ((i, 1, 0), p) for i, (_, p) in enumerate(roots)
    ]
    times = [at for at, _ in roots]
    rising = all(a <= b for a, b in pairwise(times))
    for j, (t, p) in enumerate(listed):
        slot = (
            bisect_right(times, t)
            if rising
            else next((i for i, at in enumerate(times) if at > t), len(times))
        )
        keyed.append(((slot, 0, j), p))
    keyed.sort(key=lambda kp: kp[0])
    first: dict[str, int] = {}
    for n, (_, (cp_ns, _)) in enumerate(keyed):
        first.setdefault(cp_ns, n)
    pairs = dict.fromkeys(p for _, p in keyed)
    return sorted(pairs, key=lambda p: (first[p[0]], Desc(p[1])))
