"""Namespaces derived from another one: the rule a whole-namespace purge follows.

A namespace ``N`` owns these other namespaces, and purging ``N`` whole
(`Store.purge` with ``whole_namespace=True``) purges them with it:

- ``N/langgraph``: the LangGraph integration's list of ``N``'s threads (one
  record per thread, id ``thread:<thread as a JSON list>``);
- ``N/langgraph/<thread as a JSON list>`` for every thread that list names:
  one thread's checkpoints, pending writes and listings.

Nothing else is derived: ``alice2``, ``alice/work`` or a thread namespace
that ``alice/langgraph`` does not list are other tenants, left alone by a
purge of ``alice``. (A thread is listed before anything is written in its
namespace and unlisted only after that namespace is purged, so every thread
namespace the integration wrote is found from the list.)
"""

from __future__ import annotations

import functools
import json

REGISTRY_SUFFIX = "/langgraph"
"""What ``N``'s thread list namespace adds to ``N``."""
THREAD_PREFIX = "thread:"
"""The id prefix of a thread's record in the thread list namespace."""


@functools.lru_cache(maxsize=8192)  # (a LangGraph step builds each name several times)
def _j(thread: str) -> str:
    # ensure_ascii keeps names printable whatever the caller's thread ids hold
    return json.dumps([thread], separators=(",", ":"))


def registry_namespace(ns: str) -> str:
    """The namespace that lists ``ns``'s LangGraph threads."""
    return ns + REGISTRY_SUFFIX


def thread_namespace(ns: str, thread: str) -> str:
    """The namespace of one LangGraph thread of ``ns``."""
    return f"{registry_namespace(ns)}/{_j(thread)}"


def thread_record(thread: str) -> str:
    """The id of ``thread``'s record in `registry_namespace`."""
    return THREAD_PREFIX + _j(thread)


def thread_namespace_of_record(ns: str, record_id: str) -> str | None:
    """The thread namespace a record of ``ns``'s `registry_namespace` names
    (``None`` for a record that names no thread)."""
    if not record_id.startswith(THREAD_PREFIX):
        return None
    return f"{registry_namespace(ns)}/{record_id[len(THREAD_PREFIX) :]}"
