"""Where the LangGraph integration keeps things in a `Store`, shared by the saver
and the store so that their ids always agree.

In the caller's namespace (the one memories are gated in):

- every checkpoint is an event ``lg:["cp", thread, checkpoint_ns, checkpoint_id]``;
- every task of the root graph that writes to the store gets an event
  ``lg:["task", thread, checkpoint_id, task_id]`` whose parent is the checkpoint
  it runs on. Its store writes are sourced from it, and the checkpoint that the
  step produces descends from it.

Bookkeeping (checkpoint data, pending writes, listings) lives in namespaces of
its own, so that it never shows up in, or slows down, a gated read:
``<ns>/langgraph`` lists the threads, ``<ns>/langgraph/<thread>`` holds one
thread's checkpoints. Their names come from `branchmem.derived`, the rule by
which purging ``<ns>`` whole purges them too.
"""

from __future__ import annotations

import functools
import json

from ...derived import registry_namespace as registry_namespace
from ...derived import thread_namespace as thread_namespace
from ...derived import thread_record as thread_record

THREADS_ROOT = "threads"
"""The root event, in the registry namespace, that every thread's record names."""
THREAD_ROOT = "thread"
"""The root event, in a thread's namespace, that every listing record names."""


@functools.lru_cache(maxsize=8192)  # (a step builds each id several times)
def _j(*parts: str) -> str:
    # ensure_ascii keeps ids printable whatever the caller's thread ids hold
    return json.dumps(list(parts), separators=(",", ":"))


def checkpoint_event(thread: str, checkpoint_ns: str, checkpoint_id: str) -> str:
    return "lg:" + _j("cp", thread, checkpoint_ns, checkpoint_id)


def task_event(thread: str, checkpoint_id: str, task_id: str) -> str:
    return "lg:" + _j("task", thread, checkpoint_id, task_id)


def task_parent(task_event_id: str) -> str | None:
    """The checkpoint event a `task_event` id runs on (``None`` for other ids)."""
    if not task_event_id.startswith('lg:["task",'):
        return None
    _, thread, cid, _ = json.loads(task_event_id[3:])
    return checkpoint_event(thread, "", cid)


def checkpoint_root(checkpoint_ns: str, checkpoint_id: str) -> str:
    """The bookkeeping event a checkpoint's data, writes and task links name."""
    return "cp:" + _j(checkpoint_ns, checkpoint_id)


def listing_record(checkpoint_ns: str, checkpoint_id: str) -> str:
    return "ls:" + _j(checkpoint_ns, checkpoint_id)


def checkpoint_of_root(root_id: str) -> str:
    """The checkpoint id in a `checkpoint_root` id."""
    return str(json.loads(root_id[3:])[1])


def latest_branch(checkpoint_ns: str) -> str:
    """The branch, in a thread's namespace, that points at the newest checkpoint
    of ``checkpoint_ns`` (a hash: branch names hold no whitespace)."""
    import hashlib

    return "latest-" + hashlib.sha256(checkpoint_ns.encode()).hexdigest()[:32]


SHARED_EVENT = "lg:" + _j("shared")
"""The event, in the caller's namespace, that items written outside any run
are sourced from (a root: every long-term view holds it)."""
