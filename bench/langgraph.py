"""Steps per second of a 3-node LangGraph graph with BranchmemSaver + BranchmemStore,
against LangGraph's InMemorySaver + InMemoryStore, SqliteSaver + InMemoryStore and
SqliteSaver + SqliteStore, measured side by side in one run; and the long-term
view's cost: bare ``search`` (prefix and filter) and ``put`` once the graph ran
in 1, 100 and 10,000 threads, against InMemoryStore on the same graph.

A step is one ``invoke`` of ``remember -> recall -> count`` on one thread:
``remember`` puts a fact into the store, ``recall`` searches the store's
namespace, ``count`` bumps a counter. Ten times along the way the thread forks
(``update_state`` on the checkpoint five steps back) and carries on from the
fork. branchmem and SqliteSaver write to SQLite files in a temporary folder.

    python bench/langgraph.py              # 1,000 steps
    python bench/langgraph.py --steps 200  # quicker
    python bench/langgraph.py --threads 1,100  # fewer threads
    python bench/langgraph.py --smoke      # 20 steps, 2 forks, 1 and 20 threads (seconds)

It also prints the SQL statements each of branchmem's calls runs (counted by
the connection's trace callback over the timed steps of a separate run), so
a change to the saver's layout shows in rows and round trips, not only in
times that swing with the machine.
"""

from __future__ import annotations

import argparse
import collections
import sqlite3
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, TypedDict

# This file is called langgraph.py: run as a script, its folder comes first on
# sys.path and would shadow the langgraph package.
if sys.path and Path(sys.path[0]).resolve() == Path(__file__).resolve().parent:
    sys.path.pop(0)

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore
from langgraph.store.sqlite import SqliteStore

from branchmem import Store
from branchmem.integrations.langgraph import BranchmemSaver, BranchmemStore

NS = ("user", "facts")


class State(TypedDict, total=False):
    n: int
    seen: int


def remember(state: State, *, store: BaseStore) -> dict[str, Any]:
    n = state.get("n", 0)
    store.put(NS, f"fact-{n % 50}", {"text": f"fact number {n}"})
    return {}


def recall(state: State, *, store: BaseStore) -> dict[str, Any]:
    return {"seen": len(store.search(NS, limit=10))}


def count(state: State) -> dict[str, Any]:
    return {"n": state.get("n", 0) + 1}


def build(checkpointer: Any, store: BaseStore) -> Any:
    g = StateGraph(State)
    g.add_node("remember", remember)
    g.add_node("recall", recall)
    g.add_node("count", count)
    g.add_edge(START, "remember")
    g.add_edge("remember", "recall")
    g.add_edge("recall", "count")
    g.add_edge("count", END)
    return g.compile(checkpointer=checkpointer, store=store)


def run(graph: Any, steps: int, forks: int) -> float:
    """Seconds for ``steps`` invokes with ``forks`` forks spread over them."""
    thread = {"configurable": {"thread_id": "bench"}}
    finals: list[Any] = []
    every = max(steps // (forks + 1), 6)
    start = time.perf_counter()
    config = thread
    for i in range(steps):
        if i and i % every == 0 and len(finals) > 5:
            config = graph.update_state(finals[-5], {"n": i})  # fork five steps back
        graph.invoke({"n": i}, config)
        finals.append(graph.get_state(thread).config)
        config = finals[-1]
    return time.perf_counter() - start


class Fact(TypedDict, total=False):
    i: int


def learn(state: Fact, *, store: BaseStore) -> dict[str, Any]:
    i = state.get("i", 0)
    store.put(("user", "facts"), f"fact-{i}", {"text": f"fact {i}", "topic": i % 10})
    return {}


def learner(checkpointer: Any, store: BaseStore) -> Any:
    g = StateGraph(Fact)
    g.add_node("learn", learn)
    g.add_edge(START, "learn")
    g.add_edge("learn", END)
    return g.compile(checkpointer=checkpointer, store=store)


def per_call(fn: Any, repeat: int) -> float:
    """Median seconds of one call of ``fn`` over ``repeat`` calls."""
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return sorted(times)[len(times) // 2]


def threads_case(counts: list[int], repeat: int) -> None:
    """Bare ``search`` (namespace prefix and a filter) and ``put`` on a store whose
    graph ran once in each of N threads (each learning one fact), against
    InMemoryStore + InMemorySaver on the same graph. branchmem on its memory
    backend, so that the figures are the long-term view's, not the disk's."""
    for n in counts:
        theirs, mem = InMemoryStore(), Store()
        ours = BranchmemStore(mem)
        start = time.perf_counter()
        for store, saver in ((theirs, InMemorySaver()), (ours, BranchmemSaver(mem))):
            graph = learner(saver, store)
            for i in range(n):
                graph.invoke({"i": i}, {"configurable": {"thread_id": f"t{i}"}})
        built = time.perf_counter() - start

        def search(store: BaseStore) -> Any:
            return lambda: store.search(("user",), filter={"topic": 3}, limit=10)

        def put(store: BaseStore) -> Any:
            count = iter(range(10**9))
            return lambda: store.put(("user", "prefs"), f"p{next(count)}", {"text": "x"})

        for what, make in (("search", search), ("put", put)):
            a, b = per_call(make(ours), repeat), per_call(make(theirs), repeat)
            print(
                f"{n:6d} threads  {what:6}  BranchmemStore {a * 1e6:9.1f} us  "
                f"InMemoryStore {b * 1e6:9.1f} us  ({built:.0f} s to run both graphs)"
            )
            print(f"branchmem vs InMemoryStore, {what} at {n} threads: {a / b:.2f}x the time")
        mem.close()


def statements(tmp: Path, steps: int, forks: int) -> None:
    """SQL statements per saver and store call over ``steps`` steps (after a few
    warm-up steps), counted through the backend's connection."""
    mem = Store(tmp / "statements.db")
    saver, store = BranchmemSaver(mem), BranchmemStore(mem)
    graph = build(saver, store)
    run(graph, 10, 1)
    count: collections.Counter[str] = collections.Counter()
    calls: collections.Counter[str] = collections.Counter()
    current = ["outside a call"]

    def wrap(obj: Any, name: str, label: str) -> None:
        fn = getattr(obj, name)

        def counted(*a: Any, **kw: Any) -> Any:
            outer, current[0] = current[0], label
            calls[label] += 1
            try:
                return fn(*a, **kw)
            finally:
                current[0] = outer

        setattr(obj, name, counted)

    for name in ("put", "put_writes", "get_tuple"):
        wrap(saver, name, f"saver.{name}")
    wrap(store, "batch", "store.batch")
    db = mem._engine.backend._db  # type: ignore[attr-defined]
    db.set_trace_callback(lambda _sql: count.update([current[0]]))
    try:
        run(graph, steps, forks)
    finally:
        db.set_trace_callback(None)
        mem.close()
    for label in sorted(count):
        per = f"{count[label] / calls[label]:5.1f} a call" if calls[label] else ""
        print(f"statements  {label:16} {count[label]:7d}  {per}")
    print(f"statements a step: {sum(count.values()) / steps:.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--forks", type=int, default=10)
    parser.add_argument("--threads", default="1,100,10000", help="thread counts (comma-separated)")
    parser.add_argument("--repeat", type=int, default=50, help="calls timed per figure")
    parser.add_argument("--smoke", action="store_true", help="20 steps, 2 forks (seconds)")
    args = parser.parse_args()
    if args.smoke:
        args.steps, args.forks, args.threads, args.repeat = 20, 2, "1,20", 5
    threads_case([int(x) for x in args.threads.split(",") if x], args.repeat)
    with tempfile.TemporaryDirectory() as tmp:
        mem = Store(Path(tmp) / "branchmem.db")
        conn = sqlite3.connect(Path(tmp) / "sqlite_saver.db", check_same_thread=False)
        conn2 = sqlite3.connect(Path(tmp) / "sqlite_both.db", check_same_thread=False)
        conn3 = sqlite3.connect(
            Path(tmp) / "sqlite_store.db", check_same_thread=False, isolation_level=None
        )
        sqlite_store = SqliteStore(conn3)
        sqlite_store.setup()
        systems = {
            "InMemorySaver + InMemoryStore": build(InMemorySaver(), InMemoryStore()),
            "SqliteSaver + InMemoryStore": build(SqliteSaver(conn), InMemoryStore()),
            "SqliteSaver + SqliteStore": build(SqliteSaver(conn2), sqlite_store),
            "BranchmemSaver + BranchmemStore (SQLite)": build(
                BranchmemSaver(mem), BranchmemStore(mem)
            ),
        }
        rates = {}
        for name, graph in systems.items():
            seconds = run(graph, args.steps, args.forks)
            rates[name] = args.steps / seconds
            print(f"{name:42} {rates[name]:8.1f} steps/s  ({seconds:.1f} s)")
        mem.close()
        for c in (conn, conn2, conn3):
            c.close()
        statements(Path(tmp), args.steps, args.forks)
    ours = rates["BranchmemSaver + BranchmemStore (SQLite)"]
    for base in [name for name in rates if not name.startswith("Branchmem")]:
        print(f"branchmem vs {base}: {ours / rates[base]:.2f}x the steps/s")


if __name__ == "__main__":
    main()
