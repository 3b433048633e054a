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
import uuid
from pathlib import Path

from branchmem import Store
from gate import ingest_alternately, make_history, plain_sqlite, sqlite_insert


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
        tmp = Path(tempfile.mkdtemp(prefix="branchmem-bench-"))
        store = Store(tmp / "gate.db")
        plain = sqlite_insert(plain_sqlite(tmp / "plain.db"))
    else:
        import psycopg

        from branchmem.backends.postgres import PostgresBackend
        from gate_postgres import copy_plain

        schema = "bm_bench_" + uuid.uuid4().hex[:8]
        store = Store(backend=PostgresBackend(args.url, schema=schema))
        conn = psycopg.connect(args.url, autocommit=True)
        plain = copy_plain(conn, schema)

        def cleanup() -> None:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")
            conn.close()

    try:
        t_ingest, t_plain = ingest_alternately(store, events, args.batch, plain)
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
