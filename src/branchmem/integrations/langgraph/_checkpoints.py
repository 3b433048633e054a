"""The writes that store one LangGraph checkpoint (`write_checkpoint`)."""

from __future__ import annotations

from typing import Any

from ...model import Memory
from ...store import Store
from . import _keys as k


def write_checkpoint(
    s: Store,
    ns: str,
    thread: str,
    cp_ns: str,
    cid: str,
    root: str,
    lineage: list[str],
    old: list[Memory],
    data: dict[str, Any],
    newest: bool,
) -> None:
    """The writes of `BranchmemSaver.put` in ``s``: the checkpoint ``cid`` as an
    event of ``ns`` under ``lineage``, its data (``old``: what it replaces) and
    listing in the thread's bookkeeping namespace, and the thread's latest
    pointer when ``newest`` (``cid`` is the newest of its checkpoint namespace)."""
    tns = k.thread_namespace(ns, thread)
    # The caller's namespace before the thread's, as a store write does: on
    # PostgreSQL a transaction locks each namespace at its first statement.
    # (One call per namespace: a batch across namespaces is planned twice.
    # The root is the same event each time, so its add cannot fail once
    # the checkpoint's did not.)
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
    s.add_events([{"id": root, "role": "note", "namespace": tns}])
    listing = {
        "content": "",
        "sources": [k.THREAD_ROOT],
        "kind": "working",
        "namespace": tns,
        "id": k.listing_record(cp_ns, cid),
        "meta": {"checkpoint_ns": cp_ns, "checkpoint_id": cid},
    }
    if old:  # putting the same checkpoint id again replaces its data
        s.supersede(old[-1].id, "", sources=[root], namespace=tns, meta=data)
        s.add_memories([listing])
    else:
        s.add_memories(
            [{"content": "", "sources": [root], "kind": "working", "namespace": tns,
              "meta": data}, listing]
        )  # fmt: skip
    if newest:
        s.set_branch(k.latest_branch(cp_ns), root, namespace=tns)
