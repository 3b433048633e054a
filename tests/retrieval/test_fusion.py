"""Fusion and BM25 against deliberately naive references."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from branchmem import InvalidInput, Memory, Weights
from branchmem.retrieval.fusion import fuse, ranks
from branchmem.retrieval.keyword import bm25

values = st.lists(st.sampled_from([0.0, 0.1, 0.25, 0.5, 0.9, 1.0]), min_size=1, max_size=40)


def naive_rank(vals: list[float], i: int) -> int:
    return 1 + sum(v > vals[i] for v in vals)


@settings(max_examples=200, deadline=None)
@given(vals=values, positive=st.booleans())
def test_ranks_are_competition_ranks(vals: list[float], positive: bool) -> None:
    got = ranks(vals, positive_only=positive)
    for i, v in enumerate(vals):
        if positive and v <= 0:
            assert got[i] is None
        else:
            assert got[i] == naive_rank(vals, i)


@settings(max_examples=100, deadline=None)
@given(
    vals=st.lists(st.integers(0, 30), min_size=0, max_size=3000),
    scale=st.sampled_from([1.0, 0.01, -1.0]),
)
def test_the_numpy_ranks_are_competition_ranks(vals: list[int], scale: float) -> None:
    """`fastfuse.competition_ranks` (an unstable sort of thousands of values,
    many equal) against counting the values above each one."""
    np = pytest.importorskip("numpy")
    from branchmem.retrieval.fastfuse import competition_ranks

    arr = np.asarray(vals, dtype=np.float64) * scale
    got = competition_ranks(arr).tolist()
    ordered = np.sort(arr)
    want = (len(arr) - np.searchsorted(ordered, arr, side="right") + 1).tolist()
    assert got == want


@settings(max_examples=200, deadline=None)
@given(data=st.data(), limit=st.integers(1, 12))
def test_top_k_is_the_prefix_of_the_naive_order(data: st.DataObject, limit: int) -> None:
    kw = data.draw(values)
    n = len(kw)
    vec = data.draw(st.lists(st.sampled_from([-0.2, 0.3, 0.8]), min_size=n, max_size=n))
    imp = data.draw(st.lists(st.sampled_from([0.0, 0.5, 1.0]), min_size=n, max_size=n))
    ages = data.draw(st.lists(st.sampled_from([0.0, 10.0, 1e6]), min_size=n, max_size=n))
    mode = data.draw(st.sampled_from(["hybrid", "keyword", "vector"]))
    mems = [
        Memory(f"m{i}", "x", ("e",), importance=imp[i], created_at=1e6 - ages[i], seq=n - i)
        for i in range(n)
    ]
    k_in = kw if mode != "vector" else None
    v_in = vec if mode != "keyword" else None
    w = Weights()
    # the reference: every score from its definition, then one full sort
    ref = []
    for i, m in enumerate(mems):
        rel = 0.0
        if k_in is not None and kw[i] > 0:
            rel += w.keyword / (w.rrf_k + naive_rank(kw, i))
        if v_in is not None:
            rel += w.vector / (w.rrf_k + naive_rank(vec, i))
        if rel == 0:
            continue
        best = ((w.keyword if k_in else 0) + (w.vector if v_in else 0)) / (w.rrf_k + 1)
        rec = 0.5 ** (ages[i] / w.half_life)
        score = rel / best * (1 - w.importance + w.importance * m.importance)
        score *= 1 - w.recency + w.recency * rec
        ref.append((-score, m.seq, m.id))
    ref.sort()
    got = fuse(mems, k_in, v_in, w, now=1e6, limit=limit)
    assert [s.memory.id for s in got] == [x[2] for x in ref[:limit]]
    for s, (neg, _, _) in zip(got, ref, strict=False):
        assert math.isclose(s.score, -neg, rel_tol=1e-12)
    assert [s.memory.id for s in fuse(mems, k_in, v_in, w, now=1e6)] == [x[2] for x in ref]


@settings(max_examples=150, deadline=None)
@given(data=st.data(), limit=st.integers(1, 8))
def test_pruned_top_k_equals_the_full_ranking(data: st.DataObject, limit: int) -> None:
    """With few hits wanted, `fuse` scores only what can make the cut: the
    same hits, scores and ranks as ranking everything."""
    n = data.draw(st.integers(1, 60))
    grid = st.sampled_from([0.0, 0.1, 0.2, 0.5, 0.9])
    kw = data.draw(st.lists(grid, min_size=n, max_size=n))
    vec = data.draw(st.lists(st.sampled_from([-0.3, 0.1, 0.4, 0.41, 0.8]), min_size=n, max_size=n))
    imp = data.draw(st.lists(st.sampled_from([0.0, 0.5, 1.0]), min_size=n, max_size=n))
    ages = data.draw(st.lists(st.sampled_from([-5.0, 0.0, 10.0, 1e7]), min_size=n, max_size=n))
    scope = data.draw(
        st.none() | st.lists(st.sampled_from([0.5, 1.0, 3.0]), min_size=n, max_size=n)
    )
    w = Weights(
        keyword=data.draw(st.sampled_from([0.0, 1.0, 2.0])),
        vector=data.draw(st.sampled_from([0.0, 1.0])),
        importance=data.draw(st.sampled_from([0.0, 0.3, 1.0])),
        recency=data.draw(st.sampled_from([0.0, 0.2, 1.0])),
    )
    k_in = data.draw(st.sampled_from([kw, None]))
    if (w.keyword if k_in is not None else 0.0) + w.vector == 0:
        return  # no signal: an error, tested elsewhere
    mems = [
        Memory(f"m{i}", "x", ("e",), importance=imp[i], created_at=1e6 - ages[i], seq=i % 7)
        for i in range(n)
    ]
    want = fuse(mems, k_in, vec, w, now=1e6, scope=scope)[:limit]
    assert fuse(mems, k_in, vec, w, now=1e6, limit=limit, scope=scope) == want


def test_best_in_both_lists_has_relevance_one() -> None:
    mems = [Memory("a", "x", ("e",)), Memory("b", "y", ("e",))]
    [top, _] = fuse(mems, [2.0, 1.0], [0.9, 0.1], Weights(importance=0, recency=0), now=0.0)
    assert top.memory.id == "a" and top.relevance == 1.0 and top.score == 1.0
    with pytest.raises(InvalidInput, match="both 0"):
        fuse(mems, [1.0, 0.0], None, Weights(keyword=0.0), now=0.0)


@settings(max_examples=200, deadline=None)
@given(
    docs=st.lists(
        st.dictionaries(st.sampled_from("abcde"), st.integers(1, 3), max_size=4), max_size=12
    ),
    query=st.lists(st.sampled_from("abcdef"), max_size=4),
)
def test_bm25_matches_its_formula(docs: list[dict[str, int]], query: list[str]) -> None:
    stats = [(d, sum(d.values())) for d in docs]
    got = bm25(query, stats)
    n = len(docs)
    avg = (sum(length for _, length in stats) / n) if n else 0.0
    for i, (tf, length) in enumerate(stats):
        want = 0.0
        for t in set(query):
            df = sum(t in d for d in docs)
            f = tf.get(t, 0)
            if f:
                idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
                want += idf * f * 2.2 / (f + 1.2 * (0.25 + 0.75 * length / (avg or 1.0)))
        assert math.isclose(got[i], want, rel_tol=1e-9, abs_tol=1e-12)


@pytest.mark.parametrize("bad", [-1.0, float("nan"), float("inf"), "0.5", True, None])
def test_an_embedder_with_a_bad_fusion_weight_is_refused_by_name(bad: object) -> None:
    """An embedder's ``fusion_weight`` is read by every search without weights:
    a value that is not a number >= 0 is refused, naming the embedder, before
    anything is ranked; given ``weights``, the attribute is not read."""
    from branchmem import HashingEmbedder, Store

    class Odd(HashingEmbedder):
        fusion_weight = bad  # type: ignore[assignment]

    s = Store()
    s.add_event("e1")
    s.add_memory("用户对花生过敏", sources=["e1"])
    with pytest.raises(InvalidInput, match=r"hashing-256.*fusion_weight"):
        s.search("花生", at="e1", embedder=Odd())
    hits = s.search("花生", at="e1", embedder=Odd(), weights=Weights())
    assert [h.memory.content for h in hits] == ["用户对花生过敏"]
