"""What the mention walk costs: ``search(..., hops=2)`` against the same search
with ``hops=0`` (the floor), on one store, side by side.

The store holds N plain memories that name 250 people, services and
libraries between them ("Alice Chen maintains svc-17 which uses Lib42 on
port 1050"), one chain, every vector stored (`prepare`), hashing embedder.
For each of ``--repeat`` rounds: a fresh `Store`'s first search with each
setting, then the median of 12 warm searches (four questions, three times).
Printed as ranges over the rounds, and the ratio hops=2 / hops=0::

    python bench/hops_cost.py [--records 20000] [--repeat 3] [--smoke]
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from branchmem import HashingEmbedder, Store
from branchmem.retrieval.search import prepare

PEOPLE = [
    f"{a} {b}"
    for a in ["Alice", "Bob", "Carol", "Dan", "Eve", "Frank", "Grace", "Heidi", "Ivan", "Judy"]
    for b in ["Chen", "Smith", "Wang", "Lopez", "Kim"]
]
SERVICES = [f"svc-{i}" for i in range(300)]
LIBRARIES = [f"Lib{i}" for i in range(200)]
VERBS = ["maintains", "deployed", "reviewed", "depends on", "migrated", "owns"]
QUESTIONS = [
    "who maintains svc-17",
    "what does Alice Chen use",
    "which port does Lib42 run on",
    "svc-5 depends on what",
]


def build(path: Path, n: int) -> None:
    rnd = random.Random(3)
    texts = [
        f"{rnd.choice(PEOPLE)} {rnd.choice(VERBS)} {rnd.choice(SERVICES)} which uses "
        f"{rnd.choice(LIBRARIES)} on port {rnd.randint(1000, 1100)} note {i}"
        for i in range(n)
    ]
    with Store(path) as s:
        s.add_events([{"id": "e0"}])
        s.add_memories([{"content": t, "sources": ["e0"]} for t in texts])
        prepare(s, at="e0", embedder=HashingEmbedder())


def measure(path: Path, hops: int) -> tuple[float, float]:
    """A fresh store's first search, and the median warm search (seconds)."""
    emb = HashingEmbedder()
    t = time.perf_counter()
    with Store(path) as s:
        s.search(QUESTIONS[0], at="e0", embedder=emb, hops=hops)
        first = time.perf_counter() - t
        warm = []
        for _ in range(3):
            for q in QUESTIONS:
                t = time.perf_counter()
                s.search(q, at="e0", embedder=emb, hops=hops)
                warm.append(time.perf_counter() - t)
    return first, statistics.median(warm)


def span(xs: list[float], unit: float = 1.0, places: int = 2) -> str:
    return f"{min(xs) * unit:.{places}f}-{max(xs) * unit:.{places}f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--records", type=int, default=20_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--smoke", action="store_true", help="500 records, one round")
    args = ap.parse_args()
    n, repeat = (500, 1) if args.smoke else (args.records, args.repeat)
    tmp = Path(tempfile.mkdtemp(prefix="bm-hops-"))
    try:
        path = tmp / "s.db"
        build(path, n)
        got: dict[int, list[tuple[float, float]]] = {0: [], 2: []}
        for _ in range(repeat):
            for hops in (0, 2):
                got[hops].append(measure(path, hops))
        for i, what in ((0, "first search"), (1, "warm search")):
            base = [r[i] for r in got[0]]
            walk = [r[i] for r in got[2]]
            ratio = [w / b for w, b in zip(walk, base, strict=True)]
            print(
                f"{what}, {n:,} visible: hops=2 {span(walk, 1000, 1)} ms vs hops=0 "
                f"{span(base, 1000, 1)} ms ratio {span(ratio)}x"
            )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
