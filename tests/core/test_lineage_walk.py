"""The bounded walk of `index_position` against the full walk to the root.

The reference is the former implementation: for each candidate (youngest
first), the whole of `ancestor_ranges`, then a check of every other source.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from branchmem.backends.base import Pos
from branchmem.lineage import (
    ancestor_ranges,
    batch_seg_parents,
    descends_from_all,
    in_ranges,
    index_position,
)


def naive_index_position(
    positions: list[Pos], seg_parents: dict[int, tuple[Pos, ...]]
) -> tuple[Pos, tuple[Pos, ...]]:
    def fetch(segs: object) -> dict[int, tuple[Pos, ...]]:
        return {s: seg_parents[s] for s in segs}  # type: ignore[attr-defined]

    if len(positions) == 1:
        return positions[0], ()
    unique = sorted(set(positions), reverse=True)
    if len({s for s, _ in unique}) == 1:
        return unique[0], ()
    for cand in unique:
        ranges = ancestor_ranges(cand, fetch)
        if all(in_ranges(p, ranges) for p in unique):
            return cand, ()
    return unique[0], tuple(unique[1:])


@st.composite
def segment_graphs(draw: st.DrawFn) -> tuple[dict[int, tuple[Pos, ...]], dict[int, int]]:
    """Segments whose fork points lie in older segments (as lineage makes them)."""
    n = draw(st.integers(1, 14))
    parents: dict[int, tuple[Pos, ...]] = {}
    tips: dict[int, int] = {}
    for s in range(n):
        tips[s] = draw(st.integers(0, 4))
        if s == 0:
            parents[s] = ()
            continue
        k = min(s, draw(st.sampled_from([0, 1, 1, 1, 1, 2, 3])))  # roots, forks, merges
        older = draw(st.lists(st.integers(0, s - 1), min_size=k, max_size=k, unique=True))
        parents[s] = tuple((o, draw(st.integers(0, tips[o]))) for o in older)
    return parents, tips


@settings(max_examples=300, deadline=None, database=None)
@given(graph=segment_graphs(), data=st.data())
def test_bounded_walk_gives_the_same_positions(
    graph: tuple[dict[int, tuple[Pos, ...]], dict[int, int]], data: st.DataObject
) -> None:
    parents, tips = graph
    calls: list[list[int]] = []

    def fetch(segs: object) -> dict[int, tuple[Pos, ...]]:
        segs = list(segs)  # type: ignore[call-overload]
        calls.append(segs)
        return {s: parents[s] for s in segs}

    pos_st = st.integers(0, len(parents) - 1).flatmap(
        lambda s: st.tuples(st.just(s), st.integers(0, tips[s]))
    )
    positions = data.draw(st.lists(pos_st, min_size=1, max_size=4))
    want = naive_index_position(positions, parents)
    assert index_position(positions, fetch) == want
    # As a batch write calls it: some segments fetched up front, the rest once each.
    warm = data.draw(st.sets(st.integers(0, len(parents) - 1)))
    calls.clear()
    assert index_position(positions, batch_seg_parents(fetch, warm)) == want
    later = [s for c in calls[1:] for s in c]
    assert len(later) == len(set(later)) and not set(later) & warm
    cand, others = positions[0], positions[1:]
    full = ancestor_ranges(cand, fetch)
    assert descends_from_all(cand, others, fetch) == all(in_ranges(p, full) for p in others)


def test_walk_stops_at_the_oldest_source() -> None:
    # A long forked path: each segment hangs from the one before it.
    parents: dict[int, tuple[Pos, ...]] = {0: ()}
    for s in range(1, 500):
        parents[s] = ((s - 1, 1),)
    asked: set[int] = set()

    def fetch(segs: object) -> dict[int, tuple[Pos, ...]]:
        out = {s: parents[s] for s in segs}  # type: ignore[attr-defined]
        asked.update(out)
        return out

    # A reply in a new segment under its message: two segments looked at, not 500.
    assert index_position([(498, 1), (499, 0)], fetch) == ((499, 0), ())
    assert asked <= {498, 499}
