"""Write throughput on PostgreSQL with several writer processes.

``remember`` on a branch (one event and one memory per call, in one
transaction) by 1, 4 and 8 processes at once, all in one namespace (its
writers take turns on the namespace's lock) and in a namespace each (the
case of a multi-tenant server), against the same processes each committing
the same two rows into plain tables with the same primary keys, run side by
side in each repeat. Prints the range over repeats of writes/s and the range
of the ratio to the plain rows::

    python bench/pg_writers.py [--repeat 3] [--writes 200] [--smoke]

Everything lives in a schema of its own, dropped at the end.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import sys
import time
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from gate_postgres import _writer

PG_ENV = "BRANCHMEM_TEST_POSTGRES"
PLAIN = (
    "CREATE TABLE IF NOT EXISTS {s}.plain_events (ns text, id text, parents text, content text, "
    "created_at float8, PRIMARY KEY (ns, id)); "
    "CREATE TABLE IF NOT EXISTS {s}.plain_records (ns text, id text, content text, sources text, "
    "created_at float8, PRIMARY KEY (ns, id))"
)


def _plain_writer(url: str, schema: str, k: int, ns: str, n: int, start: Any, out: Any) -> None:
    import psycopg

    conn = psycopg.connect(url, autocommit=True)
    start.wait()
    t = time.perf_counter()
    for i in range(n):
        with conn.transaction():
            now = time.time()
            conn.execute(
                f"INSERT INTO {schema}.plain_events VALUES (%s, %s, %s, %s, %s)",
                (ns, f"w{k}-e{i}", f"w{k}-e{i - 1}", f"w{k} fact {i}", now),
            )
            conn.execute(
                f"INSERT INTO {schema}.plain_records VALUES (%s, %s, %s, %s, %s)",
                (ns, f"w{k}-m{i}", f"w{k} fact {i}", f"w{k}-e{i}", now),
            )
    out.put(time.perf_counter() - t)
    conn.close()


def rate(target: Any, url: str, schema: str, procs: int, per: int, shared: bool) -> float:
    """Writes per second of ``procs`` processes doing ``per`` writes each,
    timed from one start signal to the last process's end."""
    ctx = multiprocessing.get_context("spawn")
    start, out = ctx.Event(), ctx.Queue()
    tag = uuid.uuid4().hex[:6]
    ps = [
        ctx.Process(
            target=target,
            args=(url, schema, k, f"b-{tag}" if shared else f"b-{tag}-{k}", per, start, out),
        )
        for k in range(procs)
    ]
    for p in ps:
        p.start()
    time.sleep(1.5)  # every process connected before the start
    start.set()
    wall = max(out.get(timeout=600) for _ in ps)
    for p in ps:
        p.join()
    return procs * per / wall


def span(xs: list[float], fmt: str = "{:.0f}") -> str:
    return f"{fmt.format(min(xs))}-{fmt.format(max(xs))}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--writes", type=int, default=200, help="writes per process")
    ap.add_argument("--url", default=os.environ.get(PG_ENV, ""))
    ap.add_argument("--procs", default="1,4,8", help="writer process counts, comma-separated")
    ap.add_argument("--smoke", action="store_true", help="a few writes, 1 and 2 processes")
    args = ap.parse_args()
    if not args.url:
        print(f"postgres: skipped ({PG_ENV} is not set)")
        return
    procs, per, repeat = (
        ((1, 2), 5, 1)
        if args.smoke
        else (tuple(int(p) for p in args.procs.split(",")), args.writes, args.repeat)
    )
    import psycopg

    from branchmem import Store
    from branchmem.backends.postgres import PostgresBackend

    schema = "bm_writers_" + uuid.uuid4().hex[:8]
    Store(backend=PostgresBackend(args.url, schema=schema)).close()
    plain = psycopg.connect(args.url, autocommit=True)
    plain.execute(PLAIN.format(s=schema))
    print(f"pg_writers: remember() x {per} per process, {repeat} repeats")
    try:
        for shared in (True, False):
            where = "one namespace" if shared else "a namespace each"
            for p in procs:
                ours, base = [], []
                for _ in range(repeat):
                    ours.append(rate(_writer, args.url, schema, p, per, shared))
                    base.append(rate(_plain_writer, args.url, schema, p, per, shared))
                ratios = [b / o for o, b in zip(ours, base, strict=True)]
                print(
                    f"  {where:17} {p} proc: writes/s {span(ours)} vs plain rows {span(base)} "
                    f"ratio {span(ratios, '{:.2f}')}x"
                )
    finally:
        plain.execute(f"DROP SCHEMA {schema} CASCADE")
        plain.close()


if __name__ == "__main__":
    main()
