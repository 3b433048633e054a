"""Fusion: reciprocal-rank fusion of keyword and vector ranks, then priors.

``relevance = (wk / (c + keyword_rank) + wv / (c + vector_rank)) / best``,
where ``best`` is the value for rank 1 in both lists, so relevance lies in
[0, 1]; a record no query term matches has no keyword rank and gets only its
vector share. Then::

    score = relevance
            × (1 - wi + wi × importance)
            × (1 - wr + wr × recency),    recency = 0.5 ** (age / half_life)

Only ranks enter the fusion, never raw cosines or BM25 values, so an
embedder whose cosines bunch in a narrow band ranks as well as any other.
Ties are broken by the record's write order (``seq``), then its id.
"""

from __future__ import annotations

import heapq
import math
from bisect import bisect_right
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from ..errors import InvalidInput
from ..model import Memory
from ..validate import show

DAY = 86_400.0


@dataclass(frozen=True)
class Weights:
    """How much each signal counts. ``importance`` and ``recency`` lie in [0, 1]:
    0 ignores the signal, 1 lets it scale the score all the way to zero.

    >>> Weights(recency=0.0).recency
    0.0
    """

    keyword: float = 1.0
    vector: float = 1.0
    importance: float = 0.3
    recency: float = 0.2
    rrf_k: float = 60.0
    half_life: float = 30 * DAY

    def __post_init__(self) -> None:
        for name in ("keyword", "vector", "rrf_k", "half_life"):
            v = getattr(self, name)
            if not _finite(v) or v < 0 or (name in ("rrf_k", "half_life") and v == 0):
                raise InvalidInput(f"weight {name} must be a positive number, got {show(v)}")
        for name in ("importance", "recency"):
            v = getattr(self, name)
            if not _finite(v) or not 0.0 <= v <= 1.0:
                raise InvalidInput(f"weight {name} must be between 0 and 1, got {show(v)}")

    def to_dict(self) -> dict[str, float]:
        """The weights as a plain dict (as the query log records them)."""
        return {k: float(v) for k, v in asdict(self).items()}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Weights:
        """The inverse of `to_dict`; missing fields keep their defaults."""
        return cls(**{k: float(v) for k, v in data.items()})


def fusion_weight(embedder: object) -> float:
    """The vector weight a search gives ``embedder``'s ranks when the caller
    sets no `Weights`: its ``fusion_weight`` attribute if it has one (a weak
    embedder's ranks count less beside BM25's), else 1.

    >>> from branchmem import HashingEmbedder
    >>> fusion_weight(HashingEmbedder()), fusion_weight(object())
    (0.5, 1.0)
    """
    v = getattr(embedder, "fusion_weight", 1.0)
    if not _finite(v) or v < 0:
        name = getattr(embedder, "name", type(embedder).__name__)
        raise InvalidInput(f"embedder {name!r} has fusion_weight {show(v)}: give a number >= 0")
    return float(v)


def _finite(v: object) -> bool:
    if not isinstance(v, (int, float)) or isinstance(v, bool):
        return False
    try:
        return math.isfinite(v)
    except OverflowError:  # an int too large for a float
        return False


@dataclass(frozen=True)
class Scored:
    """One candidate's signals and fused score (internal to ranking)."""

    memory: Memory
    keyword: float | None
    vector: float | None
    keyword_rank: int | None
    vector_rank: int | None
    relevance: float
    importance: float
    recency: float
    score: float
    scope: float = 1.0


def ranks(values: Sequence[float], *, positive_only: bool) -> list[int | None]:
    """1-based rank of each value, highest first; equal values share the best rank
    (1, 2, 2, 4), so equal evidence gives equal scores. None for skipped zeros.

    >>> ranks([0.5, 0.9, 0.5, 0.0], positive_only=True)
    [2, 1, 2, None]
    """
    idx = [i for i, v in enumerate(values) if v > 0] if positive_only else range(len(values))
    order = sorted(idx, key=values.__getitem__, reverse=True)
    out: list[int | None] = [None] * len(values)
    prev: float | None = None
    rank = 0
    for n, i in enumerate(order, 1):
        if values[i] != prev:
            rank, prev = n, values[i]
        out[i] = rank
    return out


def recency(created_at: float, now: float, half_life: float) -> float:
    """``0.5 ** (age / half_life)``; a record from the future counts as new.

    >>> recency(0.0, 30 * DAY, 30 * DAY)
    0.5
    """
    return float(0.5 ** (max(0.0, now - created_at) / half_life))


def signal_weights(
    weights: Weights, keyword: bool, vector: bool
) -> tuple[float, float, float, float]:
    """``(rrf_k, keyword weight, vector weight, best)`` for the signals used:
    an unused signal weighs 0, and ``best`` is the relevance of rank 1 in both."""
    c = weights.rrf_k
    wk = weights.keyword if keyword else 0.0
    wv = weights.vector if vector else 0.0
    best = (wk + wv) / (c + 1)
    if best <= 0:
        raise InvalidInput(
            "keyword and vector weights are both 0 for this mode; give one a positive weight"
        )
    return c, wk, wv, best


def fuse(
    mems: Sequence[Memory],
    keyword: Sequence[float] | None,
    vector: Sequence[float] | None,
    weights: Weights,
    now: float,
    limit: int | None = None,
    scope: Sequence[float] | None = None,
    *,
    pending: bool = False,
) -> list[Scored]:
    """The ``limit`` best candidates (all when None), best first; ties by seq, then id.

    ``pending``: some entries of ``vector`` are NaN, records without a vector
    yet; they get no vector rank (only their keyword share).

    ``scope`` multiplies each candidate's score (the weight of the scope-chain
    anchor that made it visible); None leaves every score as it is.

    ``keyword`` or ``vector`` is None when that signal is not used (a
    keyword-only or vector-only ranking). Candidates that no used signal
    relates to (no query term matches, and no vector signal) are dropped.
    """
    c, wk, wv, best = signal_weights(weights, keyword is not None, vector is not None)
    n = len(mems)
    wi, wr, hl = weights.importance, weights.recency, weights.half_life

    def score(i: int, rel: float) -> float:
        m = mems[i]
        # Lifecycle hook: once a batch form of decay exists, `m.importance`
        # here becomes importance × decay × use boost at `now` (see
        # branchmem.ops.lifecycle, Store.score).
        age = now - m.created_at
        rec = 0.5 ** (age / hl) if age > 0 else 1.0
        s = rel * (1 - wi + wi * m.importance) * (1 - wr + wr * rec)
        return s * scope[i] if scope is not None else s

    kr_of: Callable[[int], int | None]
    vr_of: Callable[[int], int | None]
    if limit is not None and vector is not None and n > 4 * limit and not pending:
        kr_of, vr_of, scores = _top_scores(keyword, vector, wk, wv, c, best, limit, scope, score)
    else:
        kr = ranks(keyword, positive_only=True) if keyword is not None else [None] * n
        vr: list[int | None] = (
            ranks(vector, positive_only=False) if vector is not None else [None] * n
        )
        if pending and vector is not None:
            known = [i for i, v in enumerate(vector) if v == v]
            vr = [None] * n
            found = ranks([vector[i] for i in known], positive_only=False)
            for i, r in zip(known, found, strict=True):
                vr[i] = r
        kr_of, vr_of = kr.__getitem__, vr.__getitem__
        scores = {}
        for i in range(n):
            rel = _relevance(kr[i], vr[i], wk, wv, c) / best
            if rel > 0:
                scores[i] = score(i, rel)
    if limit is not None and len(scores) > limit:
        # Only records scoring at least the limit-th best can make the cut;
        # the full (score, seq, id) order is then taken among those few.
        floor = heapq.nlargest(limit, scores.values())[-1]
        scores = {i: v for i, v in scores.items() if v >= floor}
    order = sorted(scores, key=lambda i: (-scores[i], mems[i].seq, mems[i].id))[:limit]
    out = []
    for i in order:
        m = mems[i]
        out.append(
            Scored(
                m,
                keyword[i] if keyword is not None else None,
                vector[i] if vector is not None and vector[i] == vector[i] else None,
                kr_of(i),
                vr_of(i),
                _relevance(kr_of(i), vr_of(i), wk, wv, c) / best,
                m.importance,
                recency(m.created_at, now, hl),
                scores[i],
                scope[i] if scope is not None else 1.0,
            )
        )
    return out


def _top_scores(
    keyword: Sequence[float] | None,
    vector: Sequence[float],
    wk: float,
    wv: float,
    c: float,
    best: float,
    limit: int,
    scope: Sequence[float] | None,
    score: Callable[[int, float], float],
) -> tuple[Callable[[int], int | None], Callable[[int], int | None], dict[int, float]]:
    """The scores of enough candidates to hold the ``limit`` best, and their ranks.

    Every keyword match is scored; the others are scored in vector order until
    even a perfect prior (at most 1, times the largest scope weight) could not
    reach the ``limit``-th best score found, since later ones rank lower.
    Ranks are the same competition ranks as `ranks`, by counting the greater
    values in sorted lists, so each score is the very float `fuse` would make.
    """
    n = len(vector)
    asc = sorted(vector)

    def vrank(i: int) -> int:
        return n - bisect_right(asc, vector[i]) + 1

    kr: dict[int, int] = {}
    if keyword is not None:
        pos = [i for i, v in enumerate(keyword) if v > 0]
        kasc = sorted(keyword[i] for i in pos)
        for i in pos:
            kr[i] = len(pos) - bisect_right(kasc, keyword[i]) + 1
    scores = {i: score(i, _relevance(r, vrank(i), wk, wv, c) / best) for i, r in kr.items()}
    heap = heapq.nlargest(limit, scores.values())
    heapq.heapify(heap)
    most = max(scope) if scope is not None else 1.0
    for i in sorted(range(n), key=vector.__getitem__, reverse=True):
        if i in kr:
            continue
        rel = _relevance(None, vrank(i), wk, wv, c) / best
        if rel <= 0 or (len(heap) >= limit and rel * most * (1 + 1e-9) < heap[0]):
            break
        s = scores[i] = score(i, rel)
        if len(heap) < limit:
            heapq.heappush(heap, s)
        elif s > heap[0]:
            heapq.heapreplace(heap, s)
    return kr.get, vrank, scores


def _relevance(kr: int | None, vr: int | None, wk: float, wv: float, c: float) -> float:
    return (wk / (c + kr) if kr is not None else 0.0) + (wv / (c + vr) if vr is not None else 0.0)
