"""The writes that store one LangGraph checkpoint (`write_checkpoint`), and the
root event of a checkpoint in the thread's bookkeeping namespace (`has_root`,
`ensure_root`).

The layout (`BranchmemSaver` reads both): a checkpoint put first is one row in
the thread's namespace, its root event, whose meta holds the data (``type``
``"checkpoint"``, the checkpoint namespace and id, the serialised checkpoint,
metadata and parent id); the thread's events list its checkpoints. Where the
root already existed (pending writes arrived first, or the same id is put
again), the data is a record sourced from the root, and a listing record
sourced from `_keys.THREAD_ROOT` lists it: the layout every checkpoint had
before, which stores written then still hold. Data at the root, when there
is some, is newer than the root's own.

The newest checkpoint of each checkpoint namespace is a branch of the
thread's namespace (`_keys.latest_branch`). It is created by `Store.set_branch`
(logged, with its history) and then moved by the put's own transaction as a
row (`move_latest`): a pointer of the saver's bookkeeping, whose every move
comes with the checkpoint events that transaction adds (and logs), so it
keeps no history or audit line of its own. Earlier versions moved it through
`Store.set_branch` each time; their history rows stay where they are.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ...backends.base import BranchRow
from ...model import Memory
from ...store import Store
from . import _keys as k

CP = "checkpoint"
"""The ``type`` of a checkpoint's data (a root's meta or a record's)."""


def has_root(s: Store, tns: str, root: str) -> bool:
    try:
        s.get_event(root, namespace=tns)
    except KeyError:  # UnknownEvent
        return False
    return True


def ensure_root(s: Store, tns: str, root: str) -> None:
    """The checkpoint's root, made bare where neither its checkpoint nor a write
    on it made it yet (pending writes may arrive before their checkpoint)."""
    if not has_root(s, tns, root):
        s.add_events([{"id": root, "role": "note", "namespace": tns}])


def write_checkpoint(
    s: Store,
    ns: str,
    thread: str,
    cp_ns: str,
    cid: str,
    root: str,
    lineage: list[str],
    data: dict[str, Any],
) -> bool:
    """The writes of `BranchmemSaver.put` in ``s``, inside its transaction: the
    checkpoint ``cid`` as an event of ``ns`` under ``lineage``, its data and
    listing in the thread's bookkeeping namespace, and the thread's latest
    pointer when ``cid`` is the newest of its checkpoint namespace (returned)."""
    tns = k.thread_namespace(ns, thread)
    # The caller's namespace before the thread's, as a store write does: on
    # PostgreSQL a transaction locks each namespace at its first statement.
    # (One call per namespace: a batch across namespaces is planned twice.)
    s.add_events(
        [
            {
                "id": k.checkpoint_event(thread, cp_ns, cid),
                "parent": lineage or None,
                "role": "note",
                "namespace": ns,
                "meta": {"thread_id": thread, "checkpoint_ns": cp_ns, "checkpoint_id": cid},
            }
        ]
    )
    latest = s._engine.backend.get_branch_row(tns, k.latest_branch(cp_ns))
    newest = latest is None or cid >= k.checkpoint_of_root(latest.head)
    # Looked up inside the transaction: a write on this checkpoint may have
    # committed its root since the caller's reads. (Not written blind: a root
    # equal to this one, put before, may have newer data beside it, which a
    # put of the same data again must replace; an add of an equal event
    # writes nothing and says nothing.)
    if not has_root(s, tns, root):  # the common case: one row holds it all
        s.add_events([{"id": root, "role": "note", "namespace": tns, "meta": data}])
    else:
        _write_at_root(s, tns, cp_ns, cid, root, data)
    if newest:
        move_latest(s, tns, cp_ns, root, latest)
    return newest


def move_latest(s: Store, tns: str, cp_ns: str, root: str, row: BranchRow | None) -> None:
    """Point the latest branch of ``cp_ns`` at ``root`` (``row``: the branch as
    read in this transaction, ``None`` where there is none yet)."""
    if row is None:
        s.set_branch(k.latest_branch(cp_ns), root, namespace=tns)
    elif row.head != root:
        moved = replace(row, head=root, updated_at=s._engine.clock())
        s._engine.backend.put_branch_row(tns, moved)


def _write_at_root(
    s: Store, tns: str, cp_ns: str, cid: str, root: str, data: dict[str, Any]
) -> None:
    """The data as a record at an existing root, and the checkpoint's listing."""
    listing = {
        "content": "",
        "sources": [k.THREAD_ROOT],
        "kind": "working",
        "namespace": tns,
        "id": k.listing_record(cp_ns, cid),
        "meta": {"checkpoint_ns": cp_ns, "checkpoint_id": cid},
    }
    old = stored_data(s.memories(at=root, namespace=tns, include_archived=True))
    if old:  # putting the same checkpoint id again replaces its data
        s.supersede(old[-1].id, "", sources=[root], namespace=tns, meta=data)
        s.add_memories([listing])
    else:
        s.add_memories(
            [{"content": "", "sources": [root], "kind": "working", "namespace": tns,
              "meta": data}, listing]
        )  # fmt: skip


def stored_data(records: list[Memory]) -> list[Memory]:
    """The records among ``records`` (a root's) that hold checkpoint data."""
    return [m for m in records if m.meta and m.meta.get("type") == CP]
