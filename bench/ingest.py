"""Batch ingest alone, against the gate benchmark's plain baseline, side by side.

    python bench/ingest.py --backend sqlite     # against a plain executemany
    python bench/ingest.py --backend postgres   # against a plain COPY
    python bench/ingest.py --smoke              # 2,000 events, both backends (seconds)

The same history, batches and baselines as ``bench/gate.py --quick`` (100,000
events in batches of 50,000), without the read and writer figures, so that
ingest can be measured on its own several times in a row. Each batch is
ingested, then the same rows go through the baseline, so that both meet the
same machine conditions.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import uuid
from pathlib import Path
from typing import Any

from branchmem import Store
from gate import ingest_alternately, make_history, plain_sqlite, sqlite_insert

PG_ENV = "BRANCHMEM_TEST_POSTGRES"
DEFAULT_URL = "postgresql://postgres@127.0.0.1:5432/test"


def ingest(backend: str, url: str, events: list[dict[str, Any]], batch: int) -> None:
    """Ingest ``events`` on ``backend`` and through its baseline; print the ratio."""
    with tempfile.TemporaryDirectory(prefix="branchmem-bench-") as d:
        if backend == "sqlite":
            tmp = Path(d)
            store = Store(tmp / "gate.db")
            db = plain_sqlite(tmp / "plain.db")
            plain = sqlite_insert(db)
            cleanup = db.close
        else:
            import psycopg

            from branchmem.backends.postgres import PostgresBackend
            from gate_postgres import copy_plain

            schema = "bm_bench_" + uuid.uuid4().hex[:8]
            store = Store(backend=PostgresBackend(url, schema=schema))
            conn = psycopg.connect(url, autocommit=True)
            plain = copy_plain(conn, schema)

            def cleanup() -> None:
                conn.execute(f"DROP SCHEMA {schema} CASCADE")
                conn.close()

        try:
            t_ingest, t_plain = ingest_alternately(store, events, batch, plain)
        finally:
            store.close()
            cleanup()
    base = "executemany" if backend == "sqlite" else "COPY"
    print(
        f"{backend}: ingest of {len(events):,} events {t_ingest:.3f}s, plain {base} "
        f"{t_plain:.3f}s: {t_ingest / t_plain:.2f}x (goal <= 3x)"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", choices=["sqlite", "postgres"], default="sqlite")
    ap.add_argument("--url", default=os.environ.get(PG_ENV, DEFAULT_URL))
    ap.add_argument("--events", type=int, default=100_000)
    ap.add_argument("--batch", type=int, default=50_000)
    ap.add_argument(
        "--smoke",
        action="store_true",
        help=f"2,000 events in batches of 1,000 on SQLite, and on PostgreSQL where {PG_ENV} is set",
    )
    args = ap.parse_args()
    if not args.smoke:
        ingest(args.backend, args.url, make_history(args.events)[0], args.batch)
        return
    events = make_history(2_000)[0]
    ingest("sqlite", args.url, events, 1_000)
    url = os.environ.get(PG_ENV)
    if url:
        ingest("postgres", url, events, 1_000)
    else:
        print(f"postgres: skipped ({PG_ENV} is not set)")


if __name__ == "__main__":
    main()
