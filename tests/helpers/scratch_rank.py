"""The fused ranking of a candidate list made from the records alone (nothing
cached): the reference the search state is checked against."""

from __future__ import annotations

from collections.abc import Sequence

from branchmem import Memory, Weights
from branchmem.retrieval.embed import Embedder
from branchmem.retrieval.fusion import Scored, fuse, fusion_weight
from branchmem.retrieval.keyword import bm25
from branchmem.retrieval.tokenize import get_tokenizer
from branchmem.retrieval.vectors import cosines, unit_vector


def rank_from_scratch(
    cands: list[Memory],
    query: str,
    mode: str,
    emb: Embedder,
    now: float,
    k: int,
    boost: Sequence[float] | None = None,
    tokenizer: str = "bigram",
) -> list[Scored]:
    """BM25 over the tokenizer's tokens (bigrams by default; unless ``mode`` is
    vector) and cosines of freshly embedded texts (unless keyword), fused with
    the default weights."""
    if not cands:
        return []
    tok = get_tokenizer(tokenizer)
    kw = vec = None
    if mode != "vector":
        stats = []
        for m in cands:
            toks = tok(m.content)
            stats.append(({t: toks.count(t) for t in toks}, len(toks)))
        kw = bm25(tok(query), stats)
    if mode != "keyword":
        q = unit_vector(emb.embed_queries([query])[0], emb)
        vec = cosines(q, [unit_vector(emb.embed_passages([m.content])[0], emb) for m in cands])
    return fuse(cands, kw, vec, Weights(vector=fusion_weight(emb)), now, k, boost)
