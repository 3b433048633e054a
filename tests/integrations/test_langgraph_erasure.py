"""Purging a namespace whole takes what the LangGraph integration derived from
it (`branchmem.derived`): the thread list and every thread's checkpoints, on
every backend, and leaves other tenants alone. The SQLite file's bytes and the
PostgreSQL rows are searched for the name, the thread id and the state."""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any, TypedDict

import pytest

pytest.importorskip("langgraph")

from langgraph.graph import START, StateGraph

from branchmem import Store
from branchmem.integrations.langgraph import BranchmemSaver
from branchmem.integrations.langgraph._state import _NO_DIGITS
from helpers.stored_text import stored_text

NAME = "alice@example.com"
THREAD = "thread-SECRET-3141"
STATE = "STATE-SECRET-2718"


class S(TypedDict, total=False):
    text: str


def _run(store: Store, namespace: str, thread: str, text: str) -> BranchmemSaver:
    g = StateGraph(S)
    g.add_node("say", lambda s: {"text": text})
    g.add_edge(START, "say")
    saver = BranchmemSaver(store, namespace=namespace)
    g.compile(checkpointer=saver).invoke({}, {"configurable": {"thread_id": thread}})
    return saver


def _forms(text: str) -> list[bytes]:
    """``text`` as it may lie in the file: plain, and inside a serialised value
    (base64 at each of its three alignments, digits as `_state` writes them)."""
    raw = text.encode()
    out = [raw]
    for pad in (0, 1, 2):
        enc = base64.b64encode(b"\0" * pad + raw).translate(_NO_DIGITS)
        out.append(enc[4 * ((pad + 2) // 3) : 4 * ((pad + len(raw)) // 3)])
    return out


def _holds(stored: bytes, text: str) -> bool:
    return any(f in stored for f in _forms(text))


def _cfg(thread: str) -> Any:
    return {"configurable": {"thread_id": thread}}


def test_a_whole_namespace_purge_takes_its_checkpoints(
    backend_name: str, reopen: Callable[[], Store]
) -> None:
    store = reopen()
    _run(store, NAME, THREAD, STATE)
    # Other tenants: one whose name starts with the purged one's, one below it.
    _run(store, NAME + "2", "thread-other-1", "OTHER-STATE-1")
    _run(store, NAME + "/work", "thread-other-2", "OTHER-STATE-2")
    before = stored_text(backend_name, store)
    if before is not None:
        for text in (NAME + "/langgraph", THREAD, STATE):
            assert _holds(before, text), text
    removed = store.purge(namespace=NAME, whole_namespace=True)
    assert removed[:2] == [NAME, NAME + "/langgraph"]
    assert len(removed) == 3 and THREAD in removed[2]
    store.close()
    again = reopen()
    saver = BranchmemSaver(again, namespace=NAME)
    assert saver.get_tuple(_cfg(THREAD)) is None
    assert list(saver.list(None)) == []
    for other, thread, text in (
        (NAME + "2", "thread-other-1", "OTHER-STATE-1"),
        (NAME + "/work", "thread-other-2", "OTHER-STATE-2"),
    ):
        tup = BranchmemSaver(again, namespace=other).get_tuple(_cfg(thread))
        assert tup is not None and tup.checkpoint["channel_values"]["text"] == text
    after = stored_text(backend_name, again)
    if after is not None:
        for text in (NAME + "/langgraph", THREAD, STATE):
            assert not _holds(after, text), text
        assert _holds(after, "OTHER-STATE-1") and _holds(after, "thread-other-2")
    again.close()
