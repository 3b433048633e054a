"""`Store.search`: the gate first, then rank (`branchmem.retrieval.search`)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..ops import jobs as _jobs
from ..retrieval.search import search as _search

if TYPE_CHECKING:
    from ..retrieval.embed import Embedder
    from ..retrieval.fusion import Weights
    from ..retrieval.hit import Hit
    from ..retrieval.tokenize import Tokenizer
    from ..searchlog import QueryLog
    from . import Front


def search(
    self: Front,
    query: str,
    *,
    at: str | Sequence[str] | None,
    k: int = 10,
    namespace: str = "default",
    mode: str = "hybrid",
    embedder: Embedder | str | None = None,
    tokenizer: Tokenizer | str | None = None,
    weights: Weights | None = None,
    scope_weights: Sequence[float] | None = None,
    kind: str | Sequence[str] | None = None,
    key_prefix: str | None = None,
    meta: Mapping[str, Any] | None = None,
    now: float | None = None,
    as_of: float | None = None,
    explain: bool = False,
    log: QueryLog | str | os.PathLike[str] | None = None,
    max_embed: int | None = None,
    hops: int = 0,
    min_score: float | None = None,
    cutoff: str | None = None,
    filter: Mapping[str, Any] | None = None,
    wait: float | None = None,
) -> list[Hit]:
    """At most ``k`` records visible at ``at`` that best match ``query``, best first
    (gate first, then rank: no search returns a record the gate hides).

    ``at`` is an anchor (event id or branch name) or a scope chain of them:
    the records visible at any anchor of the chain are ranked together, and
    each hit's ``via`` names the first anchor that sees it.
    ``scope_weights`` (one positive number per anchor, default all 1)
    multiplies the score of the hits each anchor brings, e.g. ``[1.0, 0.8]``
    to prefer the conversation over the user's long-term memory.
    ``at=None`` (or ``[]``) finds nothing.

    ``mode`` is ``"hybrid"`` (keyword and vector ranks fused), ``"keyword"``
    or ``"vector"``. ``embedder`` (an `Embedder` or its name) defaults to
    ``branchmem.retrieval.default_embedder()``; ``tokenizer`` to
    ``"stem"``; ``weights`` (a `Weights`) sets how the signals mix.
    Filters apply after the gate: ``kind`` (one or a list), ``key_prefix``,
    ``meta`` (fields the record's ``meta`` must equal), ``as_of`` (created
    at or before; anchors as they were then). ``now`` (default: the clock)
    sets recency and what has expired. ``explain=True`` attaches why each
    hit is visible and how its score was made. ``log`` (a `QueryLog` or a
    path) appends the search to a JSONL query log; on a store with a
    redactor, a log given by path records a hash of the query instead.
    ``max_embed`` caps how many records without a vector this search
    embeds itself (default: no cap, or the budget of a
    `BackgroundEmbedder` attached to the store); the others are ranked by
    keyword alone (`branchmem.retrieval.search` says more). ``hops=N`` adds
    what N visible edges of the relation graph reach (docs/graph.md).
    Each hit has a ``confidence`` in [0, 1]; hits below ``min_score`` or
    far below the best (``cutoff``: ``"ratio"`` by default, ``"knee"``,
    ``"off"``) are dropped, so ``k`` is a maximum (docs/retrieval.md).
    ``filter`` takes LangGraph-style conditions, e.g. ``{"meta.topic":
    {"$in": ["food"]}, "created_at": {"$gte": t}}`` (``$eq $ne $gt $gte
    $lt $lte $in``), applied after the gate. ``wait=s`` first waits up to
    ``s`` seconds for an extraction queued at the anchor (as `memories`).

    Bad values raise `InvalidInput`; a keyword this method does not take
    raises ``TypeError``, as any Python call does.

    >>> store = Store()
    >>> _ = store.add_event("e1", content="我对花生过敏。")
    >>> _ = store.add_memory("用户对花生过敏", sources=["e1"])
    >>> [h.memory.content for h in store.search("花生", at="e1", embedder="hashing")]
    ['用户对花生过敏']
    """
    _jobs.wait_at(self._engine, namespace, at, wait)
    return _search(
        self._engine,
        query,
        at=at,
        k=k,
        namespace=namespace,
        mode=mode,
        embedder=embedder,
        tokenizer=tokenizer,
        weights=weights,
        scope_weights=scope_weights,
        kind=kind,
        key_prefix=key_prefix,
        meta=meta,
        now=now,
        as_of=as_of,
        explain=explain,
        log=log,
        max_embed=max_embed,
        hops=hops,
        min_score=min_score,
        cutoff=cutoff,
        filter=filter,
    )
