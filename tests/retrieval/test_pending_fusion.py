"""Ranking while some records have no vector yet: the embedded ones by both
signals, the rest by keyword alone, on the plain and the numpy path, against
a naive reference."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from branchmem import Memory, Weights
from branchmem.retrieval.fusion import fuse

np = pytest.importorskip("numpy")

from branchmem.retrieval import fastfuse  # noqa: E402


@settings(max_examples=200, deadline=None)
@given(data=st.data(), limit=st.integers(1, 10))
def test_records_without_a_vector_rank_by_keyword_alone(data: st.DataObject, limit: int) -> None:
    n = data.draw(st.integers(1, 40))
    kw = data.draw(st.lists(st.sampled_from([0.0, 0.2, 0.5, 0.9]), min_size=n, max_size=n))
    vec = data.draw(st.lists(st.sampled_from([-0.3, 0.1, 0.4, 0.8]), min_size=n, max_size=n))
    has = data.draw(st.lists(st.booleans(), min_size=n, max_size=n))
    imp = data.draw(st.lists(st.sampled_from([0.0, 0.5, 1.0]), min_size=n, max_size=n))
    ages = data.draw(st.lists(st.sampled_from([0.0, 10.0, 1e7]), min_size=n, max_size=n))
    seqs = data.draw(st.permutations(range(n)))
    w = Weights(recency=data.draw(st.sampled_from([0.0, 0.2])))
    mems = [
        Memory(f"m{i}", "x", ("e",), importance=imp[i], created_at=1e6 - ages[i], seq=seqs[i])
        for i in range(n)
    ]
    known = [i for i in range(n) if has[i]]
    # The reference: vector ranks among the embedded records only, every score
    # from its definition, one full sort.
    ref = []
    best = (w.keyword + w.vector) / (w.rrf_k + 1)
    for i, m in enumerate(mems):
        rel = w.keyword / (w.rrf_k + 1 + sum(v > kw[i] for v in kw)) if kw[i] > 0 else 0.0
        if has[i]:
            rel += w.vector / (w.rrf_k + 1 + sum(vec[j] > vec[i] for j in known))
        if rel == 0:
            continue
        rec = 0.5 ** (ages[i] / w.half_life)
        score = rel / best * (1 - w.importance + w.importance * m.importance)
        ref.append((-score * (1 - w.recency + w.recency * rec), m.seq, m.id))
    ref.sort()
    with_nan = [vec[i] if has[i] else math.nan for i in range(n)]
    got = fuse(mems, kw, with_nan, w, now=1e6, limit=limit, pending=True)
    assert [s.memory.id for s in got] == [x[2] for x in ref[:limit]]
    for s, (neg, _, _) in zip(got, ref, strict=False):
        assert math.isclose(s.score, -neg, rel_tol=1e-12)
        i = int(s.memory.id[1:])
        assert (s.vector is None) == (not has[i]) and (s.vector_rank is None) == (not has[i])
    # The numpy path (what a large candidate set takes) gives the very same hits.
    cos = np.asarray(with_nan, dtype=np.float64)
    ranks = np.zeros(n, dtype=np.int64)
    at = np.asarray(known, dtype=np.int64)
    if len(at):
        ranks[at] = fastfuse.competition_ranks(cos[at])
    matched = [i for i in range(n) if kw[i] > 0]
    sparse = (np.asarray(matched, dtype=np.int64), np.asarray([kw[i] for i in matched]))
    arrays = (
        np.asarray(imp, dtype=np.float64),
        np.asarray([m.created_at for m in mems], dtype=np.float64),
        np.zeros(n, dtype=np.int64),
    )
    fast = fastfuse.fuse_sparse(
        mems, sparse, (np.arange(n), cos, ranks), w, 1e6, limit, arrays, None
    )
    assert fast == got
