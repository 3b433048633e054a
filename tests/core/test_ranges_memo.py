"""Ancestor ranges kept between reads (`lineage_memo.RangesMemo`) and the one-statement
fetch of a segment's ancestry (`Backend.segment_ancestry`).

The reference is `ancestor_ranges`, the plain walk to the root.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_lineage_walk import segment_graphs

from branchmem import Store
from branchmem.backends.base import Generation, Pos
from branchmem.backends.memory import MemoryBackend
from branchmem.engine import Engine
from branchmem.lineage import ancestor_ranges
from branchmem.lineage_memo import RangesMemo
from helpers.pg_helpers import PG_URL, SKIP_REASON

Graph = tuple[dict[int, tuple[Pos, ...]], dict[int, int]]


@settings(max_examples=300, deadline=None, database=None)
@given(graph=segment_graphs(), data=st.data())
def test_memo_gives_the_plain_walks_ranges(graph: Graph, data: st.DataObject) -> None:
    parents, tips = graph
    # The stored fork-point tuples: the same objects on every fetch, as a backend's cache.
    stored = {s: tuple(p) for s, p in parents.items()}

    def plain(segs: Iterable[int]) -> dict[int, tuple[Pos, ...]]:
        return {s: stored[s] for s in segs}

    # Sometimes a fetch returns more than asked (a backend's recursive statement).
    extra = data.draw(st.lists(st.integers(0, len(parents) - 1), max_size=5))

    def generous(segs: Iterable[int]) -> dict[int, tuple[Pos, ...]]:
        return {s: stored[s] for s in [*segs, *extra]}

    memo = RangesMemo(limit=data.draw(st.sampled_from([3, 40, 10_000])))
    pos_st = st.integers(0, len(parents) - 1).flatmap(
        lambda s: st.tuples(st.just(s), st.integers(0, tips[s]))
    )
    for pos in data.draw(st.lists(pos_st, min_size=1, max_size=12)):
        fetch = data.draw(st.sampled_from([plain, generous]))
        want = ancestor_ranges(pos, plain)
        got = memo.ranges("ns", pos, fetch)
        assert got == want
        got[pos[0]] = -5  # the caller's copy: the memo must not share it
        assert memo.ranges("ns", pos, plain) == want
        assert (
            memo._size == sum(len(r) for _, r in memo._above.values()) <= max(memo.limit, len(want))
        )


def test_an_entry_is_used_only_with_the_fork_points_it_was_built_from() -> None:
    memo = RangesMemo()
    old = {0: (), 1: ((0, 3),), 2: ((1, 0),)}
    assert memo.ranges("ns", (2, 1), lambda segs: {s: old[s] for s in segs}) == {
        0: 3,
        1: 0,
        2: 1,
    }
    # Segment 2 made again (a rolled-back write, or a purge and rebuild): new tuples.
    new = {0: (), 1: ((0, 3),), 2: ((0, 1),)}
    assert memo.ranges("ns", (2, 1), lambda segs: {s: new[s] for s in segs}) == {0: 1, 2: 1}
    assert memo._size == 1  # the stale entry replaced, not counted twice
    # Erasures moved: the engine that keeps it clears it.
    engine = Engine(MemoryBackend())
    engine.ranges_memo = memo
    engine.attach("ranges", memo)
    engine.sync(Generation(1, 1))
    assert memo._size == 0
    memo.ranges("ns", (2, 1), lambda segs: {s: new[s] for s in segs})
    engine.sync(Generation(2, 1))  # only writes moved: kept
    assert memo._size == 1
    engine.sync(Generation(2, 2))
    assert memo._size == 0


def test_the_walk_stops_at_the_previous_anchors_segment() -> None:
    parents: dict[int, tuple[Pos, ...]] = {0: ()}
    for s in range(1, 300):
        parents[s] = ((s - 1, 1),)
    asked: list[int] = []

    def fetch(segs: Iterable[int]) -> dict[int, tuple[Pos, ...]]:
        segs = list(segs)
        asked.extend(segs)
        return {s: parents[s] for s in segs}

    memo = RangesMemo()
    memo.ranges("ns", (298, 0), fetch)
    want = ancestor_ranges((299, 0), fetch)
    asked.clear()
    assert memo.ranges("ns", (299, 0), fetch) == want
    assert len(asked) <= 4


# ------------------------------------------------------------------ backends
def forked_path(store: Store, steps: int) -> str:
    """Each message answered twice, the conversation going on from the second
    answer: a segment per step. Returns the tip."""
    events = []
    last = None
    for i in range(steps):
        events += [
            {"id": f"u{i}", "parent": last},
            {"id": f"a{i}", "parent": f"u{i}"},
            {"id": f"r{i}", "parent": f"u{i}"},
        ]
        last = f"r{i}"
    half = len(events) // 2  # two batches: the second builds on stored segments
    store.add_events(events[:half])
    store.add_events(events[half:])
    for i in range(0, steps, 3):
        store.add_memory(f"fact {i}", sources=[f"u{i}", f"r{i}"], id=f"m{i}")
        store.add_memory(f"off {i}", sources=[f"a{i}"], id=f"x{i}")
    assert last is not None
    return last


def test_segment_ancestry_returns_true_fork_points(open_store: Callable[..., Store]) -> None:
    s = open_store()
    tip = forked_path(s, 40)
    b = s._engine.backend
    with b.reading():
        pos = b.get_events("default", [tip])[tip].pos
        assert pos is not None
        got = b.segment_ancestry("default", [pos[0]])
        assert pos[0] in got
        assert got == b.segment_parents("default", list(got))
        walked = ancestor_ranges(pos, lambda segs: b.segment_parents("default", segs))
        assert set(got) <= set(walked)
    assert [m.id for m in s.memories(at=tip)] == [f"m{i}" for i in range(0, 40, 3)]


def test_a_cold_sqlite_read_fetches_the_path_in_one_statement(tmp_path: Path) -> None:
    p = tmp_path / "s.db"
    with Store(p) as w:
        tip = forked_path(w, 300)
    with Store(p) as s:  # a new connection: nothing cached
        seen: list[str] = []
        s._engine.backend._db.set_trace_callback(seen.append)  # type: ignore[attr-defined]
        got = [m.id for m in s.memories(at=tip)]
        s._engine.backend._db.set_trace_callback(None)  # type: ignore[attr-defined]
    assert got == [f"m{i}" for i in range(0, 300, 3)]
    on_segments = [q for q in seen if "segments" in q]
    assert len(on_segments) == 1, on_segments


@pytest.mark.parametrize(
    "backend_name",
    ["sqlite", pytest.param("postgres", marks=pytest.mark.skipif(not PG_URL, reason=SKIP_REASON))],
    indirect=True,
)
def test_a_segment_from_a_rolled_back_write_is_not_remembered(
    open_store: Callable[..., Store],
) -> None:
    s = open_store()
    s.add_events([{"id": "e1"}, {"id": "e2", "parent": "e1"}, {"id": "e3", "parent": "e2"}])
    s.add_memory("on e2", sources=["e2"], id="m2")
    with pytest.raises(RuntimeError), s._engine.backend.transaction():
        s.add_event("x", parent="e1")  # a new segment under e1
        assert s.memories(at="x") == []  # read inside the write: its ranges are built
        raise RuntimeError("roll back")
    s.add_event("y", parent="e2")  # the same segment number, hanging from e2
    assert [m.id for m in s.memories(at="y")] == ["m2"]


def test_two_sqlite_stores_see_a_rebuilt_forked_path(tmp_path: Path) -> None:
    p = tmp_path / "s.db"
    x, y = Store(p), Store(p)
    tip = forked_path(x, 30)
    assert len(y.memories(at=tip)) == 10  # y keeps the ranges of the old tree
    x.purge(whole_namespace=True)
    # Rebuilt with the same ids as a chain: the same segment numbers mean other things.
    x.add_events([{"id": "u0"}, *({"id": f"u{i}", "parent": f"u{i - 1}"} for i in range(1, 60))])
    x.add_memory("late", sources=["u30"], id="late")
    assert [m.id for m in y.memories(at="u20")] == []
    assert [m.id for m in y.memories(at="u59")] == ["late"]
    x.close()
    y.close()
