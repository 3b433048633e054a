"""Benchmark the gate: segment-indexed reads against the naive reference, side by side.

    python bench/gate.py            # 1,000,000 events (a few minutes)
    python bench/gate.py --quick    # 100,000 events (under a minute)
    python bench/gate.py --durability-only --events 20000   # the durability figures alone
    python bench/gate.py --single-writes   # single add_event/add_memory vs a plain INSERT
    python bench/gate.py --backend postgres --quick   # on PostgreSQL (bench/gate_postgres.py)
    python bench/gate.py --only-forked   # the forked path alone (bench/gate_forked.py)
    python bench/gate.py --footprint 1000000   # memory held in memory (bench/gate_footprint.py)
    python bench/gate.py --smoke   # every section above at its smallest size (seconds)

History: chat-like; each new event answers the latest one, except about 2%
that fork from a uniformly chosen older event (an edit or regenerate far
back), which then becomes the latest. One memory per event (sourced from the
event, every other one also from its parent), so from the final anchor
almost every record sits on an abandoned branch.

A second history, the forked path: each user message is answered, then the
answer is regenerated (or the message edited) and the conversation goes on
from the newer one, so nearly every step starts a segment. Memories sourced
from a message and its reply (parent first) are timed against memories from
the reply alone on the same history, and a read at its tip against the same
read on a chain of the same messages (bench/gate_forked.py).

Every figure is a ratio of two timings taken in this same run (the machine
is shared and noisy); the medians of several repeats are compared.
"""

from __future__ import annotations

import argparse
import os
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from branchmem import Store
from branchmem.backends.sqlrows import SEP

PG_ENV = "BRANCHMEM_TEST_POSTGRES"


# The store's own indexes on events (`backends/sqlite/schema.py`): its key and the
# tree's children lookup (schema version 6).
EVENT_INDEXES = (
    "CREATE UNIQUE INDEX events_id ON events (ns, id)",
    "CREATE INDEX events_parents ON events (ns, parents)",
)


def plain_sqlite(path: Path, indexes: tuple[str, ...] = ()) -> sqlite3.Connection:
    """The ingest baseline's database: one events table, no index (or ``indexes``)."""
    plain = sqlite3.connect(path, isolation_level=None)
    plain.execute("PRAGMA journal_mode=WAL")
    plain.execute("PRAGMA synchronous=NORMAL")
    plain.execute(
        "CREATE TABLE events (ns INTEGER, id TEXT, parents TEXT, role TEXT, content TEXT, "
        "meta TEXT, created_at REAL)"
    )
    for sql in indexes:
        plain.execute(sql)
    return plain


def sqlite_insert(plain: sqlite3.Connection) -> Callable[[list[dict[str, Any]], float], None]:
    """The SQLite ingest baseline: a plain ``executemany`` of a batch's rows."""

    def insert(chunk: list[dict[str, Any]], now: float) -> None:
        plain.execute("BEGIN")
        plain.executemany(
            "INSERT INTO events VALUES (?,?,?,?,?,?,?)",
            ((1, e["id"], e["parent"], e["role"], e["content"], None, now) for e in chunk),
        )
        plain.execute("COMMIT")

    return insert


Insert = Callable[[list[dict[str, Any]], float], None]


def paired(plain: Insert, keyed: Insert) -> tuple[Insert, list[float]]:
    """One baseline that runs ``plain`` then ``keyed`` on each batch; the
    seconds of ``keyed`` go to the list returned (the caller subtracts them
    from the two's total to get ``plain``'s)."""
    spent = [0.0]

    def both(chunk: list[dict[str, Any]], now: float) -> None:
        plain(chunk, now)
        t = time.perf_counter()
        keyed(chunk, now)
        spent[0] += time.perf_counter() - t

    return both, spent


def ingest_alternately(
    store: Store,
    events: list[dict[str, Any]],
    batch: int,
    plain: Callable[[list[dict[str, Any]], float], None],
) -> tuple[float, float]:
    """Seconds to ingest ``events`` into ``store`` and through the baseline ``plain``.

    Batch by batch, ours then the plain insert of the same rows, so that both
    meet the same machine conditions (this machine is shared and noisy).
    """
    now = time.time()
    t_ingest = t_plain = 0.0
    for i in range(0, len(events), batch):
        chunk = events[i : i + batch]
        t = time.perf_counter()
        store.add_events(chunk)
        t_ingest += time.perf_counter() - t
        t = time.perf_counter()
        plain(chunk, now)
        t_plain += time.perf_counter() - t
    return t_ingest, t_plain


def make_history(n: int, seed: int = 7) -> tuple[list[dict[str, Any]], list[dict[str, Any]], str]:
    rng = random.Random(seed)
    events: list[dict[str, Any]] = [
        {"id": "e0", "parent": None, "role": "user", "content": "消息 0"}
    ]
    parent_of = [-1]
    tip = 0
    for i in range(1, n):
        p = rng.randrange(0, i) if rng.random() < 0.02 else tip
        parent_of.append(p)
        role = "user" if i % 2 else "assistant"
        events.append({"id": f"e{i}", "parent": f"e{p}", "role": role, "content": f"消息 {i}"})
        tip = i
    memories = []
    for i in range(n):
        src = [f"e{i}"] if i % 2 or parent_of[i] < 0 else [f"e{i}", f"e{parent_of[i]}"]
        memories.append({"id": f"m{i}", "content": f"记忆 {i}", "sources": src})
    return events, memories, f"e{tip}"


def many_namespaces(n_ns: int, repeat: int) -> None:
    """One ``add_events`` batch spanning ``n_ns`` namespaces against one call per namespace."""
    tmp = Path(tempfile.mkdtemp(prefix="branchmem-bench-"))
    for label in ("memory", "sqlite"):
        times: dict[str, list[float]] = {"batch": [], "single": []}
        for k in range(repeat):
            for how in ("batch", "single"):
                st = Store() if label == "memory" else Store(tmp / f"{how}{k}.db")
                evs = [
                    {"id": f"e{j}", "namespace": f"ns{i}", "parent": f"e{j - 1}" if j else None}
                    for i in range(n_ns)
                    for j in range(3)
                ]
                t = time.perf_counter()
                if how == "batch":
                    st.add_events(evs)
                else:
                    for i in range(n_ns):
                        st.add_events(evs[3 * i : 3 * i + 3])
                times[how].append(time.perf_counter() - t)
                st.close()
        medians(f"{label}: one batch over {n_ns} namespaces vs one call each", times, "<= 1x")
    remove_dir(tmp)


def medians(label: str, times: dict[str, list[float]], goal: str) -> None:
    """Print the ratio of the medians of ``times``' two series (the first over the second)."""
    first, second = times.values()
    print(line(label, statistics.median(first), statistics.median(second), goal))


def remove_dir(tmp: Path) -> None:
    for f in tmp.iterdir():
        os.remove(f)
    tmp.rmdir()


def naive_memories(
    parents: dict[str, list[str]], records: list[dict[str, Any]], at: str
) -> list[str]:
    """The reference: walk every parent link, then check every source of every record."""
    anc: set[str] = set()
    stack = [at]
    while stack:
        e = stack.pop()
        if e not in anc:
            anc.add(e)
            stack.extend(parents[e])
    return [r["id"] for r in records if all(s in anc for s in r["sources"])]


def naive_sqlite(db: sqlite3.Connection, at: str) -> list[str]:
    """The same reference reading an SQLite file: parent lookups, then a scan of every record."""
    anc: set[str] = set()
    stack = [at]
    while stack:
        e = stack.pop()
        if e in anc:
            continue
        anc.add(e)
        row = db.execute("SELECT parents FROM events WHERE ns=1 AND id=?", (e,)).fetchone()
        if row[0]:
            stack.extend(row[0].split(SEP))
    out = []
    for rid, sources in db.execute("SELECT id, sources FROM records WHERE ns=1 ORDER BY seq"):
        if all(s in anc for s in sources.split(SEP)):
            out.append(rid)
    return out


def timed(
    fn: Callable[[], Any], repeat: int, setup: Callable[[], Any] | None = None
) -> tuple[float, Any]:
    """Median seconds of ``repeat`` calls of ``fn`` (``setup`` runs untimed before each)."""
    times, result = [], None
    for _ in range(repeat):
        if setup is not None:
            setup()
        t = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), result


def line(label: str, a: float, b: float, goal: str) -> str:
    ratio = b / a if goal.startswith(">") else a / b
    return (
        f"  {label:<62} {a * 1e3:10.3f} ms vs {b * 1e3:10.3f} ms"
        f"  ratio {ratio:8.1f}x  (goal {goal})"
    )


def build(
    store: Store, events: list[dict[str, Any]], memories: list[dict[str, Any]], batch: int
) -> None:
    for i in range(0, len(events), batch):
        store.add_events(events[i : i + batch])
    for i in range(0, len(memories), batch):
        store.add_memories(memories[i : i + batch])


def durability(events: list[dict[str, Any]], batches: tuple[int, ...] = (1, 100, 5000)) -> None:
    """Ingest cost of ``durability="full"`` (the default: the log is synced at
    every commit) against ``"normal"`` (synced at checkpoints), per batch size.
    The two stores take the same batches alternately, so both meet the same
    machine conditions; one event per commit is where a sync costs most."""
    print(f"durability: ingest of {len(events):,} events, full vs normal, by batch size")
    for batch in batches:
        n = len(events) if batch > 1 else min(len(events), 2_000)
        tmp = Path(tempfile.mkdtemp(prefix="branchmem-durability-"))
        full = Store(tmp / "full.db")
        normal = Store(tmp / "normal.db", durability="normal")
        t_full = t_normal = 0.0
        for i in range(0, n, batch):
            chunk = events[i : i + batch]
            t = time.perf_counter()
            full.add_events(chunk)
            t_full += time.perf_counter() - t
            t = time.perf_counter()
            normal.add_events(chunk)
            t_normal += time.perf_counter() - t
        full.close()
        normal.close()
        remove_dir(tmp)
        print(
            f"  batches of {batch:>5} ({n:,} events): full {n / t_full:10,.0f} events/s, "
            f"normal {n / t_normal:10,.0f} events/s, full costs {t_full / t_normal:5.2f}x"
        )


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--quick", action="store_true", help="100,000 events instead of 1,000,000")
    ap.add_argument("--events", type=int, help="number of events (overrides --quick)")
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--backend", choices=["sqlite", "postgres"], default="sqlite")
    ap.add_argument(
        "--url",
        default=os.environ.get("BRANCHMEM_TEST_POSTGRES", "postgresql://postgres@127.0.0.1/test"),
        help="PostgreSQL database for --backend postgres (a schema of its own is made and dropped)",
    )
    ap.add_argument("--writes", type=int, default=20, help="writes per writer process")
    ap.add_argument(
        "--durability-only", action="store_true", help="only the full-vs-normal ingest figures"
    )
    ap.add_argument(
        "--fork-steps", type=int, default=4000, help="steps of the forked path (0: skip it)"
    )
    ap.add_argument(
        "--fork-messages",
        type=int,
        default=10_000,
        help="messages on the forked path whose reads are timed (0: skip them)",
    )
    ap.add_argument("--only-forked", action="store_true", help="run the forked path alone")
    ap.add_argument(
        "--footprint",
        type=int,
        metavar="N",
        help="only the memory held by N events + N memories in memory, against plain tuples",
    )
    ap.add_argument(
        "--single-writes", action="store_true", help="only single add_event/add_memory calls "
        "against a plain INSERT (bench/single_writes.py)"
    )  # fmt: skip
    ap.add_argument(
        "--smoke", action="store_true", help="every section at its smallest size (seconds), "
        f"PostgreSQL too where {PG_ENV} is set"
    )  # fmt: skip
    args = ap.parse_args()
    if args.smoke:
        smoke()
        return
    if args.single_writes:
        from single_writes import report

        report(2000)
        return
    n = args.events or (100_000 if args.quick else 1_000_000)
    if args.durability_only:
        durability(make_history(n)[0])
        return
    if args.footprint:
        from gate_footprint import footprint

        footprint(args.footprint)
        return
    if args.backend != "postgres":
        from gate_forked import forked_path, forked_reads

        if args.fork_steps:
            forked_path(args.fork_steps, args.repeat)
        if args.fork_messages:
            forked_reads(args.fork_messages, args.repeat)
        many_namespaces(400, 3)
    if args.only_forked:
        return
    batch = 50_000
    print(f"gate benchmark: {n:,} events, one memory each, batches of {batch:,}")
    events, memories, anchor = make_history(n)
    want = gate_memory(events, memories, anchor, batch, args.repeat)
    if args.backend == "postgres":
        from gate_postgres import run

        run(url=args.url, events=events, memories=memories, anchor=anchor, want=want,
            batch=batch, repeat=args.repeat, per_writer=args.writes)  # fmt: skip
        return
    gate_sqlite(events, memories, anchor, want, batch, args.repeat)
    durability(events[:20_000])


def smoke(repeat: int = 3) -> None:
    """Every section of this benchmark and of the ones it runs, at its smallest
    size (seconds; the figures say little); PostgreSQL where
    ``BRANCHMEM_TEST_POSTGRES`` is set."""
    from gate_footprint import footprint
    from gate_forked import forked_path, forked_reads
    from single_writes import report

    forked_path(60, repeat)
    forked_reads(200, repeat)
    many_namespaces(20, 1)
    n, batch = 2_000, 1_000
    print(f"gate benchmark: {n:,} events, one memory each, batches of {batch:,}")
    events, memories, anchor = make_history(n)
    want = gate_memory(events, memories, anchor, batch, repeat)
    gate_sqlite(events, memories, anchor, want, batch, repeat)
    url = os.environ.get(PG_ENV)
    if url:
        from gate_postgres import run

        run(url=url, events=events, memories=memories, anchor=anchor, want=want,
            batch=batch, repeat=repeat, per_writer=3, procs=(2,))  # fmt: skip
    else:
        print(f"postgres: skipped ({PG_ENV} is not set)")
    durability(events[:200], (1, 100))
    footprint(n)
    report(50)


def gate_memory(
    events: list[dict[str, Any]],
    memories: list[dict[str, Any]],
    anchor: str,
    batch: int,
    repeat: int,
) -> list[str]:
    """The in-memory figures; returns the ids visible at ``anchor`` (the naive reference's)."""
    parents = {e["id"]: [e["parent"]] if e["parent"] else [] for e in events}
    mem = Store()
    t = time.perf_counter()
    build(mem, events, memories, batch)
    print(f"  built in-memory store in {time.perf_counter() - t:.1f} s")
    visible = mem.memories(at=anchor)
    share = len(visible) / len(memories)
    on_path = len(mem.path(anchor))
    print(f"  anchor {anchor}: {len(visible):,} visible ({share:.3%}), {on_path:,} on its path")
    t_fast, got = timed(lambda: mem.memories(at=anchor), repeat)
    t_naive, want = timed(lambda: naive_memories(parents, memories, anchor), max(3, repeat // 2))
    assert [m.id for m in got] == want, "fast and naive answers differ"
    print(line("memory: memories(at) vs naive reference", t_fast, t_naive, ">= 1000x faster"))

    # only the visible 1% stored (same graph, same anchor)
    small = Store()
    keep = {m.id for m in visible}
    build(small, events, [m for m in memories if m["id"] in keep], batch)
    t_small, got_small = timed(lambda: small.memories(at=anchor), repeat)
    assert [m.id for m in got_small] == want
    t_big, _ = timed(lambda: mem.memories(at=anchor), repeat)
    print(
        line(
            f"memory: store with {1 - share:.1%} abandoned vs only the visible",
            t_big,
            t_small,
            "<= 2x slower",
        )
    )
    return want


def gate_sqlite(
    events: list[dict[str, Any]],
    memories: list[dict[str, Any]],
    anchor: str,
    want: list[str],
    batch: int,
    repeat: int,
) -> None:
    """The SQLite figures, checked against the naive reference's answer ``want``."""
    tmp = Path(tempfile.mkdtemp(prefix="branchmem-bench-"))
    db_path = tmp / "gate.db"
    sq = Store(db_path)
    plain_db = plain_sqlite(tmp / "plain.db")
    keyed_db = plain_sqlite(tmp / "keyed.db", EVENT_INDEXES)
    both, t_keyed = paired(sqlite_insert(plain_db), sqlite_insert(keyed_db))
    t_ingest, t_both = ingest_alternately(sq, events, batch, both)
    for i in range(0, len(memories), batch):
        sq.add_memories(memories[i : i + batch])
    print(
        line(
            "sqlite: ingest of all events vs plain executemany (no index)",
            t_ingest,
            t_both - t_keyed[0],
            "<= 3x",
        )
    )
    print(
        line(
            "  the same vs executemany into a table with the store's event indexes",
            t_ingest,
            t_keyed[0],
            "-",
        )
    )

    t_sq, got_sq = timed(lambda: sq.memories(at=anchor), repeat)
    assert [m.id for m in got_sq] == want
    ro = sqlite3.connect(db_path)
    t_naive_sq, want_sq = timed(lambda: naive_sqlite(ro, anchor), 3)
    assert want_sq == want
    print(
        line(
            "sqlite: memories(at) vs naive reference on the same file",
            t_sq,
            t_naive_sq,
            ">= 100x faster",
        )
    )

    # plainly fetching the same visible rows by primary key, building the same objects
    from branchmem.backends.sqlite import SQLiteBackend

    backend = SQLiteBackend(db_path)
    ids = [m.id for m in got_sq]

    def by_pk() -> list[Any]:
        with backend.reading():
            rows = backend.get_records("default", ids)
        return [rows[i].memory for i in ids]

    t_pk, got_pk = timed(by_pk, repeat)
    assert [m.id for m in got_pk] == ids
    print(
        line("sqlite: memories(at) vs fetching the same rows by primary key", t_sq, t_pk, "<= 3x")
    )
    backend.close()
    sq.close()
    ro.close()
    plain_db.close()
    keyed_db.close()
    size = sum(f.stat().st_size for f in tmp.iterdir())
    print(f"  sqlite files: {size / 1e6:.0f} MB in {tmp}")
    remove_dir(tmp)


if __name__ == "__main__":
    main()
