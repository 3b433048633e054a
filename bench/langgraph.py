"""Steps per second of a 3-node LangGraph graph with BranchmemSaver + BranchmemStore,
against LangGraph's InMemorySaver + InMemoryStore and SqliteSaver + InMemoryStore,
measured side by side in one run.

A step is one ``invoke`` of ``remember -> recall -> count`` on one thread:
``remember`` puts a fact into the store, ``recall`` searches the store's
namespace, ``count`` bumps a counter. Ten times along the way the thread forks
(``update_state`` on the checkpoint five steps back) and carries on from the
fork. branchmem and SqliteSaver write to SQLite files in a temporary folder.

    python bench/langgraph.py              # 1,000 steps
    python bench/langgraph.py --steps 200  # quicker
    python bench/langgraph.py --smoke      # 20 steps, 2 forks (seconds)
"""

from __future__ import annotations

import argparse
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--forks", type=int, default=10)
    parser.add_argument("--smoke", action="store_true", help="20 steps, 2 forks (seconds)")
    args = parser.parse_args()
    if args.smoke:
        args.steps, args.forks = 20, 2
    with tempfile.TemporaryDirectory() as tmp:
        mem = Store(Path(tmp) / "branchmem.db")
        conn = sqlite3.connect(Path(tmp) / "sqlite_saver.db", check_same_thread=False)
        systems = {
            "InMemorySaver + InMemoryStore": build(InMemorySaver(), InMemoryStore()),
            "SqliteSaver + InMemoryStore": build(SqliteSaver(conn), InMemoryStore()),
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
        conn.close()
    ours = rates["BranchmemSaver + BranchmemStore (SQLite)"]
    for base in ("InMemorySaver + InMemoryStore", "SqliteSaver + InMemoryStore"):
        print(f"branchmem vs {base}: {ours / rates[base]:.2f}x the steps/s")


if __name__ == "__main__":
    main()
