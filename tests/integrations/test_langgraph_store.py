"""BranchmemStore inside real LangGraph runs: forks, parallel tasks (Send),
subgraphs, interrupts and resume, update_state(as_node=), and bare reads (the
long-term view; refused with shared=False)."""

from __future__ import annotations

import importlib.util
import operator
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any, TypedDict

import pytest

pytest.importorskip("langgraph")

from langgraph.graph import START, StateGraph
from langgraph.store.base import BaseStore
from langgraph.types import Command, Send, interrupt

from branchmem import InvalidInput, Store
from branchmem.integrations.langgraph import BranchmemSaver, BranchmemStore

ROOT = Path(__file__).resolve().parents[2]
NS = ("user", "facts")


@pytest.fixture(params=["memory", "sqlite"])
def mem(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    store = Store() if request.param == "memory" else Store(tmp_path / "agent.db")
    yield store
    store.close()


def _example() -> Any:
    path = ROOT / "examples" / "langgraph_fork.py"
    spec = importlib.util.spec_from_file_location("langgraph_fork", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _cities(store: BaseStore) -> list[str]:
    return sorted(item.value["city"] for item in store.search(NS))


def test_fork_scenario_recalls_only_its_own_branch(mem: Store) -> None:
    ex = _example()
    ours = ex.scenario(ex.build(BranchmemSaver(mem), BranchmemStore(mem)))
    assert ours == {
        "first run": ["成都"],
        "fork (杭州)": ["杭州"],
        "first branch again": ["成都"],
    }


def test_in_memory_store_leaks_in_the_same_scenario() -> None:
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.store.memory import InMemoryStore

    ex = _example()
    theirs = ex.scenario(ex.build(InMemorySaver(), InMemoryStore()))
    assert theirs["fork (杭州)"] == ["成都", "杭州"]


def test_views_at_checkpoints_and_the_no_anchor_rule(mem: Store) -> None:
    ex = _example()
    store = BranchmemStore(mem)
    graph = ex.build(BranchmemSaver(mem), store)
    config = {"configurable": {"thread_id": "t"}}
    graph.invoke({"city": "成都"}, config)
    first_final = graph.get_state(config).config
    before = next(s for s in graph.get_state_history(config) if s.next == ("remember",))
    graph.invoke(None, graph.update_state(before.config, {"city": "杭州"}))
    assert _cities(store.at(config)) == ["杭州"]  # the thread's newest checkpoint
    assert _cities(store.at(first_final)) == ["成都"]
    assert _cities(store.at(before.config)) == []  # before anything was remembered
    assert _cities(store) == ["杭州"]  # bare: the long-term view, the thread's head
    apart = BranchmemStore(mem, shared=False)
    with pytest.raises(InvalidInput, match=r"store\.at\(config\)"):
        apart.search(NS)
    with pytest.raises(InvalidInput, match="outside a LangGraph run"):
        apart.put(NS, "k", {"city": "x"})
    with pytest.raises(InvalidInput, match="no checkpoint"):
        store.at({"configurable": {"thread_id": "nobody"}})
    with pytest.raises(InvalidInput, match="root graph"):
        store.at({"configurable": {"thread_id": "t", "checkpoint_ns": "inner:1"}})


def test_a_run_that_saves_no_checkpoints_is_refused(mem: Store) -> None:
    ex = _example()
    graph = ex.build(BranchmemSaver(mem), BranchmemStore(mem, wait_s=0.2))
    with pytest.raises(InvalidInput, match="durability"):
        graph.invoke({"city": "成都"}, {"configurable": {"thread_id": "t"}}, durability="exit")


class Chat(TypedDict, total=False):
    city: str
    seen: list[str]
    cities: Annotated[list[str], operator.add]


def _recall(state: Chat, *, store: BaseStore) -> dict[str, Any]:
    return {"seen": _cities(store)}


def _then_recall(mem: Store, name: str, node: Any) -> Any:
    """START → ``name`` → recall, compiled on branchmem."""
    g = StateGraph(Chat)
    g.add_node(name, node)
    g.add_node("recall", _recall)
    g.add_edge(START, name)
    g.add_edge(name, "recall")
    return g.compile(checkpointer=BranchmemSaver(mem), store=BranchmemStore(mem))


def test_delete_is_a_gated_retraction(mem: Store) -> None:
    def act(state: Chat, *, store: BaseStore) -> dict[str, Any]:
        if state["city"] == "-":
            store.delete(NS, "home")
        else:
            store.put(NS, "home", {"city": state["city"]})
        return {}

    graph = _then_recall(mem, "act", act)
    config = {"configurable": {"thread_id": "t"}}
    graph.invoke({"city": "成都"}, config)
    kept = graph.get_state(config).config
    assert graph.invoke({"city": "-"}, config)["seen"] == []  # deleted on this branch
    # Fork from the first run's end: the delete is not on this branch.
    assert graph.invoke(None, kept)["seen"] == ["成都"]
    assert graph.invoke({"city": "杭州"}, kept)["seen"] == ["杭州"]  # overwrite
    assert _cities(BranchmemStore(mem).at(kept)) == ["成都"]


def test_parallel_tasks_in_one_step_with_send(mem: Store) -> None:
    def fan_out(state: Chat) -> list[Send]:
        return [Send("remember", {"city": c}) for c in ("成都", "杭州")]

    def remember(state: Chat, *, store: BaseStore) -> dict[str, Any]:
        store.put(NS, state["city"], {"city": state["city"]})
        # read-your-writes inside a task, and nothing of the sibling task
        return {"cities": _cities(store)}

    g = StateGraph(Chat)
    g.add_node("remember", remember)
    g.add_node("recall", _recall)
    g.add_conditional_edges(START, fan_out, ["remember"])
    g.add_edge("remember", "recall")
    graph = g.compile(checkpointer=BranchmemSaver(mem), store=BranchmemStore(mem))
    config = {"configurable": {"thread_id": "t"}}
    out = graph.invoke({"cities": []}, config)
    assert sorted(out["cities"]) == ["成都", "杭州"]  # each task saw only its own write
    assert out["seen"] == ["成都", "杭州"]  # the next step descends from both tasks
    first = list(graph.get_state_history(config))[-1].config
    assert _cities(BranchmemStore(mem).at(first)) == []


def test_subgraph_writes_are_seen_by_the_parent_branch_only(mem: Store) -> None:
    def sub_remember(state: Chat, *, store: BaseStore) -> dict[str, Any]:
        store.put(NS, "home", {"city": state["city"]})
        return {}

    sub = StateGraph(Chat)
    sub.add_node("sub_remember", sub_remember)
    sub.add_node("sub_recall", _recall)  # a later step of the subgraph sees it
    sub.add_edge(START, "sub_remember")
    sub.add_edge("sub_remember", "sub_recall")
    g = StateGraph(Chat)
    g.add_node("inner", sub.compile())
    g.add_node("recall", lambda s, *, store: {"cities": _cities(store)})
    g.add_edge(START, "inner")
    g.add_edge("inner", "recall")
    graph = g.compile(checkpointer=BranchmemSaver(mem), store=BranchmemStore(mem))
    config = {"configurable": {"thread_id": "t"}}
    out = graph.invoke({"city": "成都"}, config)
    assert out["seen"] == ["成都"] and out["cities"] == ["成都"]
    before = next(s for s in graph.get_state_history(config) if s.next == ("inner",))
    out2 = graph.invoke(None, graph.update_state(before.config, {"city": "杭州"}))
    assert out2["cities"] == ["杭州"]
    sub_ns = [
        t.config["configurable"]["checkpoint_ns"]
        for t in BranchmemSaver(mem).list({"configurable": {"thread_id": "t"}})
    ]
    assert any(ns.startswith("inner:") for ns in sub_ns)  # subgraph checkpoints are kept


def test_interrupt_and_resume(mem: Store) -> None:
    def ask(state: Chat, *, store: BaseStore) -> dict[str, Any]:
        store.put(NS, "draft", {"city": state["city"]})
        answer = interrupt("confirm?")
        store.put(NS, "confirmed", {"city": answer})
        return {}

    graph = _then_recall(mem, "ask", ask)
    config = {"configurable": {"thread_id": "t"}}
    graph.invoke({"city": "成都"}, config)
    assert graph.get_state(config).next == ("ask",)
    out = graph.invoke(Command(resume="杭州"), config)
    assert out["seen"] == ["成都", "杭州"]


def test_update_state_as_node_skips_the_abandoned_write(mem: Store) -> None:
    ex = _example()
    graph = ex.build(BranchmemSaver(mem), BranchmemStore(mem))
    config = {"configurable": {"thread_id": "t"}}
    graph.invoke({"city": "成都"}, config)
    before = next(s for s in graph.get_state_history(config) if s.next == ("remember",))
    # As if `remember` had run on a new branch, without writing anything.
    fork = graph.update_state(before.config, {"city": "杭州"}, as_node="remember")
    assert graph.get_state(fork).next == ("recall",)
    assert graph.invoke(None, fork)["recalled"] == []


def test_items_persist_in_a_store_file(tmp_path: Path) -> None:
    ex = _example()
    path = tmp_path / "agent.db"
    with Store(path) as mem:
        graph = ex.build(BranchmemSaver(mem), BranchmemStore(mem))
        graph.invoke({"city": "成都"}, {"configurable": {"thread_id": "t"}})
    with Store(path) as mem:
        view = BranchmemStore(mem).at({"configurable": {"thread_id": "t"}})
        assert _cities(view) == ["成都"]


def test_an_async_run_with_async_store_calls(mem: Store) -> None:
    import asyncio

    async def remember(state: Chat, *, store: BaseStore) -> dict[str, Any]:
        await store.aput(NS, "home", {"city": state["city"]})
        return {}

    async def recall(state: Chat, *, store: BaseStore) -> dict[str, Any]:
        return {"seen": sorted(i.value["city"] for i in await store.asearch(NS))}

    g = StateGraph(Chat)
    g.add_node("remember", remember)
    g.add_node("recall", recall)
    g.add_edge(START, "remember")
    g.add_edge("remember", "recall")
    graph = g.compile(checkpointer=BranchmemSaver(mem), store=BranchmemStore(mem))
    config = {"configurable": {"thread_id": "t"}}

    async def scenario() -> tuple[list[str], list[str]]:
        first = (await graph.ainvoke({"city": "成都"}, config))["seen"]
        history = [s async for s in graph.aget_state_history(config)]
        before = next(s for s in history if s.next == ("remember",))
        fork = await graph.aupdate_state(before.config, {"city": "杭州"})
        return first, (await graph.ainvoke(None, fork))["seen"]

    assert asyncio.run(scenario()) == (["成都"], ["杭州"])
