"""BranchmemStore in graphs compiled without a checkpointer, and with one that
is not a BranchmemSaver.

The three examples below are copied verbatim from LangGraph's own
documentation (``libs/langgraph/langgraph/config.py``, ``get_store``: "Using
with `StateGraph`" and "Using with functional API"; ``libs/langgraph/
langgraph/runtime.py``, ``Runtime``), LangGraph, Copyright (c) 2024
LangChain, Inc., MIT License. Each runs as written, and again with only its
line ``store = InMemoryStore()`` replaced by ``store = BranchmemStore(Store())``:
both must give the same answer.
"""

from __future__ import annotations

import contextlib
import io
import sys
import time
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypedDict

import pytest

pytest.importorskip("langgraph", reason="needs 'langgraph', of the 'langgraph' extra")

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph
from langgraph.store.base import BaseStore

from branchmem import InvalidInput, Store
from branchmem.integrations.langgraph import BranchmemSaver, BranchmemStore

STATE_GRAPH = """
from typing_extensions import TypedDict
from langgraph.graph import StateGraph, START
from langgraph.store.memory import InMemoryStore
from langgraph.config import get_store

store = InMemoryStore()
store.put(("values",), "foo", {"bar": 2})


class State(TypedDict):
    foo: int


def my_node(state: State):
    my_store = get_store()
    stored_value = my_store.get(("values",), "foo").value["bar"]
    return {"foo": stored_value + 1}


graph = (
    StateGraph(State)
    .add_node(my_node)
    .add_edge(START, "my_node")
    .compile(store=store)
)

graph.invoke({"foo": 1})
"""

FUNCTIONAL = """
from langgraph.func import entrypoint, task
from langgraph.store.memory import InMemoryStore
from langgraph.config import get_store

store = InMemoryStore()
store.put(("values",), "foo", {"bar": 2})


@task
def my_task(value: int):
    my_store = get_store()
    stored_value = my_store.get(("values",), "foo").value["bar"]
    return stored_value + 1


@entrypoint(store=store)
def workflow(value: int):
    return my_task(value).result()


workflow.invoke(1)
"""

RUNTIME = """
from typing import TypedDict
from langgraph.graph import StateGraph
from dataclasses import dataclass
from langgraph.runtime import Runtime
from langgraph.store.memory import InMemoryStore


@dataclass
class Context:  # (1)!
    user_id: str


class State(TypedDict, total=False):
    response: str


store = InMemoryStore()  # (2)!
store.put(("users",), "user_123", {"name": "Alice"})


def personalized_greeting(state: State, runtime: Runtime[Context]) -> State:
    \'\'\'Generate personalized greeting using runtime context and store.\'\'\'
    user_id = runtime.context.user_id  # (3)!
    name = "unknown_user"
    if runtime.store:
        if memory := runtime.store.get(("users",), user_id):
            name = memory.value["name"]

    response = f"Hello {name}! Nice to see you again."
    return {"response": response}


graph = (
    StateGraph(state_schema=State, context_schema=Context)
    .add_node("personalized_greeting", personalized_greeting)
    .set_entry_point("personalized_greeting")
    .set_finish_point("personalized_greeting")
    .compile(store=store)
)

result = graph.invoke({}, context=Context(user_id="user_123"))
print(result)
# > {'response': 'Hello Alice! Nice to see you again.'}
"""

EXAMPLES = {"state_graph": STATE_GRAPH, "functional": FUNCTIONAL, "runtime": RUNTIME}
ONE_LINE = "store = InMemoryStore()"


def run(source: str, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, str]:
    """Run an example as a module; (its last expression's value, what it printed)."""
    *body, last = source.strip().splitlines()
    module = types.ModuleType("langgraph_example")  # (its dataclass looks itself up)
    monkeypatch.setitem(sys.modules, module.__name__, module)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec("\n".join(body), module.__dict__)
        value = eval(last, module.__dict__) if not last.startswith("#") else None
    return value, out.getvalue()


@pytest.mark.parametrize("name", list(EXAMPLES))
def test_langgraphs_examples_run_unchanged_and_answer_as_in_memory(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = EXAMPLES[name]
    assert source.count(ONE_LINE) == 1
    theirs = run(source, monkeypatch)
    ours = run(
        source.replace(ONE_LINE, "from branchmem import Store\n"
                       "from branchmem.integrations.langgraph import BranchmemStore\n"
                       "store = BranchmemStore(Store())", 1),
        monkeypatch,
    )  # fmt: skip
    assert ours == theirs
    assert theirs in [({"foo": 3}, ""), (3, ""),
                      (None, "{'response': 'Hello Alice! Nice to see you again.'}\n")]  # fmt: skip


class S(TypedDict, total=False):
    text: str
    seen: list[str]


def _learn(state: S, *, store: BaseStore) -> dict[str, Any]:
    store.put(("user",), state["text"], {"text": state["text"]})
    return {}


def _recall(state: S, *, store: BaseStore) -> dict[str, Any]:
    return {"seen": sorted(i.key for i in store.search(("user",)))}


def _graph(store: BaseStore, checkpointer: Any = None) -> Any:
    g = StateGraph(S)
    g.add_node("learn", _learn)
    g.add_node("recall", _recall)
    g.add_edge(START, "learn")
    g.add_edge("learn", "recall")
    return g.compile(checkpointer=checkpointer, store=store)


@pytest.fixture(params=["memory", "sqlite"])
def reopen(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[[], Store]]:
    from branchmem.backends.memory import MemoryBackend

    shared = MemoryBackend()
    opened: list[Store] = []

    def make() -> Store:
        s = Store(backend=shared) if request.param == "memory" else Store(tmp_path / "a.db")
        opened.append(s)
        return s

    yield make
    for s in opened:
        s.close()


def test_without_a_checkpointer_a_put_is_long_term_memory(
    reopen: Callable[[], Store],
) -> None:
    """A run's put is sourced from the shared event, as a put outside a run: a
    later run (with or without a thread id) and a bare read see it, as with
    InMemoryStore, and so does another Store on the same data."""
    ours, theirs = (
        BranchmemStore(reopen()),
        __import__("langgraph.store.memory", fromlist=["InMemoryStore"]).InMemoryStore(),
    )
    for store in (ours, theirs):
        graph = _graph(store)
        assert graph.invoke({"text": "茶"})["seen"] == ["茶"]
        assert graph.invoke({"text": "咖啡"}, {"configurable": {"thread_id": "t"}})["seen"] == [
            "咖啡", "茶"]  # fmt: skip
        assert store.get(("user",), "茶").value == {"text": "茶"}  # type: ignore[union-attr]
    later = BranchmemStore(reopen())
    assert sorted(i.key for i in later.search(("user",))) == ["咖啡", "茶"]


def test_without_a_checkpointer_and_with_a_branchmem_saver_on_one_store() -> None:
    """A graph with a BranchmemSaver still gates by its lineage; what a graph
    without a checkpointer put is long-term memory it reads."""
    mem = Store()
    store = BranchmemStore(mem)
    _graph(store).invoke({"text": "茶"})
    gated = _graph(store, BranchmemSaver(mem))
    assert gated.invoke({"text": "水"}, {"configurable": {"thread_id": "t"}})["seen"] == [
        "水", "茶"]  # fmt: skip


def test_shared_false_without_a_checkpointer_says_what_to_use() -> None:
    graph = _graph(BranchmemStore(Store(), shared=False))
    with pytest.raises(InvalidInput, match="checkpointer=BranchmemSaver"):
        graph.invoke({"text": "茶"})


def test_another_checkpointer_is_refused_at_once() -> None:
    graph = _graph(BranchmemStore(Store()), InMemorySaver())
    start = time.monotonic()
    with pytest.raises(InvalidInput, match=r"InMemorySaver.*checkpointer=BranchmemSaver"):
        graph.invoke({"text": "茶"}, {"configurable": {"thread_id": "t"}})
    assert time.monotonic() - start < 2.0  # (it waited wait_s, 10 s, before)
