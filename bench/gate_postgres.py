"""The gate benchmark on PostgreSQL (``python bench/gate.py --backend postgres``).

Same history and anchor as the SQLite figures. Figures, each a ratio of two
timings taken side by side in this run:

- ingest of all events against a plain ``COPY`` of the same rows into a table
  without indexes (the goal), and against one into a table with the store's
  primary key ``(ns, id)`` (what the store adds to what the database must do);
- ``memories(at)`` against the naive reference reading the same database (a
  parent lookup per ancestor, then a scan of every record), and against
  fetching the same rows by primary key;
- write throughput (``remember`` on a branch) with 1, 4 and 8 writer processes,
  all in one namespace (serialised by its lock) and one namespace each.

Everything lives in a schema of its own, dropped at the end.
"""

from __future__ import annotations

import multiprocessing
import time
import uuid
from collections.abc import Callable
from typing import Any

from branchmem import Store
from branchmem.backends.postgres import PostgresBackend
from branchmem.backends.sqlrows import SEP
from gate import build, ingest_alternately, line, paired, timed


def naive_postgres(conn: Any, schema: str, at: str) -> list[str]:
    """The reference reading the database: parent lookups, then a scan of every record."""
    anc: set[str] = set()
    stack = [at]
    while stack:
        e = stack.pop()
        if e in anc:
            continue
        anc.add(e)
        row = conn.execute(
            f"SELECT parents FROM {schema}.events WHERE ns = 'default' AND id = %s", (e,)
        ).fetchone()
        if row[0]:
            stack.extend(row[0].split(SEP))
    rows = conn.execute(
        f"SELECT id, sources FROM {schema}.records WHERE ns = 'default' ORDER BY seq"
    ).fetchall()
    return [rid for rid, sources in rows if all(s in anc for s in sources.split(SEP))]


def _writer(url: str, schema: str, k: int, ns: str, n: int, start: Any, out: Any) -> None:
    store = Store(backend=PostgresBackend(url, schema=schema))
    branch = f"w{k}"
    store.add_event(f"root-{k}", namespace=ns)
    store.create_branch(branch, at=f"root-{k}", namespace=ns)
    start.wait()  # set once every process has started; those still connecting start late
    t = time.perf_counter()
    for i in range(n):
        store.remember(f"w{k} fact {i}", branch=branch, namespace=ns)
    out.put(time.perf_counter() - t)
    store.close()


def writers(url: str, schema: str, procs: int, per: int, shared: bool) -> float:
    """Writes per second of ``procs`` processes doing ``per`` writes each."""
    ctx = multiprocessing.get_context("spawn")
    start, out = ctx.Event(), ctx.Queue()
    tag = uuid.uuid4().hex[:6]
    ps = [
        ctx.Process(
            target=_writer,
            args=(
                url,
                schema,
                k,
                f"bench-{tag}" if shared else f"bench-{tag}-{k}",
                per,
                start,
                out,
            ),
        )
        for k in range(procs)
    ]
    for p in ps:
        p.start()
    time.sleep(1.0)
    start.set()
    # Each process times its own writes from the common start signal; the
    # slowest one's time is the wall time of the whole batch of writes.
    wall = max(out.get(timeout=600) for _ in ps)
    for p in ps:
        p.join()
    return procs * per / wall


def copy_plain(
    conn: Any, schema: str, table: str = "plain", key: str = ""
) -> Callable[[list[dict[str, Any]], float], None]:
    """The PostgreSQL ingest baseline: a plain ``COPY`` of a batch's rows into
    ``{schema}.{table}`` (made here), without an index, or with ``key`` (such
    as ``"PRIMARY KEY (ns, id)"``)."""
    conn.execute(
        f"CREATE TABLE {schema}.{table} (ns text, id text, parents text, role text, "
        f"content text, meta text, created_at float8{', ' + key if key else ''})"
    )

    def copy(chunk: list[dict[str, Any]], now: float) -> None:
        with conn.transaction(), conn.cursor().copy(f"COPY {schema}.{table} FROM STDIN") as cp:
            for e in chunk:
                cp.write_row(("default", e["id"], e["parent"], e["role"], e["content"], None, now))

    return copy


def two_baselines(
    conn: Any, schema: str
) -> tuple[Callable[[list[dict[str, Any]], float], None], list[float]]:
    """The plain ``COPY`` of each batch, then the same into a table with the
    store's primary key ``(ns, id)``, whose seconds go to the list returned
    (the caller subtracts them from the two's total)."""
    return paired(
        copy_plain(conn, schema), copy_plain(conn, schema, "keyed", "PRIMARY KEY (ns, id)")
    )


def run(
    url: str,
    events: list[dict[str, Any]],
    memories: list[dict[str, Any]],
    anchor: str,
    want: list[str],
    batch: int,
    repeat: int,
    per_writer: int,
    procs: tuple[int, ...] = (1, 4, 8),
) -> None:
    import psycopg

    schema = "bm_bench_" + uuid.uuid4().hex[:8]
    backend = PostgresBackend(url, schema=schema)
    pg = Store(backend=backend)
    plain = psycopg.connect(url, autocommit=True)
    try:
        both, t_keyed = two_baselines(plain, schema)
        t_ingest, t_both = ingest_alternately(pg, events, batch, both)
        build(pg, [], memories, batch)
        print(
            line(
                "postgres: ingest of all events vs plain COPY (no index)",
                t_ingest,
                t_both - t_keyed[0],
                "<= 3x",
            )
        )
        print(line("  the same vs a COPY into a table keyed (ns, id)", t_ingest, t_keyed[0], "-"))

        t_pg, got = timed(lambda: pg.memories(at=anchor), repeat)
        assert [m.id for m in got] == want, "postgres and naive answers differ"
        t_naive, want_pg = timed(lambda: naive_postgres(plain, schema, anchor), 1)
        assert want_pg == want
        print(
            line(
                "postgres: memories(at) vs naive reference on the same database",
                t_pg,
                t_naive,
                ">= 100x faster",
            )
        )

        ids = [m.id for m in got]

        def by_pk() -> list[Any]:
            with backend.reading():
                rows = backend.get_records("default", ids)
            return [rows[i].memory for i in ids]

        t_pk, got_pk = timed(by_pk, repeat)
        assert [m.id for m in got_pk] == ids
        print(
            line(
                "postgres: memories(at) vs fetching the same rows by primary key",
                t_pg,
                t_pk,
                "<= 3x",
            )
        )

        for shared in (True, False):
            where = "one namespace" if shared else "a namespace each"
            rates = [writers(url, schema, p, per_writer, shared) for p in procs]
            print(
                f"  postgres: writes/s ({per_writer} remember() per process, {where}): "
                + ", ".join(f"{p} proc {r:.0f}" for p, r in zip(procs, rates, strict=True))
            )
    finally:
        pg.close()
        plain.execute(f"DROP SCHEMA {schema} CASCADE")
        plain.close()
