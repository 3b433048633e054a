"""A LangGraph fork, with branchmem's store and with LangGraph's InMemoryStore.

A graph ``remember -> recall``: ``remember`` puts the user's city into the
store, ``recall`` searches the store. The first run says 成都; then the user
forks the thread from before ``remember`` and says 杭州 instead.

    python examples/langgraph_fork.py

needs ``pip install 'branchmem[langgraph]'``; no model.
"""

from __future__ import annotations

from typing import Any, TypedDict

from branchmem import Store

try:  # the langgraph extra; without it, one line saying so rather than a traceback
    from langgraph.checkpoint.base import BaseCheckpointSaver
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.graph import END, START, StateGraph
    from langgraph.store.base import BaseStore
    from langgraph.store.memory import InMemoryStore

    from branchmem.integrations.langgraph import BranchmemSaver, BranchmemStore
except ModuleNotFoundError as exc:
    raise SystemExit(
        f"{exc.name} is not installed: this example needs pip install 'branchmem[langgraph]'"
    ) from None


class State(TypedDict, total=False):
    city: str
    recalled: list[str]


def remember(state: State, *, store: BaseStore) -> dict[str, Any]:
    store.put(("user", "facts"), "move-" + state["city"], {"city": state["city"]})
    return {}


def recall(state: State, *, store: BaseStore) -> dict[str, Any]:
    return {"recalled": [item.value["city"] for item in store.search(("user", "facts"))]}


def build(checkpointer: BaseCheckpointSaver[Any], store: BaseStore) -> Any:
    g = StateGraph(State)
    g.add_node("remember", remember)
    g.add_node("recall", recall)
    g.add_edge(START, "remember")
    g.add_edge("remember", "recall")
    g.add_edge("recall", END)
    return g.compile(checkpointer=checkpointer, store=store)


def scenario(graph: Any) -> dict[str, list[str]]:
    """Run 成都, fork before ``remember`` with 杭州, then re-run ``recall`` on the
    first branch. Returns what ``recall`` saw each time."""
    config = {"configurable": {"thread_id": "user-1"}}
    first = graph.invoke({"city": "成都"}, config)["recalled"]
    history = list(graph.get_state_history(config))
    before_remember = next(s for s in history if s.next == ("remember",))
    before_recall = next(s for s in history if s.next == ("recall",))
    fork = graph.update_state(before_remember.config, {"city": "杭州"})
    forked = graph.invoke(None, fork)["recalled"]
    again = graph.invoke(None, before_recall.config)["recalled"]
    return {"first run": first, "fork (杭州)": forked, "first branch again": again}


def _pad(text: str, width: int) -> str:
    """Pad to a display width (CJK characters take two columns)."""
    import unicodedata

    used = sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)
    return text + " " * max(width - used, 1)


def main() -> None:
    mem = Store()  # Store("agent.db") for a file
    ours = scenario(build(BranchmemSaver(mem), BranchmemStore(mem)))
    theirs = scenario(build(InMemorySaver(), InMemoryStore()))
    print(_pad("", 22) + _pad("BranchmemStore", 18) + "InMemoryStore")
    for step in ours:
        print(_pad(step, 22) + _pad(str(ours[step]), 18) + str(theirs[step]))


if __name__ == "__main__":
    main()
