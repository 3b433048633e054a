"""Long-term memory across LangGraph threads, with branchmem's store and with
LangGraph's InMemoryStore.

A graph ``learn -> recall``: ``learn`` puts what the user said they drink into
the store (a user profile shared by every conversation), ``recall`` reads the
profile. Thread ``chat-1`` learns 茶 (tea); a new thread ``chat-2`` recalls
it. Then ``chat-1`` is rewound to before it learned (the user edited the
message away) and goes on from there; ``chat-3`` recalls again. Finally
``chat-1`` goes back to its first branch.

    python examples/langgraph_longterm.py

needs ``pip install 'branchmem[langgraph]'``; no model. The code in ``learn``
and ``recall`` is written for LangGraph's store interface and runs unchanged on
both stores.
"""

from __future__ import annotations

import unicodedata
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

PROFILE = ("user-42", "profile")


class State(TypedDict, total=False):
    drink: str | None
    recalled: str | None


def learn(state: State, *, store: BaseStore) -> dict[str, Any]:
    if state.get("drink"):
        store.put(PROFILE, "drink", {"drink": state["drink"]})
    return {}


def recall(state: State, *, store: BaseStore) -> dict[str, Any]:
    item = store.get(PROFILE, "drink")
    return {"recalled": item.value["drink"] if item else None}


def build(checkpointer: BaseCheckpointSaver[Any], store: BaseStore) -> Any:
    g = StateGraph(State)
    g.add_node("learn", learn)
    g.add_node("recall", recall)
    g.add_edge(START, "learn")
    g.add_edge("learn", "recall")
    g.add_edge("recall", END)
    return g.compile(checkpointer=checkpointer, store=store)


def scenario(graph: Any, store: BaseStore) -> dict[str, Any]:
    """What a new thread (and a bare ``store.get``) recalls at each point."""

    def cfg(thread: str) -> Any:
        return {"configurable": {"thread_id": thread}}

    def bare() -> Any:
        item = store.get(PROFILE, "drink")  # outside any run
        return item.value["drink"] if item else None

    out: dict[str, Any] = {}
    graph.invoke({"drink": "茶"}, cfg("chat-1"))
    learned = graph.get_state(cfg("chat-1")).config
    out["chat-2 after chat-1 learned"] = graph.invoke({}, cfg("chat-2"))["recalled"]
    out["bare get"] = bare()
    before = [s for s in graph.get_state_history(cfg("chat-1")) if s.next == ("learn",)][-1]
    graph.invoke(None, graph.update_state(before.config, {"drink": None}))  # rewind chat-1
    out["chat-3 after chat-1 was rewound"] = graph.invoke({}, cfg("chat-3"))["recalled"]
    out["bare get after the rewind"] = bare()
    graph.update_state(learned, {})  # chat-1 goes back to its first branch
    out["chat-4 after chat-1 came back"] = graph.invoke({}, cfg("chat-4"))["recalled"]
    return out


def _pad(text: str, width: int) -> str:
    """Pad to a display width (CJK characters take two columns)."""
    used = sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)
    return text + " " * max(width - used, 1)


def main() -> None:
    mem = Store()  # or Store("agent.db")
    ours = BranchmemStore(mem)
    theirs = InMemoryStore()
    a = scenario(build(BranchmemSaver(mem), ours), ours)
    b = scenario(build(InMemorySaver(), theirs), theirs)
    print(_pad("", 34) + _pad("BranchmemStore", 18) + "InMemoryStore")
    for what in a:
        print(_pad(what, 34) + _pad(str(a[what]), 18) + str(b[what]))


if __name__ == "__main__":
    main()
