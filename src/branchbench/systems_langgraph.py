"""Two systems that run every scenario through a real LangGraph `StateGraph`.

Each event is a step of a thread: a node ``remember`` puts the shared
extractor's fact for a user message into the graph's store (keyed by its topic,
so a later fact on the same topic overwrites an earlier one, as an app would
do; a fact without a topic gets its own key). An event whose parent is the
previous step's event continues from that checkpoint; any other event is a
LangGraph fork: ``update_state`` on the parent event's checkpoint, then
``invoke(None, fork)``. A root starts a new thread. An event whose parent has
not arrived waits and is replayed when the parent is (a checkpoint cannot
precede its parent); one whose parent never arrives starts a thread at
``finish``.
At question time a final step ``recall`` runs on the anchor's checkpoint and
hands the model what ``store.search(namespace)`` returns there.

- ``langgraph_store``: LangGraph's `InMemorySaver` and `InMemoryStore`;
- ``branchmem_langgraph``: `BranchmemSaver` and `BranchmemStore` on one `Store`.

Both need the ``langgraph`` extra; they are registered only when it is installed.
"""

from __future__ import annotations

from abc import abstractmethod
from typing import Any, TypedDict

from .base import MEMORY_HEADING, Settings, System, section
from .extract import Derived
from .scenario import Question, ScenarioEvent

NAMESPACE = ("user", "facts")
RECALL_LIMIT = 1000
"""Items ``recall`` asks the store for: all of them, so the store's gate alone decides."""


class _State(TypedDict, total=False):
    facts: list[dict[str, str]]
    question: str | None
    recalled: list[str]


def _remember(state: _State) -> dict[str, Any]:
    from langgraph.config import get_store

    store = get_store()
    for fact in state.get("facts") or []:
        store.put(NAMESPACE, fact["key"], {"content": fact["content"]})
    return {}


def _recall(state: _State) -> dict[str, Any]:
    from langgraph.config import get_store

    items = get_store().search(NAMESPACE, limit=RECALL_LIMIT)
    return {"recalled": [item.value["content"] for item in items]}


def _route(state: _State) -> str:
    return "recall" if state.get("question") else "remember"


def build_graph(checkpointer: Any, store: Any) -> Any:
    """START → (remember | recall) → END, compiled with ``checkpointer`` and ``store``."""
    from langgraph.graph import END, START, StateGraph

    g = StateGraph(_State)
    g.add_node("remember", _remember)
    g.add_node("recall", _recall)
    g.add_conditional_edges(START, _route, ["remember", "recall"])
    g.add_edge("remember", END)
    g.add_edge("recall", END)
    return g.compile(checkpointer=checkpointer, store=store)


class _LangGraphSystem(System):
    """Replays the scenario as LangGraph steps and forks; subclasses pick saver and store."""

    def __init__(self, settings: Settings | None = None) -> None:
        super().__init__(settings)
        saver, store = self.make()
        self.graph = build_graph(saver, store)
        self.checkpoint: dict[str, Any] = {}
        self.previous: str | None = None
        self.threads = 0
        self.waiting: dict[str, list[tuple[str, list[dict[str, str]]]]] = {}
        self._facts: list[Derived] = []

    @abstractmethod
    def make(self) -> tuple[Any, Any]:
        """The checkpointer and the store the graph runs on."""

    def on_record(self, record: Derived) -> None:
        if record.kind == "fact":
            self._facts.append(record)

    def receive(self, event: ScenarioEvent) -> None:
        self._facts = []
        super().receive(event)
        facts = [{"key": f.key or event.id, "content": f.content} for f in self._facts]
        parent = event.parents[0] if event.parents else None
        if parent is not None and parent not in self.checkpoint:
            # A checkpoint cannot come before its parent: replay it when the parent does.
            self.waiting.setdefault(parent, []).append((event.id, facts))
            return
        self._step(event.id, parent, facts)

    def finish(self) -> None:
        super().finish()
        # Events whose parent never arrived start threads of their own.
        while self.waiting:
            parent = next(iter(self.waiting))
            for eid, facts in self.waiting.pop(parent):
                self._step(eid, None, facts)

    def _step(self, eid: str, parent: str | None, facts: list[dict[str, str]]) -> None:
        step: _State = {"facts": facts, "question": None}
        if parent is None:
            self.threads += 1
            config: Any = {"configurable": {"thread_id": f"t{self.threads}"}}
            self.graph.invoke(step, config)
        elif parent == self.previous:
            config = self.checkpoint[parent]
            self.graph.invoke(step, config)
        else:
            from langgraph.graph import START

            config = self.graph.update_state(self.checkpoint[parent], step, as_node=START)
            self.graph.invoke(None, config)
        thread = {"configurable": {"thread_id": config["configurable"]["thread_id"]}}
        self.checkpoint[eid] = self.graph.get_state(thread).config
        self.previous = eid
        for child, child_facts in self.waiting.pop(eid, []):
            self._step(child, eid, child_facts)

    def context(self, anchor: str, question: Question) -> str:
        if anchor not in self.checkpoint:
            return ""
        ask: _State = {"facts": [], "question": question.question}
        out = self.graph.invoke(ask, self.checkpoint[anchor])
        return section(MEMORY_HEADING, list(out.get("recalled") or []), "- ")


class LangGraphStore(_LangGraphSystem):
    """LangGraph's own `InMemorySaver` + `InMemoryStore`: the store ignores lineage."""

    name = "langgraph_store"

    def make(self) -> tuple[Any, Any]:
        from langgraph.checkpoint.memory import InMemorySaver
        from langgraph.store.memory import InMemoryStore

        return InMemorySaver(), InMemoryStore()


class BranchmemLangGraph(_LangGraphSystem):
    """`BranchmemSaver` + `BranchmemStore`: the store is gated by checkpoint lineage."""

    name = "branchmem_langgraph"

    def make(self) -> tuple[Any, Any]:
        from branchmem import Store
        from branchmem.integrations.langgraph import BranchmemSaver, BranchmemStore

        mem = Store()
        return BranchmemSaver(mem), BranchmemStore(mem)


def langgraph_systems() -> dict[str, type[System]]:
    """The two systems, or none when LangGraph is not installed."""
    import importlib.util

    if importlib.util.find_spec("langgraph") is None:
        return {}
    return {cls.name: cls for cls in (LangGraphStore, BranchmemLangGraph)}
