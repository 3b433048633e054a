"""The store's approximate index against its exact search, on vectors that are
hard for a graph index: random and clustered 384-d vectors, side by side.

    python bench/ann_recall.py                    # 20,000 records, both kinds
    python bench/ann_recall.py --records 100000   # any size
    python bench/ann_recall.py --ef-factor 1      # the graph walk as wide as asked
    python bench/ann_recall.py --smoke            # 2,000 records (seconds)

A SQLite store of ``--records`` records whose vectors are given (an embedder
that looks them up: random unit vectors, or 50 clusters with noise) is
searched in vector mode, top 10, exactly (the index off) and through the
index (`retrieval.ann`, forced on from ``--records``): the first search of a
fresh `Store` each way (the index is built on its own thread, so the first
search ranks exactly and is not held by it), the time the build took, then
the median warm search and top-10 recall of the index against the exact
answers over 30 queries. Needs the ``ann`` extra (hnswlib) and numpy.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from branchmem import Store
from branchmem.retrieval import ann
from branchmem.retrieval.cache import cache_for

DIM = 384
QUERIES = 30


class Given:
    """An embedder that looks each text's vector up (`bench/ingest_vectors.py` uses it too)."""

    def __init__(self, name: str, table: dict[str, Any]) -> None:
        self.name, self.dim, self.table = name, DIM, table

    def embed_passages(self, texts: Any) -> list[Any]:
        return [self.table[t] for t in texts]

    def embed_queries(self, texts: Any) -> list[Any]:
        return [self.table[t] for t in texts]


def vectors(kind: str, n: int) -> tuple[Any, Any]:
    import numpy as np

    rng = np.random.default_rng(0)
    if kind == "random":
        return rng.normal(size=(n, DIM)), rng.normal(size=(QUERIES, DIM))
    centers = rng.normal(size=(50, DIM))
    docs = centers[rng.integers(0, 50, n)] + 0.15 * rng.normal(size=(n, DIM))
    qs = centers[rng.integers(0, 50, QUERIES)] + 0.15 * rng.normal(size=(QUERIES, DIM))
    return docs, qs


def run(kind: str, n: int, tmp: Path) -> None:
    docs, qs = vectors(kind, n)
    table = {f"doc {i}": v.tolist() for i, v in enumerate(docs)}
    table.update({f"q{i}": v.tolist() for i, v in enumerate(qs)})
    emb = Given(f"given-{kind}-{n}", table)
    path = tmp / f"{kind}.db"
    with Store(path) as s:
        s.add_events([{"id": "e0"}])
        s.add_memories([{"content": f"doc {i}", "sources": ["e0"]} for i in range(n)])
        s.search("q0", at="e0", embedder=emb, mode="vector")  # every vector made and stored
    answers: dict[bool, list[list[str]]] = {}
    warm: dict[bool, float] = {}
    first: dict[bool, float] = {}
    built = 0.0
    saved = ann.SETTINGS.enabled, ann.SETTINGS.min_visible
    ann.SETTINGS.min_visible = n
    try:
        for on in (False, True):
            ann.SETTINGS.enabled = on
            with Store(path) as s:
                t = time.perf_counter()
                s.search("q0", at="e0", embedder=emb, mode="vector")
                first[on] = time.perf_counter() - t
                t = time.perf_counter()
                while any(i.building for i in cache_for(s).ann.values()):
                    time.sleep(0.01)
                s.search("q0", at="e0", embedder=emb, mode="vector")
                if on:
                    built = time.perf_counter() - t
                times, got = [], []
                for i in range(QUERIES):
                    t = time.perf_counter()
                    hits = s.search(f"q{i}", at="e0", embedder=emb, mode="vector", cutoff="off")
                    times.append(time.perf_counter() - t)
                    got.append([h.memory.id for h in hits])
                answers[on], warm[on] = got, statistics.median(times)
    finally:
        ann.SETTINGS.enabled, ann.SETTINGS.min_visible = saved
    pairs = zip(answers[True], answers[False], strict=True)
    recall = statistics.mean(len(set(a) & set(e)) / max(len(e), 1) for a, e in pairs)
    print(
        f"{kind:9} {n:,} records (ef {ann.SETTINGS.ef_factor}x): first search exact "
        f"{first[False]:.2f} s, with the index "
        f"{first[True]:.2f} s (its build {built:.1f} s on its own thread); warm exact "
        f"{warm[False] * 1000:.1f} ms, index {warm[True] * 1000:.1f} ms "
        f"({warm[True] / warm[False]:.2f}x), recall@10 {recall:.3f}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--records", type=int, default=20_000)
    ap.add_argument("--ef-factor", type=int, default=ann.SETTINGS.ef_factor)
    ap.add_argument("--smoke", action="store_true", help="2,000 records")
    args = ap.parse_args()
    ann.SETTINGS.ef_factor = args.ef_factor
    if ann.library() is None:
        print("the ann extra (hnswlib) is not installed: nothing to measure")
        return
    n = 2000 if args.smoke else args.records
    tmp = Path(tempfile.mkdtemp(prefix="bm-ann-"))
    try:
        for kind in ("random", "clustered"):
            run(kind, n, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
