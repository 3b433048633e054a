"""Compare the approximate vector indexes the `ann` extra may use, side by side.

    python bench/ann.py                  # 50,000 and 100,000 vectors
    python bench/ann.py --sizes 20000    # any sizes
    python bench/ann.py --smoke          # 2,000 vectors, 20 queries (seconds)

For each size: unit vectors of the benchmark's texts (`bench/search.py`,
`HashingEmbedder(256)`), then for each library that is installed (`usearch`,
`hnswlib`, `faiss-cpu`), one thread each, HNSW with 16 links per node: the
time to build the index, the median time of a top-100 query, and recall@10
against brute force (numpy). Recall is tie-aware: a returned vector counts
when its cosine is at least the exact 10th best (the texts share a small
vocabulary, so many vectors are equal). The numpy floor (matrix-vector
product and argpartition over the same vectors) is measured in the same run.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np

from search import EMB, queries, text  # the benchmark's texts and queries

FETCH = 100
K = 10
M = 16


def vectors(n: int) -> Any:
    rng = random.Random(7)
    vecs = EMB.embed_passages([text(rng, i) for i in range(n)])
    mat = np.asarray(vecs, dtype=np.float32)
    return mat / np.maximum(np.linalg.norm(mat, axis=1, keepdims=True), 1e-12)


def build_usearch(mat: Any) -> Callable[[Any], Any]:
    from usearch.index import Index

    index = Index(ndim=mat.shape[1], metric="ip", dtype="f32", connectivity=M)
    index.add(np.arange(len(mat), dtype=np.uint64), mat, threads=1)
    return lambda q: index.search(q, FETCH, threads=1).keys


def build_hnswlib(mat: Any) -> Callable[[Any], Any]:
    import hnswlib

    index = hnswlib.Index(space="ip", dim=mat.shape[1])
    index.init_index(max_elements=len(mat), ef_construction=128, M=M)
    index.set_num_threads(1)
    index.add_items(mat, np.arange(len(mat)))
    index.set_ef(FETCH + 28)
    return lambda q: index.knn_query(q, k=FETCH)[0][0]


def build_faiss(mat: Any) -> Callable[[Any], Any]:
    import faiss

    faiss.omp_set_num_threads(1)
    index = faiss.IndexHNSWFlat(mat.shape[1], M, faiss.METRIC_INNER_PRODUCT)
    index.hnsw.efConstruction = 128
    index.add(mat)
    index.hnsw.efSearch = FETCH + 28
    return lambda q: index.search(q[None, :], FETCH)[1][0]


LIBS = {"usearch": build_usearch, "hnswlib": build_hnswlib, "faiss-cpu": build_faiss}


def run(n: int, n_queries: int) -> None:
    mat = vectors(n)
    qs = np.asarray(EMB.embed_queries(queries(n_queries, seed=8)), dtype=np.float32)
    qs /= np.maximum(np.linalg.norm(qs, axis=1, keepdims=True), 1e-12)
    floor, tenth = [], []
    for q in qs:
        t = time.perf_counter()
        cos = mat @ q
        top = np.argpartition(-cos, K)[:K]
        floor.append(time.perf_counter() - t)
        tenth.append(float(cos[top].min()))
    f_ms = statistics.median(floor) * 1000
    print(f"\n{n:,} vectors of {mat.shape[1]} dims; numpy floor {f_ms:.2f} ms per query")
    for name, make in LIBS.items():
        try:
            t = time.perf_counter()
            query = make(mat)
            built = time.perf_counter() - t
        except ImportError:
            print(f"  {name:<10} not installed")
            continue
        times, recalls = [], []
        for q, last in zip(qs, tenth, strict=True):
            t = time.perf_counter()
            keys = np.asarray(query(q), dtype=np.int64)
            times.append(time.perf_counter() - t)
            got = (mat[keys[keys >= 0][:K]] @ q) >= last - 1e-6
            recalls.append(int(got.sum()) / K)
        q_ms = statistics.median(times) * 1000
        print(
            f"  {name:<10} build {built:6.1f} s, top-{FETCH} query {q_ms:6.2f} ms"
            f" ({q_ms / f_ms:.2f}x the floor), recall@{K} {statistics.mean(recalls):.3f}"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[50_000, 100_000])
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--smoke", action="store_true", help="2,000 vectors, 20 queries (seconds)")
    args = ap.parse_args()
    if args.smoke:
        args.sizes, args.queries = [2_000], 20
    for n in args.sizes:
        run(n, args.queries)


if __name__ == "__main__":
    main()
