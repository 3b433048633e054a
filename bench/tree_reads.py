"""Benchmark the tree reads of a chat UI against reads they should cost like,
side by side in one run, on each backend.

    python bench/tree_reads.py            # 200,000 events, one reply regenerated 5,000 times
    python bench/tree_reads.py --smoke    # 5,000 events, 500 regenerations (seconds)

The history is a chat of ``N`` events in conversations of 50 turns, with one
user message (``hot``) answered ``K`` times (a regenerated reply). For each
backend (memory, SQLite, and PostgreSQL where ``BRANCHMEM_TEST_POSTGRES`` is
set), printed as a ratio:

- a page of 20 of ``hot``'s children (the first, and one from the middle by
  cursor), and ``versions`` of a reply in the middle, against ``get_event``
  (one lookup by id, the floor), and against the naive way: every event
  listed with ``events()`` and filtered;
- ``diff`` of two replies against the two ``memories`` reads it makes.

Figures are medians of several repeats; ratios are taken within this run.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from statistics import median

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from branchmem import Store


def timed(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return median(times)


def build(store: Store, n: int, k: int) -> None:
    batch: list[dict[str, object]] = []
    for i in range(n - k):
        parent = None if i % 50 == 0 else f"e{i - 1}"
        batch.append({"id": f"e{i}", "parent": parent, "content": f"消息 {i}"})
        if len(batch) == 5000:
            store.add_events(batch)
            batch = []
    store.add_events(batch)
    hot = _hot(n, k)
    store.add_events([{"id": f"r{j}", "parent": hot, "role": "assistant"} for j in range(k)])
    store.add_memories(
        [{"content": f"回答 {j}", "sources": [f"r{j}"]} for j in range(0, k, max(1, k // 50))]
    )


def _hot(n: int, k: int) -> str:
    """The last message of a conversation halfway through (no child of its own)."""
    return f"e{(n - k) // 2 // 50 * 50 + 49}"


def naive_children(store: Store, parent: str) -> list[str]:
    out, offset = [], 0
    while True:
        page = store.events(offset=offset, limit=10_000)
        out += [e.id for e in page if parent in e.parents]
        if len(page) < 10_000:
            return out
        offset += len(page)


def run(name: str, store: Store, n: int, k: int, repeat: int) -> None:
    t0 = time.perf_counter()
    build(store, n, k)
    hot = _hot(n, k)
    mid = f"r{k // 2}"
    print(f"{name}: {n:,} events, {k:,} replies to one message, built in "
          f"{time.perf_counter() - t0:.1f} s")  # fmt: skip
    floor = timed(lambda: store.get_event(mid), repeat)
    first = store.children(hot, limit=20)
    assert [e.id for e in first.events] == [f"r{j}" for j in range(20)]
    cursor = None
    for _ in range(k // 2 // 20):  # walk to the middle once, keep that cursor
        cursor = store.children(hot, limit=20, cursor=cursor).cursor
    v = store.versions(mid)
    assert (v.position, v.count) == (k // 2 + 1, k), v
    assert naive_children(store, hot) == [f"r{j}" for j in range(k)]
    naive = timed(lambda: naive_children(store, hot), max(1, repeat // 5))
    rows = [
        ("children, first page of 20", lambda: store.children(hot, limit=20)),
        ("children, a page from the middle", lambda: store.children(hot, limit=20, cursor=cursor)),
        ("siblings, first page of 20", lambda: store.siblings(mid, limit=20)),
        ("versions of the middle reply", lambda: store.versions(mid)),
    ]
    for label, fn in rows:
        t = timed(fn, repeat)
        print(f"  {label:<34} {t * 1e3:9.3f} ms  {t / floor:7.2f}x get_event"
              f"  {naive / t:9.1f}x faster than the naive scan ({naive * 1e3:.1f} ms)")  # fmt: skip
    a, b = "r0", f"r{k // 50 if k >= 50 else 1}"
    d = timed(lambda: store.diff(a, b), repeat)
    reads = timed(lambda: (store.memories(at=a), store.memories(at=b)), repeat)
    print(f"  {'diff of two replies':<34} {d * 1e3:9.3f} ms  {d / reads:7.2f}x its two reads")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--smoke", action="store_true", help="small sizes, a few seconds")
    args = ap.parse_args()
    n, k, repeat = (5_000, 500, 5) if args.smoke else (200_000, 5_000, 21)
    run("memory", Store(), n, k, repeat)
    with tempfile.TemporaryDirectory() as tmp, Store(os.path.join(tmp, "bench.db")) as s:
        run("sqlite", s, n, k, repeat)
    url = os.environ.get("BRANCHMEM_TEST_POSTGRES")
    if not url:
        print("postgres: skipped (BRANCHMEM_TEST_POSTGRES is not set)")
        return
    from branchmem.backends.postgres import PostgresBackend

    schema = f"bench_tree_{os.getpid()}"
    backend = PostgresBackend(url, schema=schema)
    try:
        with Store(backend=backend) as s:
            run("postgres", s, n, k, repeat)
    finally:
        import psycopg

        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


if __name__ == "__main__":
    main()
