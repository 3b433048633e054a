"""Benchmark the HTTP API against the same calls in-process, side by side.

    python bench/server.py            # 400 requests per measure (about a minute)
    python bench/server.py --quick    # 100 requests per measure
    python bench/server.py --smoke    # 10 requests per measure (seconds)

A store file with a trunk of 200 events and one memory each (200 visible at
the tip) is served by ``branchmem serve --no-auth --embedder hashing`` as a
separate process on a free loopback port. For each call (``GET memories``,
``POST search``, ``POST events``) and for 1 and 16 concurrent clients
(threads, each with its own keep-alive connection) it sends N requests and
reports requests/s and p50/p99 latency; then the same calls on a `Store`
opened on a copy of the file in this process, with the same threads. The
ratio is served time over in-process time (the HTTP overhead, including JSON
and validation). Every measure stops early after --max-seconds.
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import httpx

from branchmem import Store

TRUNK = 200


def seed(path: str) -> None:
    with Store(path) as s:
        s.add_events(
            [{"id": "t0"}]
            + [
                {"id": f"t{i}", "parent": f"t{i - 1}", "content": f"消息{i}"}
                for i in range(1, TRUNK)
            ]
        )
        s.add_memories(
            [
                {"content": f"用户的第{i}条事实：喜欢城市{i % 17}", "sources": [f"t{i}"]}
                for i in range(TRUNK)
            ]
        )


def measure(
    make: Callable[[int], Callable[[int], None]], n: int, clients: int, max_seconds: float
) -> dict[str, float]:
    """Run n calls over ``clients`` threads; each thread gets its own caller."""
    lat: list[float] = []
    lock = threading.Lock()
    counter = iter(range(n))
    deadline = time.perf_counter() + max_seconds

    def worker(w: int) -> None:
        call = make(w)
        mine = []
        while time.perf_counter() < deadline:
            with lock:
                i = next(counter, None)
            if i is None:
                break
            t = time.perf_counter()
            call(i)
            mine.append(time.perf_counter() - t)
        with lock:
            lat.extend(mine)

    t0 = time.perf_counter()
    threads = [threading.Thread(target=worker, args=(w,)) for w in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    lat.sort()
    return {
        "n": len(lat),
        "rps": len(lat) / wall,
        "p50": statistics.median(lat) * 1000,
        "p99": lat[min(len(lat) - 1, int(len(lat) * 0.99))] * 1000,
    }


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--smoke", action="store_true", help="10 requests per measure")
    ap.add_argument("-n", type=int, default=None, help="requests per measure")
    ap.add_argument("--max-seconds", type=float, default=20.0)
    args = ap.parse_args()
    n = args.n or (10 if args.smoke else 100 if args.quick else 400)
    tmp = tempfile.mkdtemp(prefix="bm-bench-server-")
    served_db, local_db = os.path.join(tmp, "served.db"), os.path.join(tmp, "local.db")
    seed(served_db)
    shutil.copy(served_db, local_db)
    port = free_port()
    cmd = [sys.executable, "-m", "branchmem", "serve", "--db", served_db, "--no-auth"]
    cmd += ["--port", str(port), "--embedder", "hashing", "--no-mcp"]
    proc = subprocess.Popen(cmd, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/v1/namespaces/default"
    try:
        for _ in range(300):
            try:
                httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1)
                break
            except httpx.HTTPError:
                time.sleep(0.1)
        local = Store(local_db)
        tip = f"t{TRUNK - 1}"

        def http(kind: str) -> Callable[[int], Callable[[int], None]]:
            def make(w: int) -> Callable[[int], None]:
                c = httpx.Client(timeout=60)

                def call(i: int) -> None:
                    if kind == "memories":
                        r = c.get(f"{url}/memories", params={"at": tip})
                    elif kind == "search":
                        r = c.post(f"{url}/search", json={"query": "喜欢城市3", "at": tip, "k": 5})
                    else:
                        r = c.post(f"{url}/events", json={"id": f"h{w}-{i}", "parent": "t0"})
                    r.raise_for_status()

                return call

            return make

        def inproc(kind: str) -> Callable[[int], Callable[[int], None]]:
            def make(w: int) -> Callable[[int], None]:
                def call(i: int) -> None:
                    if kind == "memories":
                        local.memories(at=tip)
                    elif kind == "search":
                        local.search("喜欢城市3", at=tip, k=5, embedder="hashing")
                    else:
                        local.add_event(f"h{w}-{i}", parent="t0")

                return call

            return make

        rows: list[tuple[Any, ...]] = []
        for kind in ("memories", "search", "events"):
            for clients in (1, 16):
                for fn in (inproc, http):  # warm both
                    measure(fn(kind), 10, 1, args.max_seconds)
                a = measure(inproc(kind), n, clients, args.max_seconds)
                b = measure(http(kind), n, clients, args.max_seconds)
                rows.append((kind, clients, a, b))
        print(f"{n} requests per measure (or {args.max_seconds:.0f} s), {TRUNK} memories visible")
        print(
            f"{'call':<9}{'clients':>8} | {'in-process req/s':>16} {'p50 ms':>7} {'p99 ms':>7} | "
            f"{'HTTP req/s':>10} {'p50 ms':>7} {'p99 ms':>7} | {'overhead (rps ratio)':>20}"
        )
        for kind, clients, a, b in rows:
            print(
                f"{kind:<9}{clients:>8} | {a['rps']:>16.0f} {a['p50']:>7.2f} {a['p99']:>7.2f} | "
                f"{b['rps']:>10.0f} {b['p50']:>7.2f} {b['p99']:>7.2f} | "
                f"{a['rps'] / b['rps']:>19.1f}x"
            )
        local.close()
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
