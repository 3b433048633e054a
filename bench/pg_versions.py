"""Two versions of branchmem on PostgreSQL, side by side: single writes and a
small batch, timed in lock-step.

    git -C . archive main | tar -x -C /tmp/base      # the version to compare against
    python bench/pg_versions.py --base /tmp/base/src --rounds 60
    python bench/pg_versions.py --base /tmp/base/src --rounds 20 --ingest
    python bench/pg_versions.py --smoke   # this tree against itself, 2 rounds (seconds),
                                          # where BRANCHMEM_TEST_POSTGRES is set

Two processes, one per source tree (``--base`` and this checkout's ``src``),
each with a store in a schema of its own on the same server, do the same
calls in turns: each round, 20 ``add_event``, 20 ``add_memory``, 10
``remember`` on a branch and 3 batches of 20 events, the two processes
alternating which goes first (``--ingest``: one batch of 25,000 events a
round instead, a chain in a namespace of its own, so that it streams).
Printed per kind of call: each version's
median time a call, and the median (and quartiles) over rounds of this
tree's time over the base's. Comparing a tree with itself (``--base`` this
``src``) reads 1.00 within a few hundredths.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

PG_ENV = "BRANCHMEM_TEST_POSTGRES"
CONTENT = "我下个月搬去成都，帮我记一下新地址。"
CALLS = (("add_event", 20), ("add_memory", 20), ("remember", 10), ("batch of 20", 3))
INGEST = (("batch of 25000", 1),)


def worker(url: str, durability: str) -> None:
    """Read ``kind n`` lines; do n such calls; print the seconds they took."""
    import psycopg

    from branchmem import Store
    from branchmem.backends.postgres import PostgresBackend

    schema = "bm_versions_" + uuid.uuid4().hex[:8]
    store = Store(backend=PostgresBackend(url, schema=schema, durability=durability))
    store.add_event("e0", content=CONTENT)
    store.add_event("b0")
    store.create_branch("main", at="b0")
    i = m = 0
    print("ready", flush=True)
    for line in sys.stdin:
        kind, count = line.rsplit(" ", 1)
        t = time.perf_counter()
        for _ in range(int(count)):
            if kind == "add_event":
                i += 1
                store.add_event(f"e{i}", parent=f"e{i - 1}", content=CONTENT)
            elif kind == "add_memory":
                m += 1
                store.add_memory(CONTENT, sources=[f"e{i}"], id=f"m{m}")
            elif kind == "remember":
                store.remember(CONTENT, branch="main")
            elif kind == "batch of 25000":
                i += 1
                store.add_events(
                    {"id": f"c{j}", "parent": f"c{j - 1}" if j else None, "content": CONTENT,
                     "namespace": f"big{i}"}
                    for j in range(25_000)
                )  # fmt: skip
            else:
                i += 1
                ids = [f"x{i}-{j}" for j in range(20)]
                store.add_events(
                    [
                        {"id": x, "parent": ids[j - 1] if j else f"e{i - 1}", "content": CONTENT}
                        for j, x in enumerate(ids)
                    ]
                )
                store.add_event(f"e{i}", parent=ids[-1])
        print(time.perf_counter() - t, flush=True)
    store.close()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA {schema} CASCADE")


def _start(src: str, url: str, durability: str) -> Any:
    env = dict(os.environ, PYTHONPATH=src)
    cmd = [sys.executable, __file__, "--worker", "--url", url, "--durability", durability]
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
    if p.stdout.readline().strip() != "ready":
        raise SystemExit(f"the worker on {src} did not start")
    return p


def compare(
    base: str, here: str, url: str, durability: str, rounds: int, calls: tuple[Any, ...]
) -> None:
    a, b = _start(base, url, durability), _start(here, url, durability)

    def call(p: Any, cmd: str) -> float:
        p.stdin.write(cmd + "\n")
        p.stdin.flush()
        return float(p.stdout.readline())

    times: dict[str, tuple[list[float], list[float]]] = {k: ([], []) for k, _ in calls}
    for r in range(rounds):
        for kind, n in calls:
            first, second = (a, b) if r % 2 == 0 else (b, a)
            t1, t2 = call(first, f"{kind} {n}"), call(second, f"{kind} {n}")
            ta, tb = (t1, t2) if first is a else (t2, t1)
            times[kind][0].append(ta / n)
            times[kind][1].append(tb / n)
    for p in (a, b):
        p.stdin.close()
        p.wait()
    print(f"{durability} durability, {rounds} rounds: this tree / base, median (quartiles)")
    for kind, (ta, tb) in times.items():
        ratios = sorted(y / x for x, y in zip(ta, tb, strict=True))
        q = len(ratios) // 4
        print(
            f"  {kind:<12} base {statistics.median(ta) * 1e6:6.0f} us, this "
            f"{statistics.median(tb) * 1e6:6.0f} us: {statistics.median(ratios):.3f} "
            f"({ratios[q]:.3f}-{ratios[-q - 1]:.3f})"
        )


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--base", help="the src folder of the version to compare against")
    ap.add_argument(
        "--url", default=os.environ.get(PG_ENV, "postgresql://postgres@127.0.0.1:5432/test")
    )
    ap.add_argument("--durability", choices=["normal", "full"], default="normal")
    ap.add_argument("--rounds", type=int, default=60)
    ap.add_argument("--ingest", action="store_true", help="batches of 25,000 events instead")
    ap.add_argument("--smoke", action="store_true", help="this tree against itself, 2 rounds")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        worker(args.url, args.durability)
        return
    here = str(Path(__file__).resolve().parents[1] / "src")
    if args.smoke:
        url = os.environ.get(PG_ENV)
        if url:
            compare(here, here, url, args.durability, 2, CALLS)
        else:
            print(f"postgres: skipped ({PG_ENV} is not set)")
        return
    if not args.base:
        ap.error("--base is required")
    calls = INGEST if args.ingest else CALLS
    compare(args.base, here, args.url, args.durability, args.rounds, calls)


if __name__ == "__main__":
    main()
