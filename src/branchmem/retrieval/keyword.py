"""BM25 over the gated candidates only.

The corpus statistics (document frequency, average length) are those of the
records the gate let through, so nothing hidden at the anchor can influence
a visible record's score, not even through an IDF.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from .vectors import TermStats

K1 = 1.2
B = 0.75


def bm25(query_terms: Sequence[str], docs: Sequence[TermStats]) -> list[float]:
    """BM25 score of each document for the query (0.0 where no term matches).

    Repeated query terms count once.

    >>> docs = [({"杭州": 1, "搬去": 1}, 2), ({"成都": 1}, 1), ({"杭州": 2}, 2)]
    >>> [round(s, 3) for s in bm25(["搬去", "杭州"], docs)]
    [1.341, 0.0, 0.612]
    """
    n = len(docs)
    terms = list(dict.fromkeys(query_terms))
    scores = [0.0] * n
    if not n or not terms:
        return scores
    avg = sum(length for _, length in docs) / n or 1.0
    norm = [K1 * (1 - B + B * length / avg) for _, length in docs]
    for t in terms:
        df = 0
        hits: list[tuple[int, int]] = []
        for i, (tf, _) in enumerate(docs):
            f = tf.get(t)
            if f:
                df += 1
                hits.append((i, f))
        if not df:
            continue
        idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
        for i, f in hits:
            scores[i] += idf * f * (K1 + 1) / (f + norm[i])
    return scores
