"""`Store`'s doors for a record's life and the store's upkeep: use, score,
archive and restore (`branchmem.ops.lifecycle`); erasure and the write-ahead
log (`branchmem.ops.purge`); what the store runs on (`branchmem.ops.info`);
the audit log (`branchmem.ops.audit`)."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from ..ops import audit as _audit
from ..ops import info as _info
from ..ops import lifecycle as _lifecycle
from ..ops import purge as _purge

if TYPE_CHECKING:
    from ..branch_types import AuditEntry
    from ..model import Memory
    from ..searchlog import QueryLog
    from . import Front


def touch(
    self: Front,
    ids: Iterable[str],
    *,
    namespace: str = "default",
    now: float | None = None,
    actor: str | None = None,
) -> None:
    """Record one use of each memory (it raises their effective score).

    Reads never record use by themselves; pass ``touch=True`` to
    `memories` or call this.

    >>> from branchmem import Store
    >>> store = Store()
    >>> _ = store.add_event("e1")
    >>> m = store.add_memory("x", sources=["e1"])
    >>> before = store.score(m.id)
    >>> store.touch([m.id])
    >>> store.score(m.id) > before
    True
    """
    return _lifecycle.touch(self._engine, ids, namespace=namespace, now=now, actor=actor)


def score(
    self: Front, memory_id: str, *, now: float | None = None, namespace: str = "default"
) -> float:
    """The effective score of a memory at ``now``: importance × decay × use boost.

    >>> from branchmem import Store
    >>> store = Store(clock=lambda: 0.0)
    >>> _ = store.add_event("e1")
    >>> m = store.add_memory("x", sources=["e1"], kind="working", importance=0.8)
    >>> store.score(m.id, now=6 * 3600)  # one half-life of "working" later
    0.4
    """
    return _lifecycle.score(self._engine, memory_id, now=now, namespace=namespace)


def archive_expired(
    self: Front, now: float | None = None, *, namespace: str = "default", actor: str | None = None
) -> list[str]:
    """Move every record expired at ``now`` to the archive; returns their ids.

    >>> from branchmem import Store
    >>> store = Store(clock=lambda: 100.0)
    >>> _ = store.add_event("e1")
    >>> m = store.add_memory("x", sources=["e1"], expires_at=150.0)
    >>> store.archive_expired(now=200.0) == [m.id]
    True
    >>> store.memories(at="e1", now=120.0, include_archived=True) == [m]
    True
    """
    return _lifecycle.archive_expired(self._engine, now, namespace=namespace, actor=actor)


def restore(
    self: Front, memory_id: str, *, namespace: str = "default", actor: str | None = None
) -> Memory:
    """Bring a record back from the archive, or back from expiry; its expiry no
    longer hides it. A record that is neither raises `InvalidInput`.

    >>> from branchmem import Store
    >>> store = Store(clock=lambda: 100.0)
    >>> _ = store.add_event("e1")
    >>> m = store.add_memory("x", sources=["e1"], expires_at=150.0)
    >>> _ = store.archive_expired(now=200.0)
    >>> store.restore(m.id) == m, store.memories(at="e1", now=300.0) == [m]
    (True, True)
    """
    return _lifecycle.restore(self._engine, memory_id, namespace=namespace, actor=actor)


def purge(
    self: Front,
    *,
    events: Sequence[str] = (),
    memories: Sequence[str] = (),
    namespace: str = "default",
    whole_namespace: bool = False,
    actor: str | None = None,
    query_logs: Sequence[QueryLog | str | os.PathLike[str]] = (),
) -> list[str]:
    """Really delete, for erasure requests. Returns the ids removed or erased:
    the events, then the records in the order they were written.

    ``events`` are blanked (content and meta) and every record sourced from
    them is deleted; ``memories`` are deleted; records derived from deleted
    ones (their retractions, conflicts naming them, consolidations listing
    them) go too.
    ``whole_namespace=True`` deletes the namespace's events, records,
    branches, snapshots and name (its audit log stays, detached, without
    ids), and purges the namespaces derived from it the same way: exactly
    the LangGraph integration's ``<namespace>/langgraph`` and the thread
    namespaces it lists (`branchmem.derived`; ``alice2`` or ``alice/work``
    are other tenants and stay). It returns the namespace, then those.
    After the purge, the store's query logs (every log its searches wrote
    to) and ``query_logs`` (more `QueryLog` objects or paths) lose the
    searches of the namespace that returned a purged record (every search
    of the namespace for ``whole_namespace``): see `QueryLog.purge`.

    >>> from branchmem import Store
    >>> store = Store()
    >>> _ = store.add_event("e1", content="我的身份证号是……")
    >>> m = store.add_memory("用户的身份证号……", sources=["e1"])
    >>> store.purge(events=["e1"]) == ["e1", m.id]
    True
    >>> store.get_event("e1").content, store.memories(at="e1")
    ('', [])
    """
    return _purge.purge(
        self._engine,
        events=events,
        memories=memories,
        namespace=namespace,
        whole_namespace=whole_namespace,
        actor=actor,
        query_logs=query_logs,
    )


def checkpoint(self: Front) -> bool:
    """On SQLite, copy the write-ahead log into the store file and truncate
    it, finishing a purge whose truncation a reader held back. True when it
    was complete (no other connection's read held it back); always True
    on backends without a log file of their own."""
    return _purge.checkpoint(self._engine)


def erasure_pending(self: Front) -> bool:
    """Does the SQLite write-ahead log (may) still hold bytes of a purge,
    because another connection was reading? The next write, `checkpoint`
    or ``close`` (of any store on the file) truncates it then."""
    return _purge.erasure_pending(self._engine)


def info(self: Front) -> dict[str, Any]:
    """What the store runs on: the backend, and whether vectors are ranked by
    the server's pgvector index (docs/scaling.md#with-pgvector).

    >>> from branchmem import Store
    >>> Store().info()["vectors"]["pgvector"] is None
    True
    """
    return _info.info(self._engine)


def audit(self: Front, namespace: str = "default", since: float | None = None) -> list[AuditEntry]:
    """The audit log of ``namespace``, oldest first; ``since`` keeps entries at
    or after that time.

    >>> from branchmem import Store
    >>> store = Store()
    >>> _ = store.add_event("e1")
    >>> _ = store.create_branch("main", at="e1", actor="alice")
    >>> [(a.op, a.ids, a.actor) for a in store.audit("default")][-1]
    ('create_branch', ('main', 'e1'), 'alice')
    """
    return _audit.audit(self._engine, namespace, since)
