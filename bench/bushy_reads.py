"""Reads and single writes as a bushy store grows, the visible set fixed.

A trunk of 2,000 events (the anchor its last, one memory each: 2,000
visible) and, off every trunk event, a side branch of (N - 2,000) / 2,000
events, one memory each, written before the trunk goes on: each side branch
continues its trunk event's segment, so the anchor's ranges cut 2,000
segments that grow longer with N (SQLite with ``durability="normal"``).
``memories(at)`` at the anchor (warm, the fastest of ``--repeat``: on a
loaded machine the median measures the load) and one
more ``add_event`` on a side branch (the median of 200) are timed at a
small and a large N on the memory and SQLite backends; printed is each
time and the ratio large / small (flat is 1.0x)::

    python bench/bushy_reads.py [--small 10000] [--large 300000] [--smoke]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from branchmem import Store

TRUNK = 2000


def fill(s: Store, n: int) -> str:
    side = max(1, (n - TRUNK) // TRUNK)
    evs: list[dict[str, str]] = []
    for i in range(TRUNK):
        evs.append({"id": f"t{i}", **({"parent": f"t{i - 1}"} if i else {})})
        evs += [{"id": f"s{i}.0", "parent": f"t{i}"}]
        evs += [{"id": f"s{i}.{j}", "parent": f"s{i}.{j - 1}"} for j in range(1, side)]
    for i in range(0, len(evs), 50_000):
        part = evs[i : i + 50_000]
        s.add_events(part)
        s.add_memories([{"content": f"fact of {e['id']}", "sources": [e["id"]]} for e in part])
    return f"t{TRUNK - 1}"


def measure(s: Store, anchor: str, repeat: int) -> tuple[float, float]:
    assert len(s.memories(at=anchor)) == TRUNK
    reads = []
    for _ in range(repeat):
        t = time.perf_counter()
        s.memories(at=anchor)
        reads.append(time.perf_counter() - t)
    writes = []
    for i in range(200):
        t = time.perf_counter()
        s.add_event(f"w{i}", parent="s3.0" if i == 0 else f"w{i - 1}")
        writes.append(time.perf_counter() - t)
    return min(reads), statistics.median(writes)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--small", type=int, default=10_000)
    ap.add_argument("--large", type=int, default=300_000)
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--smoke", action="store_true", help="3,000 and 6,000 events")
    args = ap.parse_args()
    sizes = (3000, 6000) if args.smoke else (args.small, args.large)
    repeat = 3 if args.smoke else args.repeat
    tmp = Path(tempfile.mkdtemp(prefix="bm-bushy-"))
    try:
        for backend in ("memory", "sqlite"):
            got = []
            for n in sizes:
                with (
                    Store()
                    if backend == "memory"
                    else Store(tmp / f"b{n}.db", durability="normal") as s
                ):
                    got.append(measure(s, fill(s, n), repeat))
            (r0, w0), (r1, w1) = got
            print(
                f"  {backend:6} memories(at), {TRUNK:,} visible: {sizes[0]:,} events "
                f"{r0 * 1e3:.2f} ms, {sizes[1]:,} {r1 * 1e3:.2f} ms: {r1 / r0:.2f}x"
            )
            print(
                f"  {backend:6} add_event: {sizes[0]:,} events {w0 * 1e3:.3f} ms, "
                f"{sizes[1]:,} {w1 * 1e3:.3f} ms: {w1 / w0:.2f}x"
            )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
