"""The search state kept between queries against a ranking made from scratch.

Writes, retractions, purges, arriving events and searches interleave on one
store, so the kept candidates (the gate's answer), BM25 postings and vector
matrix are reused, extended and rebuilt; every
search must equal the brute-force ranking of the chain's visible records
(ids, scores and via, exactly) and every hit must be visible at its via.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from branchmem import HashingEmbedder, Memory, Store
from branchmem.backends.base import RecordLog
from branchmem.retrieval import candidates, terms
from branchmem.retrieval.keyword import bm25
from branchmem.retrieval.state import KeywordIndex
from helpers.scratch_rank import rank_from_scratch
from helpers.strategies import History, histories

WORDS = ["杭州", "成都", "花生", "过敏", "预算", "Python", "搬家", "猫"]
EMB = HashingEmbedder(32)
NOW = 2e9


def brute(
    store: Store, query: str, chain: list[str], mode: str, k: int, scopes: list[float] | None
) -> list[tuple[str, float, str]]:
    """Gate each anchor, rank the union from scratch (nothing cached)."""
    cands: list[Memory] = []
    via: dict[str, int] = {}
    for i, a in enumerate(chain):
        for m in store.memories(at=a, now=NOW):
            if m.id not in via:
                via[m.id] = i
                cands.append(m)
    boost = [scopes[via[m.id]] for m in cands] if scopes else None
    ranked = rank_from_scratch(cands, query, mode, EMB, NOW, k, boost)
    return [(s.memory.id, s.score, chain[via[s.memory.id]]) for s in ranked]


def check(store: Store, hist: History, data: st.DataObject) -> None:
    events = list(hist.parents)
    chain = data.draw(st.lists(st.sampled_from(events), min_size=1, max_size=3, unique=True))
    query = data.draw(st.sampled_from([*WORDS, "杭州 花生", "python 预算"]))
    mode = data.draw(st.sampled_from(["hybrid", "keyword", "vector"]))
    k = data.draw(st.integers(1, 12))
    scopes = data.draw(
        st.none()
        | st.lists(st.sampled_from([0.5, 1.0, 2.0]), min_size=len(chain), max_size=len(chain))
    )
    hits = store.search(
        query, at=chain, k=k, mode=mode, embedder=EMB, now=NOW, scope_weights=scopes, cutoff="off"
    )
    assert [(h.memory.id, h.score, h.via) for h in hits] == brute(
        store, query, chain, mode, k, scopes
    )
    for h in hits:
        assert h.memory.id in {m.id for m in store.memories(at=h.via, now=NOW)}
    # The first or the last event alone, searched again and again between writes:
    # its kept candidates are extended rather than read (`candidates.extend`).
    anchor = data.draw(st.sampled_from([events[0], events[-1]]))
    hits = store.search(query, at=anchor, k=k, mode=mode, embedder=EMB, now=NOW, cutoff="off")
    assert [(h.memory.id, h.score, h.via) for h in hits] == brute(
        store, query, [anchor], mode, k, None
    )
    assert {h.memory.id for h in hits} <= {m.id for m in store.memories(at=anchor, now=NOW)}


def play(
    make_store: Callable[[], Store],
    check: Callable[[Store, History, st.DataObject], None],
    max_examples: int,
) -> int:
    """Random histories: some events, then writes, retractions, supersessions
    and purges with the other events arriving among them (records may wait for
    their sources), with ``check`` (over the events arrived so far) after each
    step. Returns how many searches extended kept candidates with new records
    instead of reading the gate again."""
    grown = [0]
    real_extend = candidates.extend

    def counting(*args: Any) -> Any:
        out = real_extend(*args)
        if out is not None and out.cands is not args[4].cands:
            grown[0] += 1
        return out

    @settings(
        max_examples=max_examples,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(hist=histories(max_events=10, max_ops=10), data=st.data())
    def run(hist: History, data: st.DataObject) -> None:
        store = make_store()
        arrived: list[str] = []

        def arrive(n: int) -> None:
            for eid in hist.arrival[len(arrived) : len(arrived) + n]:
                store.add_event(eid, parent=list(hist.parents[eid]) or None, content=eid)
                arrived.append(eid)

        def checked() -> None:
            if arrived:  # anchors among the events arrived so far, in generation order
                got = set(arrived)
                check(
                    store,
                    replace(hist, parents={e: p for e, p in hist.parents.items() if e in got}),
                    data,
                )

        try:
            arrive(data.draw(st.integers(0, len(hist.arrival)), label="events first"))
            checked()
            alive: set[str] = set()  # records an op may target
            for n, op in enumerate(hist.ops):
                if len(arrived) < len(hist.arrival) and data.draw(st.booleans()):
                    arrive(1)
                text = f"用户说{WORDS[n % len(WORDS)]}和{WORDS[(n * 3 + 1) % len(WORDS)]}"
                if op.target is not None and op.target not in alive:
                    continue  # its target was purged, or never written
                if op.kind == "add":
                    store.add_memory(text, sources=list(op.sources), id=op.id)
                    alive.add(op.id)
                elif op.kind == "retract":
                    assert op.target is not None
                    store.retract(op.target, sources=list(op.sources), id=op.extra_id)
                elif data.draw(st.booleans()):
                    assert op.target is not None
                    store.supersede(op.target, text, sources=list(op.sources), id=op.id)
                    alive.add(op.id)
                else:  # a purge: the kept state must not outlive the record
                    assert op.target is not None
                    alive.difference_update(store.purge(memories=[op.target]))
                checked()
            arrive(len(hist.arrival))
            checked()
        finally:
            store.close()

    candidates.extend = counting  # type: ignore[assignment]
    try:
        run()
    finally:
        candidates.extend = real_extend  # type: ignore[assignment]
    return grown[0]


def test_kept_state_ranks_as_from_scratch(make_store: Callable[[], Store]) -> None:
    grown = play(make_store, check, 40)
    if isinstance(
        make_store()._engine.backend, RecordLog
    ):  # the backends that can extend kept candidates
        assert grown > 0


@given(
    docs=st.lists(
        st.lists(st.sampled_from(["a", "b", "ab", "ba", "杭州", "州", "c\x1fd"]), max_size=6),
        min_size=0,
        max_size=12,
    ),
    split=st.integers(0, 12),
    query=st.lists(st.sampled_from(["a", "b", "ab", "州", "杭", "c\x1fd", "x"]), max_size=4),
)
def test_postings_equal_bm25(docs: list[list[str]], split: int, query: list[str]) -> None:
    stats = [({t: d.count(t) for t in d}, len(d)) for d in docs]
    blobs = [terms.encode(d) for d in docs]
    index = KeywordIndex()
    index.add(blobs[:split])  # built in two steps, as a state grows
    if stats[:split]:  # queried in between: its numpy arrays are made, then extended
        at, scores = index.matches(query)
        first = bm25(query, stats[:split])
        assert scores.tolist() == [v for v in first if v > 0]
    index.add(blobs[split:])
    want = bm25(query, stats)
    assert index.scores(query) == want
    at, scores = index.matches(query)  # the numpy form: the same floats
    assert at.tolist() == [i for i, v in enumerate(want) if v > 0]
    assert scores.tolist() == [v for v in want if v > 0]


def test_no_anchor_and_chains_after_a_write(make_store: Callable[[], Store]) -> None:
    """Only one anchor's kept answer is extended; an empty chain or a scope
    chain searched again after a write reads the gate again."""
    store = make_store()
    store.add_events([{"id": "e1"}, {"id": "e2", "parent": "e1"}])
    store.add_memory("用户说杭州", sources=["e1"], id="m1")
    for _ in range(2):  # the second time, after a write
        assert store.search("杭州", at=[], embedder=EMB) == []
        chain = store.search("杭州", at=["e2", "e1"], embedder=EMB)
        one = store.search("杭州", at="e2", embedder=EMB)
        assert [h.memory.id for h in chain] == [h.memory.id for h in one]
        assert {h.memory.id for h in one} == {m.id for m in store.memories(at="e2")}
        store.add_memory("用户说杭州很好", sources=["e2"], id="m2")
