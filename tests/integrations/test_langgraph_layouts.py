"""A store whose checkpoints were written in one of the saver's earlier layouts
answers as one written now, on every backend: the same checkpoints listed in
the same order, the same data, parents and pending writes; new checkpoints
written on top of it join them; pruning and deleting take every kind. The
earlier layouts are made here by the statements their writers ran:

- ``"rows"`` (`_old_write`): a bare root event per checkpoint, its data in a
  record at the root, a listing record per checkpoint;
- ``"branch"`` (`_branch_write`): the data in the root's meta (one row, as
  now), but the latest pointer moved through `Store.set_branch` at every
  checkpoint (a history row and an audit line each time);
- both: a bookkeeping record per task that wrote to the store (`_old_link`),
  which the saver read to find a step's tasks (it now reads the children of
  the step's checkpoint event)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any, TypedDict

import pytest

pytest.importorskip("langgraph")

from langgraph.graph import END, START, StateGraph
from langgraph.store.base import BaseStore

from branchmem import Store
from branchmem.errors import UnknownBranch
from branchmem.integrations.langgraph import BranchmemSaver, BranchmemStore
from branchmem.integrations.langgraph import _keys as k
from branchmem.integrations.langgraph import saver as saver_module
from branchmem.integrations.langgraph import store as store_module
from branchmem.integrations.langgraph._checkpoints import ensure_root

NS = ("user", "facts")


class S(TypedDict, total=False):
    n: int
    seen: int


def _remember(state: S, *, store: BaseStore) -> dict[str, Any]:
    store.put(NS, f"fact-{state.get('n', 0) % 3}", {"text": f"fact {state.get('n', 0)}"})
    return {}


def _recall(state: S, *, store: BaseStore) -> dict[str, Any]:
    return {"seen": len(store.search(NS, limit=10))}


def _count(state: S) -> dict[str, Any]:
    return {"n": state.get("n", 0) + 1}


def _graph(store: Store) -> Any:
    g = StateGraph(S)
    g.add_node("remember", _remember)
    g.add_node("recall", _recall)
    g.add_node("count", _count)
    g.add_edge(START, "remember")
    g.add_edge("remember", "recall")
    g.add_edge("recall", "count")
    g.add_edge("count", END)
    return g.compile(checkpointer=BranchmemSaver(store), store=BranchmemStore(store))


def _lineage_event(
    s: Store, ns: str, thread: str, cp_ns: str, cid: str, lineage: list[str]
) -> bool:
    """The checkpoint's event in the caller's namespace, as both earlier layouts
    wrote it; whether the checkpoint is its thread's newest."""
    s.add_events(
        [{"id": k.checkpoint_event(thread, cp_ns, cid), "parent": lineage or None,
          "role": "note", "namespace": ns,
          "meta": {"thread_id": thread, "checkpoint_ns": cp_ns, "checkpoint_id": cid}}]
    )  # fmt: skip
    tns = k.thread_namespace(ns, thread)
    try:
        head = s.branch_head(k.latest_branch(cp_ns), namespace=tns)
    except UnknownBranch:
        return True
    return cid >= k.checkpoint_of_root(head)


def _data_records(
    s: Store, tns: str, cp_ns: str, cid: str, root: str, data: dict[str, Any]
) -> None:
    """A checkpoint's data and listing records at its root, as both earlier
    layouts wrote them (a copy, frozen: not the saver's code of today)."""
    old = [m for m in s.memories(at=root, namespace=tns, include_archived=True)
           if m.meta and m.meta.get("type") == "checkpoint"]  # fmt: skip
    listing = {"content": "", "sources": [k.THREAD_ROOT], "kind": "working", "namespace": tns,
               "id": k.listing_record(cp_ns, cid),
               "meta": {"checkpoint_ns": cp_ns, "checkpoint_id": cid}}  # fmt: skip
    if old:
        s.supersede(old[-1].id, "", sources=[root], namespace=tns, meta=data)
        s.add_memories([listing])
    else:
        s.add_memories(
            [{"content": "", "sources": [root], "kind": "working", "namespace": tns,
              "meta": data}, listing]
        )  # fmt: skip


def _old_write(
    s: Store, ns: str, thread: str, cp_ns: str, cid: str, root: str,
    lineage: list[str], data: dict[str, Any],
) -> bool:  # fmt: skip
    """`write_checkpoint` as the earliest layout wrote it (its data had no
    checkpoint namespace or id)."""
    tns = k.thread_namespace(ns, thread)
    newest = _lineage_event(s, ns, thread, cp_ns, cid, lineage)
    s.add_events([{"id": root, "role": "note", "namespace": tns}])
    data = {key: v for key, v in data.items() if key not in ("checkpoint_ns", "checkpoint_id")}
    _data_records(s, tns, cp_ns, cid, root, data)
    if newest:
        s.set_branch(k.latest_branch(cp_ns), root, namespace=tns)
    return newest


def _branch_write(
    s: Store, ns: str, thread: str, cp_ns: str, cid: str, root: str,
    lineage: list[str], data: dict[str, Any],
) -> bool:  # fmt: skip
    """`write_checkpoint` as the one-row layout wrote it before its latest
    pointer moved as a row: through `Store.set_branch` every time."""
    tns = k.thread_namespace(ns, thread)
    newest = _lineage_event(s, ns, thread, cp_ns, cid, lineage)
    try:
        s.get_event(root, namespace=tns)
    except KeyError:
        s.add_events([{"id": root, "role": "note", "namespace": tns, "meta": data}])
    else:
        _data_records(s, tns, cp_ns, cid, root, data)
    if newest:
        s.set_branch(k.latest_branch(cp_ns), root, namespace=tns)
    return newest


def _old_link(store: Store, ns: str, thread: str, cid: str, task_id: str) -> str:
    """`link_task` as the earlier layouts ran it: the task's event, and a
    bookkeeping record at its checkpoint's root that named the task."""
    ev = k.task_event(thread, cid, task_id)
    tns = k.thread_namespace(ns, thread)
    root = k.checkpoint_root("", cid)
    store.add_events(
        [{"id": ev, "parent": k.checkpoint_event(thread, "", cid), "role": "note",
          "namespace": ns}]
    )  # fmt: skip
    ensure_root(store, tns, root)
    store.add_memory(
        "", sources=[root], kind="working", namespace=tns,
        id="task:" + json.dumps([cid, task_id], separators=(",", ":")),
        meta={"type": "task", "task_id": task_id},
    )  # fmt: skip
    return ev


def _run(graph: Any, steps: int) -> None:
    """``steps`` invokes on thread ``t``, forking once (a state update three
    checkpoints back) half way."""
    cfg: Any = {"configurable": {"thread_id": "t"}}
    for i in range(steps):
        if i == steps // 2:
            past = list(graph.get_state_history({"configurable": {"thread_id": "t"}}))[3].config
            cfg = graph.update_state(past, {"n": 100})
        graph.invoke({"n": i}, cfg)
        cfg = graph.get_state({"configurable": {"thread_id": "t"}}).config


def _answers(store: Store) -> list[Any]:
    """What the saver says of thread ``t``: every checkpoint, newest first, with
    its data, parent and pending writes, and what the store sees at the head."""
    saver = BranchmemSaver(store)
    out: list[Any] = []
    for tup in saver.list({"configurable": {"thread_id": "t"}}):
        again = saver.get_tuple(tup.config)
        assert again is not None and again.checkpoint == tup.checkpoint
        parent = tup.parent_config["configurable"]["checkpoint_id"] if tup.parent_config else None
        conf = tup.config["configurable"]
        out.append(
            (conf["checkpoint_ns"], conf["checkpoint_id"], tup.checkpoint["channel_values"],
             tup.metadata, parent, tup.pending_writes)
        )  # fmt: skip
    head = saver.get_tuple({"configurable": {"thread_id": "t"}})
    assert head is not None
    facts = BranchmemStore(store).at(head.config).search(NS)
    out.append(sorted((f.key, f.value["text"]) for f in facts))
    return out


WRITERS = {"rows": _old_write, "branch": _branch_write}


@pytest.fixture
def old_layout(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[str | None], None]]:
    """``use(name)`` writes in the earlier layout ``name`` from then on;
    ``use(None)`` as the saver writes now."""

    def use(name: str | None) -> None:
        if name is not None:
            monkeypatch.setattr(saver_module, "write_checkpoint", WRITERS[name])
            monkeypatch.setattr(saver_module, "link_task", _old_link)
            monkeypatch.setattr(store_module, "link_task", _old_link)
        else:
            monkeypatch.undo()

    yield use


@pytest.mark.parametrize("layout", sorted(WRITERS))
def test_a_store_in_an_earlier_layout_answers_the_same(
    reopen: Callable[[], Store], old_layout: Callable[[str | None], None], layout: str
) -> None:
    old_layout(layout)
    store = reopen()
    _run(_graph(store), 6)
    tns = k.thread_namespace("default", "t")
    rows = store.records(namespace=tns, limit=1000)
    assert any(m.id.startswith("task:") for m in rows), "no task records: not an earlier layout"
    if layout == "rows":
        assert not any(e.meta for e in store.events(namespace=tns)), "not the earliest layout"
    latest = k.latest_branch("")
    moves = store.history(latest, namespace=tns)
    assert len(moves) > 6, "the latest pointer was moved by set_branch"
    before = _answers(store)
    store.close()
    old_layout(None)
    store = reopen()
    assert _answers(store) == before
    # Checkpoints written now join them: listed first, their parents old ones.
    _run(_graph(store), 4)
    after = _answers(store)
    assert [c for c in after[:-1] if c in before] == before[:-1]
    assert {c[1] for c in before[:-1]} < {c[1] for c in after[:-1]}
    assert any(e.meta for e in store.events(namespace=tns)), "new checkpoints in one row"
    assert len(after) - 1 == len(before) - 1 + 4 * 5 + 1  # (and the fork's update)
    # Pruning keeps the newest of each checkpoint namespace, whatever its layout.
    saver = BranchmemSaver(store)
    saver.prune(["t"])
    left = list(saver.list({"configurable": {"thread_id": "t"}}))
    assert [t.config["configurable"]["checkpoint_id"] for t in left] == [after[0][1]]
    saver.delete_thread("t")
    assert saver.get_tuple({"configurable": {"thread_id": "t"}}) is None
    store.close()


@pytest.mark.parametrize("layout", sorted(WRITERS))
def test_each_layout_writes_the_same_answers(
    reopen: Callable[[], Store],
    open_store: Callable[..., Store],
    old_layout: Callable[[str | None], None],
    layout: str,
) -> None:
    """The same run in each layout: equal answers but for the ids."""

    def shape(answers: list[Any]) -> list[Any]:
        ids = {c[1]: i for i, c in enumerate(answers[:-1])}
        return [
            (c[0], c[2], {key: v for key, v in c[3].items() if key != "run_id"},
             ids.get(c[4]), [(w[1], w[2]) for w in c[5]])
            for c in answers[:-1]
        ] + [answers[-1]]  # fmt: skip

    old_layout(layout)
    old = open_store()
    _run(_graph(old), 5)
    old_layout(None)
    new = open_store()
    _run(_graph(new), 5)
    assert shape(_answers(old)) == shape(_answers(new))
