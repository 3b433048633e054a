"""`fusion.fuse` for large candidate sets, with numpy: the same hits, the same floats.

Ranks are counted over sorted arrays (competition ranks, as `fusion.ranks`),
relevance and priors are computed for every pooled candidate at once, and
only the candidates that can reach the ``limit``-th best score (within a
relative 1e-9, far wider than any rounding difference between numpy and
Python arithmetic) are scored again, one by one, with exactly the arithmetic
of `fusion.fuse`; those are ordered by (score, seq, id). A property test
holds this to `fusion.fuse` on random inputs, ties included.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..model import Memory
from .fusion import Scored, Weights, _relevance, recency, signal_weights
from .vectors import numpy_or_none

FAST_MIN = 1024
"""Candidate sets from this size are fused here (when numpy is installed)."""


def competition_ranks(values: Any) -> Any:
    """1-based rank of each value, highest first, equal values sharing the best
    rank (`fusion.ranks` with ``positive_only=False``), as a numpy int array."""
    np = numpy_or_none()
    n = len(values)
    if not n:
        return np.zeros(0, dtype=np.int64)
    # Any order of equal values gives them the same rank (their run's first),
    # so the sort need not be stable: introsort takes a third to a half of
    # the stable sort's time on 50,000 to 100,000 cosines.
    order = np.argsort(-values)
    desc = values[order]
    starts = np.empty(n, dtype=bool)  # where a run of equal values begins
    starts[0] = True
    np.not_equal(desc[1:], desc[:-1], out=starts[1:])
    first = np.maximum.accumulate(np.where(starts, np.arange(n), 0))
    out = np.empty(n, dtype=np.int64)
    out[order] = first + 1
    return out


def fuse_pool(
    mems: Sequence[Memory],
    pool: Any,
    keyword: Any,
    kw_rank: Any,
    vector: Any,
    vec_rank: Any,
    weights: Weights,
    now: float,
    limit: int,
    arrays: tuple[Any, Any, Any],
    scope: Any,
) -> list[Scored]:
    """The ``limit`` best of the candidates at positions ``pool``, best first.

    ``keyword``/``kw_rank`` and ``vector``/``vec_rank`` are arrays aligned
    with ``pool`` (a rank of 0: no rank; a NaN cosine: a record without a
    vector yet), or None where the signal is not used. ``arrays`` are the
    candidates' importance, created_at and via (`Candidates.arrays`);
    ``scope`` the weight per anchor (numpy) or None.
    """
    np = numpy_or_none()
    c, wk, wv, best = signal_weights(weights, keyword is not None, vector is not None)
    wi, wr, hl = weights.importance, weights.recency, weights.half_life
    rel = np.zeros(len(pool), dtype=np.float64)
    if vec_rank is not None:
        rel = np.where(vec_rank > 0, wv / (c + vec_rank), 0.0)
    if kw_rank is not None:
        rel = np.where(kw_rank > 0, wk / (c + kw_rank), 0.0) + rel
    rel = rel / best
    imp, created, via = arrays
    age = now - created[pool]
    rec = np.where(age > 0, 0.5 ** (np.maximum(age, 0.0) / hl), 1.0)
    approx = rel * (1 - wi + wi * imp[pool]) * (1 - wr + wr * rec)
    if scope is not None:
        approx = approx * scope[via[pool]]
    live = np.flatnonzero(rel > 0)
    if len(live) > limit:
        floor = np.partition(approx[live], len(live) - limit)[len(live) - limit]
        live = live[approx[live] >= floor * (1 - 1e-9)]
    # The few that can make the cut, scored as `fusion.fuse` scores them; each
    # keeps its ranks, relevance and recency for its hit.
    scored = []
    for j in live.tolist():
        i = int(pool[j])
        kr = int(kw_rank[j]) if kw_rank is not None and kw_rank[j] > 0 else None
        vr = int(vec_rank[j]) if vec_rank is not None and vec_rank[j] > 0 else None
        m = mems[i]
        r = recency(m.created_at, now, hl)
        rel_j = _relevance(kr, vr, wk, wv, c) / best
        s = rel_j * (1 - wi + wi * m.importance) * (1 - wr + wr * r)
        w = float(scope[int(via[i])]) if scope is not None else 1.0
        scored.append((s * w, j, m, kr, vr, rel_j, r, w))
    scored.sort(key=lambda t: (-t[0], t[2].seq, t[2].id))
    return [
        Scored(
            m,
            float(keyword[j]) if keyword is not None else None,
            float(vector[j]) if vector is not None and vector[j] == vector[j] else None,
            kr,
            vr,
            rel_j,
            m.importance,
            r,
            s,
            w,
        )
        for s, j, m, kr, vr, rel_j, r, w in scored[:limit]
    ]


def fuse_sparse(
    mems: Sequence[Memory],
    keyword: tuple[Any, Any] | None,
    vector: Any,
    weights: Weights,
    now: float,
    limit: int,
    arrays: tuple[Any, Any, Any],
    scope: Any,
) -> list[Scored]:
    """`fusion.fuse` of ``mems``. ``keyword``: the positions and nonzero BM25
    scores of the matches (`KeywordIndex.matches`) or None; ``vector``: None,
    a numpy array of every candidate's cosine (exact), or ``(positions,
    cosines, ranks)`` of a vector pool (`ann.vector_pool`: the keyword matches
    it lacks are not scored)."""
    np = numpy_or_none()
    n = len(mems)
    kw = kr = None
    if keyword is not None:
        at, vals = keyword
        keep = vals > 0
        at, vals = at[keep], vals[keep]
        if vector is None:  # keyword only: the matches are the pool
            ranks = competition_ranks(vals)
            return fuse_pool(mems, at, vals, ranks, None, None, weights, now, limit, arrays, scope)
        kw = np.zeros(n, dtype=np.float64)
        kr = np.zeros(n, dtype=np.int64)
        kw[at] = vals
        kr[at] = competition_ranks(vals)
    if isinstance(vector, tuple):
        pool, cos, vr = vector
        if kw is not None and kr is not None:
            kw, kr = kw[pool], kr[pool]  # aligned with the pool
    else:
        pool, cos, vr = np.arange(n), vector, competition_ranks(vector)
    return fuse_pool(mems, pool, kw, kr, cos, vr, weights, now, limit, arrays, scope)
