"""The root graph's tasks in the lineage: which task a store call runs in, and
the event its store writes are sourced from.

Shared by `BranchmemSaver` (a step's checkpoint descends from its tasks'
events) and `BranchmemStore` (a task's writes are sourced from its event).
"""

from __future__ import annotations

from contextlib import AbstractContextManager

from langchain_core.runnables import RunnableConfig

from ...errors import InvalidInput, UnknownEvent
from ...store import Store
from . import _keys as k

_PAGE = 1000


def task_of(config: RunnableConfig) -> tuple[str, str, str]:
    """(thread, root checkpoint id, root task id) of a running task's config.

    A task's ``checkpoint_ns`` is ``name:task_id`` (``|``-joined for subgraphs);
    its first part names the root graph's task, and ``checkpoint_map[""]`` the
    root checkpoint that task runs on.
    """
    conf = config.get("configurable") or {}
    thread = conf.get("thread_id")
    task_ns = str(conf.get("checkpoint_ns") or "")
    cp_map = conf.get("checkpoint_map") or {}
    if thread is None or "" not in cp_map or not task_ns:
        raise InvalidInput(
            "no LangGraph task is running here (no thread_id, checkpoint_map or task "
            "namespace in the config); outside a run, use store.at(config) with a "
            "checkpoint config"
        )
    task_id = task_ns.split("|", 1)[0].rpartition(":")[2]
    return str(thread), str(cp_map[""]), task_id


def one_transaction(store: Store, *, synced: bool = True) -> AbstractContextManager[None]:
    """Several writes of one saver or store call as one backend transaction
    (all or none, one commit: a commit is most of a small write's cost).
    Backend transactions nest, so the Store's own calls inside join it.

    ``synced=False`` for writes that a checkpoint's (synced) commit follows
    soon: a task's pending writes and store writes inside a run. Where the
    backend can, that commit does not wait for the disk; a crash of the
    process loses none of it, and the step's checkpoint syncs it (a power cut
    before then loses the step's writes, as it would lose the checkpoint)."""
    backend = store._engine.backend
    unsynced = None if synced else getattr(backend, "unsynced_transaction", None)  # UnsyncedCommits
    if unsynced is not None:
        return unsynced()  # type: ignore[no-any-return]
    return backend.transaction()


def one_read(store: Store) -> AbstractContextManager[None]:
    """Several reads of one saver or store call in one read view (one read
    transaction, where the backend has them)."""
    return store._engine.backend.reading()


def link_task(store: Store, ns: str, thread: str, cid: str, task_id: str) -> str:
    """Create the event of a root task (once), under the checkpoint it runs
    on: the next checkpoint of the step finds it among that checkpoint's
    children (`step_tasks`)."""
    ev = k.task_event(thread, cid, task_id)
    store.add_events(
        [{"id": ev, "parent": k.checkpoint_event(thread, "", cid), "role": "note",
          "namespace": ns}]
    )  # fmt: skip
    return ev


def step_tasks(store: Store, ns: str, thread: str, cid: str) -> list[str]:
    """The events of the root tasks that wrote to the store while running on
    checkpoint ``cid`` (`link_task`), sorted: the children of its event with a
    task id. (Stores written before this also hold a bookkeeping record per
    task; the events were always made, so the children say the same.)"""
    prefix = k.task_event(thread, cid, "")[:-3]  # 'lg:["task",thread,cid,'
    out: list[str] = []
    cursor = None
    while True:
        try:
            page = store.children(
                k.checkpoint_event(thread, "", cid), namespace=ns, limit=_PAGE, cursor=cursor
            )
        except UnknownEvent:  # no such checkpoint (yet): no tasks ran on it
            return []
        out += [e.id for e in page.events if e.id.startswith(prefix)]
        cursor = page.cursor
        if cursor is None:
            return sorted(out)


class Desc(str):
    """A string that sorts in reverse (newest checkpoint id first)."""

    def __lt__(self, other: str) -> bool:
        return str.__gt__(self, other)


def thread_and_ns(config: RunnableConfig) -> tuple[str, str]:
    conf = config.get("configurable") or {}
    thread = conf.get("thread_id")
    if thread is None or not str(thread):
        raise InvalidInput("the config has no thread_id; pass {'configurable': {'thread_id': ...}}")
    return str(thread), str(conf.get("checkpoint_ns", "") or "")


def config_of(thread: str, cp_ns: str, cid: str | None) -> RunnableConfig:
    return {"configurable": {"thread_id": thread, "checkpoint_ns": cp_ns, "checkpoint_id": cid}}
