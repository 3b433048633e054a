"""Single writes on PostgreSQL (``python bench/single_writes.py --backend postgres``).

One ``add_event``, ``add_memory`` and ``remember`` on a branch per call,
against what an application pays to store the row alone: its own transaction
(``BEGIN; INSERT; COMMIT``, one round trip each) into a table with the same
columns and primary key ``(ns, id)``, on a connection with the store's
``synchronous_commit``. Calls alternate with the baseline, so both meet the
same machine conditions. Also printed: the statements one call sends
(``BEGIN`` and ``COMMIT`` not counted) and its round trips to the server.
Everything lives in a schema of its own, dropped at the end.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Mapping
from typing import Any

from branchmem import Store
from branchmem.backends.postgres import PostgresBackend

CONTENT = "我下个月搬去成都，帮我记一下新地址。"
EVENTS = (
    "CREATE TABLE {s}.plain_events (ns text NOT NULL, id text NOT NULL, parents text, "
    "role text NOT NULL, content text NOT NULL, meta text, created_at double precision NOT NULL, "
    "seg bigint, seq bigint, PRIMARY KEY (ns, id))"
)
RECORDS = (
    "CREATE TABLE {s}.plain_records (ns text NOT NULL, id text NOT NULL, seq bigint NOT NULL, "
    "kind text NOT NULL, content text NOT NULL, sources text NOT NULL, key text, "
    "importance double precision NOT NULL, meta text, target text, "
    "created_at double precision NOT NULL, seg bigint, pos bigint, extra text, "
    "expires_at double precision, valid_from double precision, valid_to double precision, "
    "PRIMARY KEY (ns, id))"
)


class _Count:
    """Counts the statements a store sends, and its round trips (flushes)."""

    def __init__(self) -> None:
        self.statements = 0

    def __call__(self, sql: str, params: Mapping[str, Any]) -> None:
        self.statements += 1


def _round_trips(b: PostgresBackend, call: Callable[[], object]) -> int:
    trips = 0
    real = b._flush

    def counted() -> Any:
        nonlocal trips
        trips += 1
        return real()

    b._flush = counted  # type: ignore[method-assign]
    try:
        call()
    finally:
        del b._flush
    return trips


def run(n: int, url: str, durability: str) -> dict[str, float]:
    import psycopg

    schema = "bm_single_" + uuid.uuid4().hex[:8]
    count = _Count()
    b = PostgresBackend(url, schema=schema, durability=durability, trace=count)
    store = Store(backend=b)
    sync = "off" if durability == "normal" else "on"
    plain = psycopg.connect(url, autocommit=True, options=f"-c synchronous_commit={sync}")
    plain.execute(EVENTS.format(s=schema))
    plain.execute(RECORDS.format(s=schema))
    ev_sql = f"INSERT INTO {schema}.plain_events VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s)"
    rec_sql = (
        f"INSERT INTO {schema}.plain_records VALUES "
        "(%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s)"
    )

    def insert(sql: str, row: tuple[object, ...]) -> None:
        with plain.transaction():
            plain.execute(sql, row)

    store.add_event("e0", content=CONTENT)
    store.add_event("b0", content=CONTENT)
    store.create_branch("main", at="b0")
    t = dict.fromkeys(("ev", "ev0", "mem", "mem0", "rem", "rem0"), 0.0)
    for i in range(1, n + 1):
        a = time.perf_counter()
        store.add_event(f"e{i}", parent=f"e{i - 1}", content=CONTENT)
        t["ev"] += time.perf_counter() - a
        a = time.perf_counter()
        insert(ev_sql, ("d", f"e{i}", f"e{i - 1}", "user", CONTENT, None, time.time(), 0, i))
        t["ev0"] += time.perf_counter() - a
    for i in range(1, n + 1):
        a = time.perf_counter()
        store.add_memory(CONTENT, sources=[f"e{i}"], id=f"m{i}")
        t["mem"] += time.perf_counter() - a
        a = time.perf_counter()
        row = ("d", f"m{i}", i, "semantic", CONTENT, f"e{i}", None, 0.5, None, None,
               time.time(), 0, i, None, None, None, None)  # fmt: skip
        insert(rec_sql, row)
        t["mem0"] += time.perf_counter() - a
    for i in range(1, n + 1):
        a = time.perf_counter()
        store.remember(CONTENT, branch="main", id=f"r{i}")
        t["rem"] += time.perf_counter() - a
        a = time.perf_counter()
        insert(ev_sql, ("d", f"r{i}", "x", "user", CONTENT, None, time.time(), 0, i))
        t["rem0"] += time.perf_counter() - a
    calls = {
        "add_event": lambda: store.add_event("s1", parent=f"e{n}", content=CONTENT),
        "add_memory": lambda: store.add_memory(CONTENT, sources=["s1"], id="s1m"),
        "remember": lambda: store.remember(CONTENT, branch="main", id="s1r"),
    }
    shape: dict[str, float] = {}
    for name, call in calls.items():
        before = count.statements
        shape[f"{name} trips"] = _round_trips(b, call)
        shape[f"{name} statements"] = count.statements - before
    store.close()
    plain.execute(f"DROP SCHEMA {schema} CASCADE")
    plain.close()
    return {
        "add_event": t["ev"] / t["ev0"],
        "add_memory": t["mem"] / t["mem0"],
        "remember": t["rem"] / t["rem0"],
        "add_event us": t["ev"] / n * 1e6,
        "add_memory us": t["mem"] / n * 1e6,
        "remember us": t["rem"] / n * 1e6,
        "plain us": (t["ev0"] + t["mem0"] + t["rem0"]) / (3 * n) * 1e6,
        **shape,
    }


def report(n: int, url: str) -> None:
    for durability in ("normal", "full"):
        r = run(n, url, durability)
        print(
            f"postgres single writes ({durability}, {n:,} calls each), x a plain one-row "
            f"transaction ({r['plain us']:.0f} us):"
        )
        for name in ("add_event", "add_memory", "remember"):
            print(
                f"  {name:<10} {r[name]:.2f}x, {r[name + ' us']:.0f} us, "
                f"{r[name + ' statements']:.0f} statements in {r[name + ' trips']:.0f} round trips"
            )
