"""Search at scale: the numpy fusion, the approximate index and the kept gate answer.

* `fastfuse.fuse_sparse` against `fusion.fuse` (the reference), ties included,
  given every cosine or a pool of all of them in any order: the same
  records, the same floats.
* With the approximate index forced on for small sets (`ann.SETTINGS`), on
  every backend, through writes, retractions and purges: every hit is visible
  at its ``via``; where the index must fall back (the visible set a small
  share of the indexed records), or where its pool covers the whole visible
  set, results equal the from-scratch ranking exactly.
* A purged record never comes back from the index, whichever `Store` purged.
* A kept gate answer is never reused after another `Store` wrote the file.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_search_state import EMB, NOW, WORDS, brute, play

from branchmem import HashingEmbedder, Memory, Store, Weights
from branchmem.retrieval import ann, fastfuse
from branchmem.retrieval.cache import cache_for
from branchmem.retrieval.fusion import fuse
from helpers.strategies import History

np = pytest.importorskip("numpy")


@settings(max_examples=300, deadline=None)
@given(data=st.data(), limit=st.integers(1, 12))
def test_numpy_fusion_equals_the_reference(data: st.DataObject, limit: int) -> None:
    n = data.draw(st.integers(1, 40))
    kw = data.draw(st.lists(st.sampled_from([0.0, 0.1, 0.25, 0.9]), min_size=n, max_size=n))
    vec = data.draw(st.lists(st.sampled_from([-0.2, 0.0, 0.3, 0.8]), min_size=n, max_size=n))
    imp = data.draw(st.lists(st.sampled_from([0.0, 0.5, 1.0]), min_size=n, max_size=n))
    ages = data.draw(st.lists(st.sampled_from([-5.0, 0.0, 10.0, 1e6]), min_size=n, max_size=n))
    via = data.draw(st.lists(st.integers(0, 2), min_size=n, max_size=n))
    scopes = data.draw(st.none() | st.just([1.0, 0.5, 2.0]))
    mode = data.draw(st.sampled_from(["hybrid", "keyword", "vector"]))
    w = Weights(recency=data.draw(st.sampled_from([0.0, 0.2, 1.0])))
    seqs = data.draw(st.permutations(range(n)))
    mems = [
        Memory(f"m{i}", "x", ("e",), importance=imp[i], created_at=1e6 - ages[i], seq=seqs[i])
        for i in range(n)
    ]
    k_in = kw if mode != "vector" else None
    v_in = vec if mode != "keyword" else None
    boost = [scopes[v] for v in via] if scopes else None
    want = fuse(mems, k_in, v_in, w, 1e6, limit, boost)
    arrays = (
        np.asarray(imp, dtype=np.float64),
        np.asarray([m.created_at for m in mems], dtype=np.float64),
        np.asarray(via, dtype=np.int64),
    )
    matched = [i for i, v in enumerate(kw) if v > 0]
    sparse = None
    if k_in is not None:
        sparse = (np.asarray(matched, dtype=np.int64), np.asarray([kw[i] for i in matched]))
    vector = np.asarray(vec, dtype=np.float64) if v_in is not None else None
    if vector is not None and data.draw(st.booleans()):  # as a pool of every record
        order = np.asarray(data.draw(st.permutations(range(n))), dtype=np.int64)
        vector = (order, vector[order], fastfuse.competition_ranks(vector)[order])
    scope = np.asarray(scopes) if scopes else None
    got = fastfuse.fuse_sparse(mems, sparse, vector, w, 1e6, limit, arrays, scope)
    assert got == want


@pytest.fixture
def forced_index() -> Iterator[ann.Settings]:
    """The numpy paths and the approximate index for any set, however small."""
    if ann.library() is None:
        pytest.skip("the ann extra (hnswlib) is not installed")
    saved = (fastfuse.FAST_MIN, ann.SETTINGS)
    fastfuse.FAST_MIN = 1
    ann.SETTINGS = ann.Settings(min_visible=1, pool=4, sample=3)
    try:
        yield ann.SETTINGS
    finally:
        fastfuse.FAST_MIN, ann.SETTINGS = saved


def _check(store: Store, hist: History, data: st.DataObject) -> None:
    events = list(hist.parents)
    chain = data.draw(st.lists(st.sampled_from(events), min_size=1, max_size=2, unique=True))
    query = data.draw(st.sampled_from([*WORDS, "杭州 花生"]))
    mode = data.draw(st.sampled_from(["hybrid", "vector", "keyword"]))
    k = data.draw(st.integers(1, 6))
    # pool 4 (often less than the visible set: approximate), or 1000 (all of it: exact)
    ann.SETTINGS.pool = data.draw(st.sampled_from([4, 1000]))
    ann.SETTINGS.min_share = data.draw(st.sampled_from([0.0, 2.0]))  # 2.0: always fall back
    ann.SETTINGS.far_share = data.draw(st.sampled_from([0, 8]))  # 0: never for keyword matches
    hits = store.search(query, at=chain, k=k, mode=mode, embedder=EMB, now=NOW, cutoff="off")
    for h in hits:  # the gate first, always
        assert h.memory.id in {m.id for m in store.memories(at=h.via, now=NOW)}
    assert len({h.memory.id for h in hits}) == len(hits) <= k
    exact = ann.SETTINGS.min_share > 1 or ann.SETTINGS.pool >= 1000 or mode == "keyword"
    if exact:
        want = brute(store, query, chain, mode, k, None)
        assert [(h.memory.id, h.score, h.via) for h in hits] == want


def test_index_keeps_the_gate_and_falls_back_exactly(
    make_store: Callable[[], Store], forced_index: ann.Settings
) -> None:
    play(make_store, _check, 30)


def _chat(store: Store, n: int) -> list[str]:
    store.add_events([{"id": "e0"}] + [{"id": f"e{i}", "parent": f"e{i - 1}"} for i in range(1, n)])
    texts = [f"用户说{WORDS[i % len(WORDS)]}（{i}）" for i in range(n)]
    mems = store.add_memories([{"content": t, "sources": [f"e{i}"]} for i, t in enumerate(texts)])
    return [m.id for m in mems]


def test_a_purged_record_never_comes_back_from_the_index(
    tmp_path: Path, forced_index: ann.Settings
) -> None:
    forced_index.pool = 8
    p = tmp_path / "s.db"
    x, y = Store(p), Store(p)
    ids = _chat(x, 30)
    emb = HashingEmbedder(32)
    top = y.search("花生", at="e29", k=5, mode="vector", embedder=emb, cutoff="off")[0].memory.id
    assert len(cache_for(y).ann[("default", emb.name)]) == 30  # the index holds all 30
    x.purge(memories=[top])  # by the other store
    # The first search after another store's erasure ranks exactly (the erasure
    # is found inside its read view, after it noted the epoch); the next rebuilds.
    for mode in ("vector", "hybrid", "vector"):
        hits = y.search("花生", at="e29", k=10, mode=mode, embedder=emb, cutoff="off")
        assert top not in {h.memory.id for h in hits}
        assert {h.memory.id for h in hits} <= set(ids) - {top}
    # the index was dropped on the erasure and rebuilt from what remains
    assert len(cache_for(y).ann[("default", emb.name)]) == 29
    gone = y.search("猫", at="e29", k=1, mode="vector", embedder=emb, cutoff="off")[0].memory.id
    y.purge(memories=[gone])  # by the searching store itself
    assert gone not in {
        h.memory.id for h in y.search("猫", at="e29", k=30, embedder=emb, cutoff="off")
    }
    assert ("default", emb.name) not in cache_for(y).ann or all(
        len(i) == 28 for i in cache_for(y).ann.values()
    )


def test_a_kept_gate_answer_is_not_reused_after_another_store_writes(tmp_path: Path) -> None:
    p = tmp_path / "s.db"
    x, y = Store(p), Store(p)
    x.add_events([{"id": "e1"}, {"id": "e2", "parent": "e1"}])
    x.add_memory("用户对花生过敏", sources=["e1"])
    assert len(y.search("花生", at="e2", embedder="hashing", cutoff="off")) == 1
    assert len(y.search("花生", at="e2", embedder="hashing", cutoff="off")) == 1  # the kept answer
    m = x.add_memory("用户对花生酱过敏", sources=["e2"])
    assert m.id in {
        h.memory.id for h in y.search("花生", at="e2", embedder="hashing", cutoff="off")
    }
    x.retract(m.id, sources=["e2"])
    assert m.id not in {
        h.memory.id for h in y.search("花生", at="e2", embedder="hashing", cutoff="off")
    }


def test_a_kept_gate_answer_is_not_reused_across_time(make_store: Callable[[], Store]) -> None:
    store = make_store()
    store.add_event("e1")
    store.add_memory("用户对花生过敏", sources=["e1"], expires_at=100.0)
    assert len(store.search("花生", at="e1", embedder="hashing", now=50.0, cutoff="off")) == 1
    assert store.search("花生", at="e1", embedder="hashing", now=150.0, cutoff="off") == []
    assert len(store.search("花生", at="e1", embedder="hashing", now=50.0, cutoff="off")) == 1


def test_a_large_build_runs_on_its_own_thread_while_searches_rank_exactly(
    tmp_path: Path, forced_index: ann.Settings
) -> None:
    """More records missing from the index than `build_in_search`: the search
    that finds them ranks exactly (the same hits as without the index) and
    starts the build on a thread; once it is done, searches use the index
    (and its answer still holds only what the gate shows)."""
    import time

    forced_index.pool, forced_index.build_in_search = 8, 5
    s = Store(tmp_path / "s.db")
    ids = _chat(s, 40)
    emb = HashingEmbedder(32)
    forced_index.enabled = False
    want = [(h.memory.id, h.score) for h in s.search("花生", at="e39", k=5, embedder=emb, now=NOW)]
    forced_index.enabled = True
    release = threading.Event()
    real_add = ann.NamespaceIndex.add

    def held_add(self: ann.NamespaceIndex, mems: Any, rows: Any) -> None:
        if threading.current_thread().name == "branchmem-ann-build":
            assert release.wait(30)
        real_add(self, mems, rows)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(ann.NamespaceIndex, "add", held_add)
        for _ in range(2):  # the first starts the build; the second meets it running
            hits = s.search("花生", at="e39", k=5, embedder=emb, now=NOW)
            assert [(h.memory.id, h.score) for h in hits] == want  # exact, without waiting
        index = cache_for(s).ann[("default", emb.name)]
        assert index.building and len(index) == 0
        release.set()
        deadline = time.monotonic() + 30
        while (index.building or len(index) < 40) and time.monotonic() < deadline:
            time.sleep(0.01)
    assert len(index) == 40 and not index.building
    calls = []
    real = index.neighbours
    index.neighbours = lambda q, n: calls.append(n) or real(q, n)  # type: ignore[method-assign]
    hits = s.search("花生", at="e39", k=5, mode="vector", embedder=emb, cutoff="off")
    assert calls, "the built index answered"
    assert {h.memory.id for h in hits} <= set(ids)
    s.close()
