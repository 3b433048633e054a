"""A search at an anchor with no kept answer, extended from the kept answer at
an ancestor (`candidates.extend` over the new part of the ranges), against
the full read of the gate and the naive reference.

Random trees and DAGs (merges included), events arriving in any order,
records with one to three sources (on other branches, or not arrived yet),
retractions and purges, chat turns (a new message under the last anchor, a
record from it, a search at it) and searches at random anchors in random
order, with writes between them; on one store of each backend, and on two
`Store` objects over one SQLite file, one of them writing. After every
search: the candidate set equals the full read (``candidates.REUSE =
False``), in order; its ids are the reference's; and the search's hits
(``cutoff="off"``, every candidate) are the ranking made from scratch.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from branchmem import HashingEmbedder, Memory, Store
from branchmem.backends.base import RecordLog
from branchmem.retrieval import candidates
from branchmem.retrieval import filters as filters_mod
from branchmem.retrieval.candidates import Filters, gather
from helpers.reference import Reference, RefRecord
from helpers.scratch_rank import rank_from_scratch
from helpers.strategies import History, histories

WORDS = ["杭州", "成都", "花生", "过敏", "预算", "Python", "搬家", "猫"]
EMB = HashingEmbedder(32)
NOW = 2e9
TOPIC_A = {"meta.topic": "a"}
ACTIONS = ["arrive", "op", "op", "turn", "turn", "merge", "search", "search", "walk", "walk"]


@contextmanager
def full_reads() -> Iterator[None]:
    """Every `gather` reads the gate (nothing kept, nothing extended)."""
    was = candidates.REUSE
    candidates.REUSE = False
    try:
        yield
    finally:
        candidates.REUSE = was


def from_scratch(cands: list[Memory], query: str, mode: str) -> list[tuple[str, float]]:
    """The fused ranking of every candidate, made from the records alone."""
    ranked = rank_from_scratch(cands, query, mode, EMB, NOW, len(cands))
    return [(s.memory.id, s.score) for s in ranked]


class Moves:
    """Counts the searches whose answer was extended from another anchor's."""

    def __init__(self) -> None:
        self.moved = 0

    @contextmanager
    def counting(self) -> Iterator[None]:
        real = candidates.extend

        def counted(*args: Any, **kw: Any) -> Any:
            out = real(*args, **kw)
            if out is not None and out.anchor != args[4].anchor:
                self.moved += 1
            return out

        candidates.extend = counted  # type: ignore[assignment]
        try:
            yield
        finally:
            candidates.extend = real  # type: ignore[assignment]


def search_and_check(
    reader: Store, ref: Reference, at: str, data: st.DataObject, usual: dict[str, str] | None
) -> None:
    flt = usual if data.draw(st.integers(0, 4), label="other filter") else TOPIC_A
    query = data.draw(st.sampled_from([*WORDS, "杭州 花生"]), label="query")
    mode = data.draw(st.sampled_from(["hybrid", "keyword", "vector"]), label="mode")
    hits = reader.search(
        query, at=at, k=1000, mode=mode, embedder=EMB, now=NOW, filter=flt, cutoff="off"
    )
    engine = reader._engine
    f = Filters(where=filters_mod.check(flt))
    got = gather(engine, [at], "default", None, None, f).mems
    with full_reads():
        full = gather(engine, [at], "default", None, None, f).mems
    assert [m.id for m in got] == [m.id for m in full]
    want = [r for r in ref.memories(at) if flt is None or r.endswith("a")]
    assert sorted(m.id for m in got) == sorted(want)
    assert [(h.memory.id, h.score) for h in hits] == from_scratch(full, query, mode)


def play(stores: list[Store], hist: History, data: st.DataObject, moves: Moves) -> None:
    """``stores[0]`` searches; any of them writes."""
    ref = Reference()
    reader = stores[0]
    arrived: list[str] = []
    pending = list(hist.arrival)
    ops = list(hist.ops)
    last: str | None = None  # the anchor searched last
    usual = data.draw(st.sampled_from([None, TOPIC_A]), label="usual filter")
    n = 0

    def writer() -> Store:
        return stores[data.draw(st.integers(0, len(stores) - 1), label="writer")]

    def add(s: Store, rid: str, sources: list[str]) -> None:
        topic = data.draw(st.sampled_from(["a", "b"]), label="topic")
        text = f"用户说{WORDS[n % len(WORDS)]}和{WORDS[(n * 3 + 1) % len(WORDS)]}"
        s.add_memory(text, sources=sources, id=rid + topic, meta={"topic": topic})
        ref.add_record(RefRecord(rid + topic, tuple(sources)))

    def arrive() -> None:
        eid = pending.pop(0)
        writer().add_event(eid, parent=list(hist.parents[eid]) or None, content=eid)
        ref.add_event(eid, hist.parents[eid])
        arrived.append(eid)

    for _ in range(data.draw(st.integers(0, len(pending)), label="events first")):
        arrive()
    for _ in range(data.draw(st.integers(8, 30), label="steps")):
        n += 1
        action = data.draw(st.sampled_from(ACTIONS), label="action")
        if action == "arrive" and pending:
            arrive()
        elif action == "op" and ops:
            op = ops.pop(0)
            s = writer()
            live = [r.id for r in ref.records if r.target is None]
            if op.kind == "add" or not live:
                add(s, op.id, list(op.sources))
            elif op.kind == "retract":
                target = data.draw(st.sampled_from(live), label="target")
                s.retract(target, sources=list(op.sources), id=op.extra_id)
                ref.add_record(RefRecord(str(op.extra_id), op.sources, target))
            else:  # a purge: no kept answer may outlive the record
                target = data.draw(st.sampled_from(live), label="target")
                gone = set(s.purge(memories=[target]))
                ref.records = [r for r in ref.records if r.id not in gone]
        elif action == "turn" and last is not None:
            # A chat turn: a message under the last anchor, a record from it, a search at it.
            eid = f"t{n}"
            s = writer()
            s.add_event(eid, parent=last, content=eid)
            ref.add_event(eid, (last,))
            arrived.append(eid)
            others = [*arrived, *pending]  # other branches, and events still to come
            more = data.draw(
                st.lists(st.sampled_from(others), max_size=2, unique=True), label="sources"
            )
            live = [r.id for r in ref.records if r.target is None]
            if live and data.draw(st.integers(0, 3), label="retract") == 0:
                # "Actually, no": the turn retracts a record, sourced from the new message.
                target = data.draw(st.sampled_from(live), label="target")
                s.retract(target, sources=[eid, *more], id=f"x{n}")
                ref.add_record(RefRecord(f"x{n}", (eid, *more), target))
            else:
                add(s, f"c{n}", list(dict.fromkeys([eid, *more])))
            search_and_check(reader, ref, eid, data, usual)
            last = eid
        elif action == "merge" and last is not None and len(arrived) > 1:
            # A merge under the last anchor, then a search at it (or below a turn later).
            other = data.draw(st.sampled_from([e for e in arrived if e != last]), label="other")
            if last not in ref.ancestors(other) and other not in ref.ancestors(last):
                eid = f"j{n}"
                writer().add_event(eid, parent=[last, other], content=eid)
                ref.add_event(eid, (last, other))
                arrived.append(eid)
                search_and_check(reader, ref, eid, data, usual)
                last = eid
        elif action == "walk" and last is not None:
            below = [e for e in arrived if last in ref.ancestors(e) and e != last]
            if below:  # further down from the last anchor
                last = data.draw(st.sampled_from(below), label="below")
                search_and_check(reader, ref, last, data, usual)
        elif arrived:
            last = data.draw(st.sampled_from(arrived), label="anchor")
            search_and_check(reader, ref, last, data, usual)


SETTINGS = settings(
    max_examples=80,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def test_advanced_answers_equal_the_full_read(make_store: Callable[[], Store]) -> None:
    moves = Moves()

    @SETTINGS
    @given(hist=histories(max_events=10, max_ops=10), data=st.data())
    def run(hist: History, data: st.DataObject) -> None:
        store = make_store()
        try:
            play([store], hist, data, moves)
        finally:
            store.close()

    with moves.counting():
        run()
    if isinstance(make_store()._engine.backend, RecordLog):
        assert moves.moved > 0  # the path under test was taken


def test_two_stores_on_one_file_advance_like_a_full_read(tmp_path: Path) -> None:
    moves = Moves()
    count = [0]

    @SETTINGS
    @given(hist=histories(max_events=10, max_ops=10), data=st.data())
    def run(hist: History, data: st.DataObject) -> None:
        count[0] += 1
        path = tmp_path / f"s{count[0]}.db"
        stores = [Store(path), Store(path)]
        try:
            play(stores, hist, data, moves)
        finally:
            for s in stores:
                s.close()

    with moves.counting():
        run()
    assert moves.moved > 0


def test_a_merge_between_the_anchors_reads_again(make_store: Callable[[], Store]) -> None:
    """A record indexed on the old anchor's path whose other source comes in
    by a merge below it: hidden at the old anchor, shown at the merge."""
    store = make_store()
    store.add_events(
        [
            {"id": "r"},
            {"id": "x", "parent": "r"},
            {"id": "y", "parent": "r"},
            {"id": "y2", "parent": "y"},
        ]
    )
    store.add_memory("用户说杭州", sources=["x", "y"], id="both")
    store.add_memory("用户说成都", sources=["y"], id="one")
    assert [h.memory.id for h in store.search("杭州", at="y2", embedder=EMB)] == ["one"]
    store.add_event("m", parent=["y2", "x"])
    hits = store.search("杭州", at="m", embedder=EMB, cutoff="off")
    assert sorted(h.memory.id for h in hits) == ["both", "one"]


def test_a_chat_keeps_one_search_state(make_store: Callable[[], Store]) -> None:
    """Turn after turn, the search at the new message extends the previous
    message's answer, and its search state is taken over, not made again."""
    from branchmem.retrieval.cache import rank_cache

    store = make_store()
    store.add_event("e0")
    store.add_memory("用户说杭州", sources=["e0"])
    store.search("杭州", at="e0", embedder=EMB, mode="keyword")
    states = rank_cache(store._engine).states
    held = list(states._states.values())
    moves = Moves()
    with moves.counting():
        for i in range(1, 8):
            store.add_event(f"e{i}", parent=f"e{i - 1}")
            store.add_memory(f"用户说成都{i}", sources=[f"e{i}"])
            hits = store.search("成都", at=f"e{i}", embedder=EMB, mode="keyword", cutoff="off")
            assert len(hits) == i
            now = list(states._states.values())
            assert len(now) == 1 and now[0] is held[0]
            assert len(now[0].ids) == i + 1
    if isinstance(store._engine.backend, RecordLog):
        assert moves.moved == 7


def test_a_retraction_on_the_old_path_hides_a_new_record(make_store: Callable[[], Store]) -> None:
    """A retraction visible at the old anchor whose target is placed below it:
    shown nowhere on the old path, the target stays hidden on the new one."""
    store = make_store()
    store.add_events([{"id": "e1"}, {"id": "e2", "parent": "e1"}, {"id": "e3", "parent": "e2"}])
    store.add_memory("用户说成都", sources=["e1"], id="kept")
    store.add_memory("用户说杭州", sources=["e3"], id="later")
    store.retract("later", sources=["e1"], id="no")
    assert [h.memory.id for h in store.search("杭州", at="e2", embedder=EMB)] == ["kept"]
    hits = store.search("杭州", at="e3", embedder=EMB, cutoff="off")
    assert [h.memory.id for h in hits] == ["kept"] == [m.id for m in store.memories(at="e3")]
