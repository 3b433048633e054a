"""Which LangGraph writes commit without a sync on SQLite (`UnsyncedCommits`):
a task's regular pending writes and its store writes inside a run, which the
step's checkpoint (synced) follows; never a checkpoint, a special pending
write (an error or an interrupt, after which no checkpoint may come for a
while) or a write outside a run. The data lands either way."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any, TypedDict

import pytest

pytest.importorskip("langgraph")

from langgraph.checkpoint.base import empty_checkpoint
from langgraph.graph import START, StateGraph
from langgraph.store.base import BaseStore

from branchmem import Store
from branchmem.backends.sqlite.backend import SQLiteBackend
from branchmem.integrations.langgraph import BranchmemSaver, BranchmemStore


def _commits(mem: Store) -> tuple[list[str], Any]:
    """The store's ``synchronous`` changes and commits, as statements run."""
    b = mem._engine.backend
    assert isinstance(b, SQLiteBackend)
    seen: list[str] = []
    b._db.set_trace_callback(
        lambda q: seen.append(q) if q.startswith(("PRAGMA synchronous", "COMMIT")) else None
    )
    return seen, b


def _cfg(cid: str | None = None) -> Any:
    conf: dict[str, Any] = {"thread_id": "t", "checkpoint_ns": ""}
    if cid is not None:
        conf["checkpoint_id"] = cid
    return {"configurable": conf}


def test_regular_pending_writes_unsynced_special_ones_synced(tmp_path: Path) -> None:
    mem = Store(tmp_path / "s.db")
    saver = BranchmemSaver(mem)
    cp = empty_checkpoint()
    cfg = saver.put(_cfg(), cp, {"source": "input", "step": -1}, {})
    seen, b = _commits(mem)
    saver.put_writes(cfg, [("x", 1)], "task-1")
    assert seen == ["PRAGMA synchronous=NORMAL", "COMMIT", "PRAGMA synchronous=FULL"]
    seen.clear()
    saver.put_writes(cfg, [("__error__", "boom")], "task-2")
    assert seen == ["COMMIT"]
    seen.clear()
    cp2 = {**empty_checkpoint(), "id": cp["id"] + "1"}
    saver.put(cfg, cp2, {"source": "loop", "step": 0}, {})
    assert "PRAGMA synchronous=NORMAL" not in seen
    b._db.set_trace_callback(None)
    again = BranchmemSaver(Store(tmp_path / "s.db")).get_tuple(cfg)
    assert again is not None
    assert sorted((t, c) for t, c, _ in again.pending_writes or []) == [
        ("task-1", "x"),
        ("task-2", "__error__"),
    ]


class S(TypedDict, total=False):
    n: int


def _learn(state: S, *, store: BaseStore) -> dict[str, Any]:
    store.put(("user",), "k", {"text": "v"})
    return {"n": 1}


def test_store_writes_in_a_run_unsynced_outside_synced(tmp_path: Path) -> None:
    mem = Store(tmp_path / "s.db")
    store = BranchmemStore(mem)
    g = StateGraph(S)
    g.add_node("learn", _learn)
    g.add_edge(START, "learn")
    graph = g.compile(checkpointer=BranchmemSaver(mem), store=store)
    graph.invoke({}, {"configurable": {"thread_id": "t"}}, durability="sync")
    seen, b = _commits(mem)
    graph.invoke({}, {"configurable": {"thread_id": "t"}}, durability="sync")
    unsynced = seen.count("PRAGMA synchronous=NORMAL")
    # the store's write and the task's pending writes; never the checkpoints
    assert unsynced == 3  # __start__'s writes, learn's store write, learn's writes
    seen.clear()
    store.put(("user",), "bare", {"text": "w"})
    assert seen == ["COMMIT"]
    b._db.set_trace_callback(None)
    item = BranchmemStore(Store(tmp_path / "s.db")).get(("user",), "k")
    assert item is not None and item.value == {"text": "v"}


def test_a_task_waiting_for_its_checkpoint_reads_nothing_while_others_are_saved(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A store call waits for its step's checkpoint to be saved; the saver of
    this process tells it. Woken by another checkpoint's save (the previous
    step's, say), it waits on without looking at the backend, which it asks
    only once a while has passed with no word (another process's saver)."""
    from branchmem.integrations.langgraph import _views

    mem = Store()
    looked: list[str] = []
    real = _views._stored
    monkeypatch.setattr(_views, "_stored", lambda s, e, ns: looked.append(e) or real(s, e, ns))
    got: list[bool] = []
    waiter = threading.Thread(
        target=lambda: got.append(_views.wait_saved(mem, "mine", "default", 5.0))
    )
    waiter.start()
    for i in range(5):
        _views.saved(mem, f"other-{i}")
        time.sleep(0.002)
    _views.saved(mem, "mine")
    waiter.join(5)
    assert got == [True] and looked == []
    # Nothing said for a while: the backend is asked (and answers, here: not stored).
    assert _views.wait_saved(mem, "never", "default", 0.05) is False
    assert "never" in looked
