"""Single writes: one ``add_event`` / ``add_memory`` per call, against a plain
``INSERT`` of the same row, side by side.

    python bench/single_writes.py                  # SQLite: 2,000 calls of each, both durabilities
    python bench/gate.py --single-writes           # the same, from the gate benchmark
    python bench/single_writes.py --smoke          # 50 calls of each (seconds; PostgreSQL too
                                                   # where BRANCHMEM_TEST_POSTGRES is set)
    python bench/single_writes.py --backend postgres   # PostgreSQL (bench/single_writes_pg.py)

The baseline is what any application pays to store the row alone: its own
transaction (``BEGIN; INSERT; COMMIT``) into a table with the same columns
and the same unique ``(ns, id)`` index, in a file with the store's settings
(page size, WAL, the same ``synchronous``); a second baseline uses SQLite's
default 4 KiB pages. Calls alternate between the two,
so both meet the same machine conditions. Also printed: the SQL statements
one call issues (``BEGIN`` and ``COMMIT`` included), counted by SQLite's
trace hook. Last, ``retract`` in a namespace already holding many records
(``--records``) against the same plain insert: its cost must not grow with
the namespace (it once read every record, to find consolidations to take
down with it).

    python bench/single_writes.py --records 50000   # retract among 50,000 records
"""

from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from branchmem import Store
from branchmem.backends.sqlite.backend import DURABILITY

PG_ENV = "BRANCHMEM_TEST_POSTGRES"
DEFAULT_URL = "postgresql://postgres@127.0.0.1:5432/test"
CONTENT = "我下个月搬去成都，帮我记一下新地址。"

EVENTS = (
    "CREATE TABLE events (ns INTEGER NOT NULL, id TEXT NOT NULL, parents TEXT, "
    "role TEXT NOT NULL, content TEXT NOT NULL, meta TEXT, created_at REAL NOT NULL, "
    "seg INTEGER, seq INTEGER); CREATE UNIQUE INDEX events_id ON events (ns, id)"
)
RECORDS = (
    "CREATE TABLE records (ns INTEGER NOT NULL, seq INTEGER NOT NULL, id TEXT NOT NULL, "
    "kind TEXT NOT NULL, content TEXT NOT NULL, sources TEXT NOT NULL, key TEXT, "
    "importance REAL NOT NULL, meta TEXT, target TEXT, created_at REAL NOT NULL, "
    "seg INTEGER, pos INTEGER, extra TEXT, expires_at REAL, valid_from REAL, valid_to REAL, "
    "UNIQUE (ns, id))"
)


def _plain(path: Path, durability: str, page_size: int) -> sqlite3.Connection:
    db = sqlite3.connect(path, isolation_level=None)
    db.execute(f"PRAGMA page_size={page_size}")
    db.execute("PRAGMA journal_mode=WAL")
    db.execute(f"PRAGMA synchronous={DURABILITY[durability]}")
    db.executescript(EVENTS + ";" + RECORDS)
    return db


def _insert(db: sqlite3.Connection, sql: str, row: tuple[object, ...]) -> None:
    db.execute("BEGIN")
    db.execute(sql, row)
    db.execute("COMMIT")


def statements(store: Store, call: Callable[[], object]) -> int:
    """How many SQL statements ``call`` issues on the store's connection."""
    seen: list[str] = []
    db = store._engine.backend._db  # type: ignore[attr-defined]
    db.set_trace_callback(seen.append)
    try:
        call()
    finally:
        db.set_trace_callback(None)
    return len(seen)


def run(n: int, durability: str) -> dict[str, float]:
    tmp = Path(tempfile.mkdtemp(prefix="branchmem-single-"))
    store = Store(tmp / "store.db", durability=durability)
    (page_size,) = store._engine.backend._db.execute("PRAGMA page_size").fetchone()  # type: ignore[attr-defined]
    # The baseline in the store's page size, and in SQLite's default one.
    plain = _plain(tmp / "plain.db", durability, page_size)
    plain4k = _plain(tmp / "plain4k.db", durability, 4096)
    store.add_event("e0", content=CONTENT)
    t_ev = t_ev_plain = t_mem = t_mem_plain = t_ev_4k = t_mem_4k = 0.0
    ev_sql = "INSERT INTO events VALUES (?,?,?,?,?,?,?,?,?)"
    rec_sql = "INSERT INTO records VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
    for i in range(1, n + 1):
        t = time.perf_counter()
        store.add_event(f"e{i}", parent=f"e{i - 1}", content=CONTENT)
        t_ev += time.perf_counter() - t
        t = time.perf_counter()
        row = (1, f"e{i}", f"e{i - 1}", "user", CONTENT, None, time.time(), 0, i)
        _insert(plain, ev_sql, row)
        t_ev_plain += time.perf_counter() - t
        t = time.perf_counter()
        _insert(plain4k, ev_sql, row)
        t_ev_4k += time.perf_counter() - t
    for i in range(1, n + 1):
        t = time.perf_counter()
        store.add_memory(CONTENT, sources=[f"e{i}"], id=f"m{i}")
        t_mem += time.perf_counter() - t
        t = time.perf_counter()
        row = (1, i, f"m{i}", "semantic", CONTENT, f"e{i}", None, 0.5, None, None, time.time(),
               0, i, None, None, None, None)  # fmt: skip
        _insert(plain, rec_sql, row)
        t_mem_plain += time.perf_counter() - t
        t = time.perf_counter()
        _insert(plain4k, rec_sql, row)
        t_mem_4k += time.perf_counter() - t
    counts = {
        "add_event statements": statements(
            store, lambda: store.add_event("s1", parent=f"e{n}", content=CONTENT)
        ),
        "add_memory statements": statements(
            store, lambda: store.add_memory(CONTENT, sources=["s1"], id="s1m")
        ),
    }
    store.close()
    plain.close()
    plain4k.close()
    shutil.rmtree(tmp, ignore_errors=True)
    return {
        "add_event": t_ev / t_ev_plain,
        "add_memory": t_mem / t_mem_plain,
        "add_event 4k": t_ev / t_ev_4k,
        "add_memory 4k": t_mem / t_mem_4k,
        "page size": page_size,
        "add_event us": t_ev / n * 1e6,
        "add_memory us": t_mem / n * 1e6,
        **counts,
    }


def retracts(records: int, calls: int) -> dict[str, float]:
    """``calls`` retractions in a namespace of ``records`` records, alternating
    with a plain insert of one record row (durability "normal")."""
    tmp = Path(tempfile.mkdtemp(prefix="branchmem-retract-"))
    store = Store(tmp / "store.db", durability="normal")
    (page_size,) = store._engine.backend._db.execute("PRAGMA page_size").fetchone()  # type: ignore[attr-defined]
    plain = _plain(tmp / "plain.db", "normal", page_size)
    store.add_event("e0", content=CONTENT)
    for at in range(0, records, 10_000):
        part = range(at, min(at + 10_000, records))
        store.add_memories([{"content": f"{CONTENT} {i}", "sources": ["e0"], "id": f"m{i}"}
                            for i in part])  # fmt: skip
    rec_sql = "INSERT INTO records VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
    ours = floor = 0.0
    for i in range(calls):
        t = time.perf_counter()
        store.retract(f"m{i}", sources=["e0"])
        ours += time.perf_counter() - t
        t = time.perf_counter()
        row = (1, i, f"r{i}", "retraction", "", "e0", None, 0.0, None, f"m{i}", time.time(),
               0, i, None, None, None, None)  # fmt: skip
        _insert(plain, rec_sql, row)
        floor += time.perf_counter() - t
    store.close()
    plain.close()
    shutil.rmtree(tmp, ignore_errors=True)
    return {"ratio": ours / floor, "us": ours / calls * 1e6, "floor us": floor / calls * 1e6}


def report_retracts(records: int, calls: int) -> None:
    r = retracts(records, calls)
    print(
        f"retract among {records:,} records (normal, {calls} calls), x a plain insert:\n"
        f"  retract {r['ratio']:.2f}x, {r['us']:.0f} us (plain insert {r['floor us']:.0f} us)"
    )


def report(n: int) -> None:
    for durability in ("normal", "full"):
        r = run(n, durability)
        print(
            f"single writes ({durability}, {n:,} calls each), x a plain insert in "
            f"{r['page size']:.0f}-byte pages (in 4096-byte pages):   goal <= 4x\n"
            f"  add_event  {r['add_event']:.2f}x ({r['add_event 4k']:.2f}x), "
            f"{r['add_event us']:.0f} us, {r['add_event statements']:.0f} statements\n"
            f"  add_memory {r['add_memory']:.2f}x ({r['add_memory 4k']:.2f}x), "
            f"{r['add_memory us']:.0f} us, {r['add_memory statements']:.0f} statements"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--calls", type=int, default=2000, help="calls of each kind")
    ap.add_argument("--smoke", action="store_true", help="50 calls of each (seconds)")
    ap.add_argument("--backend", choices=["sqlite", "postgres"], default="sqlite")
    ap.add_argument("--url", default=os.environ.get(PG_ENV, DEFAULT_URL))
    ap.add_argument("--records", type=int, default=50_000, help="records before the retracts")
    args = ap.parse_args()
    from single_writes_pg import report as report_pg

    if args.smoke:
        report(50)
        report_retracts(2_000, 20)
        url = os.environ.get(PG_ENV)
        if url:
            report_pg(50, url)
        else:
            print(f"postgres: skipped ({PG_ENV} is not set)")
    elif args.backend == "postgres":
        report_pg(args.calls, args.url)
    else:
        report(args.calls)
        report_retracts(args.records, 200)


if __name__ == "__main__":
    main()
