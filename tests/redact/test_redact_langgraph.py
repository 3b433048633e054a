"""Redaction in the LangGraph integration: a graph run's checkpoints, metadata
and pending writes (a `Send` fan-out's too) are redacted before they are
serialised; `BranchmemStore` item keys and value keys are redacted, namespace
labels holding personal data refused. Checked in what the store holds and in
every checkpoint read back (the state is stored serialised, so its bytes
alone would hide a raw identifier)."""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Annotated, Any, TypedDict

import pytest

pytest.importorskip("langgraph")

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langgraph.graph import START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.store.base import BaseStore
from langgraph.types import Send

from branchmem import InvalidInput, Redactor, Store
from branchmem.integrations.langgraph import BranchmemSaver, BranchmemStore
from helpers.raw_state import stored_state
from helpers.redact_held import Held, assert_absent, assert_present, held, stored_text

OpenStore = Callable[..., Store]


class State(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]
    profile: dict[str, Any]
    phone: int
    notes: Annotated[list[str], operator.add]


def build(mem: Store, h: Held) -> Any:
    def greet(state: State, store: BaseStore) -> State:
        store.put(("users", "u1"), f"contact:{h.email}", {h.email: h.text})
        reply = AIMessage(content=f"noted {h.phone}", additional_kwargs={"to": h.email})
        return {"messages": [reply], "profile": {h.email: {"card": h.card}},
                "phone": int(h.phone_digits)}  # fmt: skip

    def fan_out(state: State) -> list[Send]:
        return [Send("echo", {"text": h.text}), Send("echo", {"text": h.id_card})]

    def echo(arg: dict[str, str]) -> State:
        return {"notes": [arg["text"]]}

    g = StateGraph(State)
    g.add_node("greet", greet)
    g.add_node("echo", echo)
    g.add_edge(START, "greet")
    g.add_conditional_edges("greet", fan_out, ["echo"])
    return g.compile(checkpointer=BranchmemSaver(mem), store=BranchmemStore(mem))


def run(mem: Store, h: Held) -> tuple[Any, BranchmemSaver]:
    graph = build(mem, h)
    config = {"configurable": {"thread_id": "t1"}, "metadata": {"user_email": h.email}}
    graph.invoke({"messages": [HumanMessage(content=h.text)]}, config)
    return graph, BranchmemSaver(mem)


def config_of(thread: str) -> Any:
    return {"configurable": {"thread_id": thread}}


def read_back(saver: BranchmemSaver) -> str:
    """Every checkpoint, its metadata and pending writes, deserialised."""
    tuples = list(saver.list(None))
    assert len(tuples) >= 3
    return repr([(t.checkpoint, t.metadata, t.pending_writes) for t in tuples])


def test_a_graph_run_stores_no_held_identifier(open_store: OpenStore) -> None:
    h = held(30)
    mem = open_store(redactor=Redactor())
    graph, saver = run(mem, h)
    assert_absent(stored_text(mem), h)
    assert_absent(read_back(saver), h, "a checkpoint")
    state = graph.get_state(config_of("t1")).values
    r = Redactor()
    assert state["messages"][0].content == r.redact(h.text)
    assert state["messages"][1].additional_kwargs == {"to": "[邮箱]"}
    assert state["profile"] == {"[邮箱]": {"card": "[银行卡号]"}}
    assert state["phone"] == r.redact(h.phone_digits)  # a number kept as one: its text
    assert sorted(state["notes"]) == sorted([r.redact(h.text), "[身份证号]"])
    # A metadata filter is compared with the metadata as stored.
    assert list(saver.list(None, filter={"user_email": h.email}))
    # The thread goes on from what was stored.
    graph.invoke({"messages": [HumanMessage(content="再见")]}, config_of("t1"))
    assert_absent(stored_text(mem), h)


def test_the_checks_see_a_graph_runs_identifiers_without_a_redactor(
    open_store: OpenStore,
) -> None:
    h = held(30)
    mem = open_store()
    _, saver = run(mem, h)
    assert_present(read_back(saver), h)
    assert_present(stored_text(mem), h)  # the store's item, at least


def test_a_thread_id_holding_personal_data_is_refused(open_store: OpenStore) -> None:
    h = held(31)
    mem = open_store(redactor=Redactor())
    graph = build(mem, h)
    before = stored_state(mem)
    with pytest.raises(InvalidInput, match="holds personal data"):
        graph.invoke({"messages": []}, config_of(f"user-{h.phone}"))
    assert stored_state(mem) == before


def test_the_store_redacts_item_keys_and_value_keys_and_refuses_labels(
    open_store: OpenStore,
) -> None:
    h = held(32)
    mem = open_store(redactor=Redactor())
    mem.add_event("e1")
    view = BranchmemStore(mem).at("e1")
    key = f"contact:{h.email}"
    view.put(("users", "u1"), key, {h.email: h.text, "n": int(h.phone_digits), "ok": 1})
    item = view.get(("users", "u1"), key)  # found by the key as the caller holds it
    assert item is not None and item.key == "contact:[邮箱]"
    assert item.value == Redactor().redact_value({h.email: h.text, "n": int(h.phone_digits),
                                                  "ok": 1})  # fmt: skip
    found = view.search(("users",), filter={h.email: h.text})
    assert [i.key for i in found] == ["contact:[邮箱]"]
    assert [i.key for i in view.search(("users",), query=h.text)] == ["contact:[邮箱]"]
    assert_absent(stored_text(mem), h)
    before = stored_state(mem)
    with pytest.raises(InvalidInput, match=r"namespace label .* holds personal data"):
        view.put(("users", f"user-{h.phone}"), "k", {"v": 1})
    assert stored_state(mem) == before
    view.delete(("users", "u1"), key)
    assert view.get(("users", "u1"), key) is None
