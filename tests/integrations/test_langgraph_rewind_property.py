"""A property over real LangGraph runs: on a thread that runs, is rewound to
before a step that put a memory, and goes back to an old branch, BranchmemStore
shows exactly the memories put on the thread's current lineage. The reference
is LangGraph's own state: each run appends the fact it put to a list in the
graph state, which a checkpoint's lineage carries."""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict

import pytest

pytest.importorskip("langgraph", reason="needs 'langgraph', of the 'langgraph' extra")

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langgraph.graph import END, START, StateGraph
from langgraph.store.base import BaseStore

from branchmem import Store
from branchmem.integrations.langgraph import BranchmemSaver, BranchmemStore

NS = ("user", "facts")
CFG = {"configurable": {"thread_id": "t"}}


class State(TypedDict, total=False):
    fact: str | None
    facts: Annotated[list[str], operator.add]
    seen: list[str]


def learn(state: State, *, store: BaseStore) -> dict[str, Any]:
    fact = state.get("fact")
    if not fact:
        return {"facts": []}
    store.put(NS, fact, {"fact": fact})
    return {"facts": [fact]}


def recall(state: State, *, store: BaseStore) -> dict[str, Any]:
    return {"seen": sorted(i.key for i in store.search(NS, limit=100))}


def build(mem: Store) -> tuple[Any, BranchmemStore]:
    store = BranchmemStore(mem)
    g = StateGraph(State)
    g.add_node("learn", learn)
    g.add_node("recall", recall)
    g.add_edge(START, "learn")
    g.add_edge("learn", "recall")
    g.add_edge("recall", END)
    return g.compile(checkpointer=BranchmemSaver(mem), store=store), store


OPS = st.lists(
    st.tuples(st.sampled_from(["run", "rewind", "return"]), st.integers(0, 30)), max_size=8
)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(OPS)
def test_memories_follow_the_threads_lineage_through_rewinds_and_returns(
    ops: list[tuple[str, int]],
) -> None:
    mem = Store()
    graph, store = build(mem)
    n = 0
    for op, pick in ops:
        history = list(graph.get_state_history(CFG)) if n else []
        if op == "run" or not history:
            seen = graph.invoke({"fact": f"f{n}"}, CFG)["seen"]
            n += 1
            assert seen == sorted(graph.get_state(CFG).values["facts"])  # read in a run
        elif op == "rewind":  # before a learn step, which then puts nothing
            befores = [s for s in history if s.next == ("learn",)]
            at = befores[pick % len(befores)].config
            graph.invoke(None, graph.update_state(at, {"fact": None}))
        else:  # back to a branch's end: a new checkpoint there
            ends = [s for s in history if s.next == ()]
            graph.update_state(ends[pick % len(ends)].config, {})
        lineage = sorted(graph.get_state(CFG).values.get("facts") or [])
        assert sorted(i.key for i in store.search(NS, limit=100)) == lineage  # bare read
    mem.close()
