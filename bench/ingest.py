"""Batch ingest alone, against the gate benchmark's plain baseline, side by side.

    python bench/ingest.py --backend sqlite     # against a plain executemany
    python bench/ingest.py --backend postgres   # against a plain COPY

The same history, batches and baselines as ``bench/gate.py --quick`` (100,000
events in batches of 50,000), without the read and writer figures, so that
ingest can be measured on its own several times in a row. Each batch is
ingested, then the same rows go through the baseline, so that both meet the
same machine conditions.
"""

from __future__ import annotations

import argparse
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from branchmem import Store
from gate import make_history, plain_sqlite


def sqlite_pair(tmp: Path) -> tuple[Store, Any]:
    plain = plain_sqlite(tmp / "plain.db")

    def insert(chunk: list[dict[str, Any]], now: float) -> None:
        plain.execute("BEGIN")
        plain.executemany(
            "INSERT INTO events VALUES (?,?,?,?,?,?,?)",
            ((1, e["id"], e["parent"], e["role"], e["content"], None, now) for e in chunk),
        )
        plain.execute("COMMIT")

    return Store(tmp / "gate.db"), insert


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", choices=["sqlite", "postgres"], default="sqlite")
    ap.add_argument("--url", default="postgresql://postgres@127.0.0.1:5432/test")
    ap.add_argument("--events", type=int, default=100_000)
    ap.add_argument("--batch", type=int, default=50_000)
    args = ap.parse_args()
    events, _, _ = make_history(args.events)
    cleanup = None
    if args.backend == "sqlite":
        store, plain = sqlite_pair(Path(tempfile.mkdtemp(prefix="branchmem-bench-")))
    else:
        import psycopg

        from branchmem.backends.postgres import PostgresBackend

        schema = "bm_bench_" + uuid.uuid4().hex[:8]
        store = Store(backend=PostgresBackend(args.url, schema=schema))
        conn = psycopg.connect(args.url, autocommit=True)
        conn.execute(
            f"CREATE TABLE {schema}.plain (ns text, id text, parents text, role text, "
            "content text, meta text, created_at float8)"
        )

        def plain(chunk: list[dict[str, Any]], now: float) -> None:
            with conn.transaction(), conn.cursor().copy(f"COPY {schema}.plain FROM STDIN") as cp:
                for e in chunk:
                    cp.write_row(
                        ("default", e["id"], e["parent"], e["role"], e["content"], None, now)
                    )

        def cleanup() -> None:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")
            conn.close()

    try:
        t_ingest = t_plain = 0.0
        now = time.time()
        for i in range(0, len(events), args.batch):
            chunk = events[i : i + args.batch]
            t = time.perf_counter()
            store.add_events(chunk)
            t_ingest += time.perf_counter() - t
            t = time.perf_counter()
            plain(chunk, now)
            t_plain += time.perf_counter() - t
    finally:
        store.close()
        if cleanup is not None:
            cleanup()
    base = "executemany" if args.backend == "sqlite" else "COPY"
    print(
        f"{args.backend}: ingest of {len(events):,} events {t_ingest:.3f}s, plain {base} "
        f"{t_plain:.3f}s: {t_ingest / t_plain:.2f}x (goal <= 3x)"
    )


if __name__ == "__main__":
    main()
