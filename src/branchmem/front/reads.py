"""`Store`'s reads: what is visible at an anchor and why, the path to it, and
the listings of events and records, gate or no gate (`branchmem.ops.reads`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..ops import jobs as _jobs
from ..ops import reads as _reads

if TYPE_CHECKING:
    from ..model import Event, Explanation, Memory
    from . import Front


def memories(
    self: Front,
    *,
    at: str | Sequence[str] | None,
    kind: str | None = None,
    namespace: str = "default",
    now: float | None = None,
    as_of: float | None = None,
    include_archived: bool = False,
    touch: bool = False,
    wait: float | None = None,
) -> list[Memory]:
    """Every record visible at ``at`` (an event id or branch name), oldest first.

    ``at=None`` returns ``[]``: a read without an anchor sees nothing.
    ``at`` may also be a list of anchors in priority order (a scope chain):
    each record visible from any of them comes once, with ``via`` naming
    the first anchor that sees it, earlier anchors' records first.

    Time (see `branchmem.ops.lifecycle`): records expired at ``now`` (default:
    the store's clock), archived, or outside their ``valid_from``/``valid_to``
    are left out; ``include_archived=True`` keeps archived and expired ones.
    ``as_of=t`` answers as the store would have at time ``t``.
    ``touch=True`` records a use of every record returned.
    ``wait=s`` first waits up to ``s`` seconds for an extraction queued at
    the anchor (``add_event(..., extract=True)``); without it the read takes
    what is there.

    >>> Store().memories(at=None)
    []
    """
    _jobs.wait_at(self._engine, namespace, at, wait)
    return _reads.memories(
        self._engine,
        at=at,
        kind=kind,
        namespace=namespace,
        now=now,
        as_of=as_of,
        include_archived=include_archived,
        touch=touch,
    )


def visible(self: Front, memory_id: str, *, at: str | None, namespace: str = "default") -> bool:
    """Is ``memory_id`` visible at ``at``? ``at=None`` is always False.

    >>> store = Store()
    >>> _ = store.add_event("e1")
    >>> m = store.add_memory("x", sources=["e1"])
    >>> store.visible(m.id, at="e1"), store.visible(m.id, at=None)
    (True, False)
    """
    return _reads.visible(self._engine, memory_id, at=at, namespace=namespace)


def explain(
    self: Front,
    memory_id: str,
    *,
    at: str | None,
    namespace: str = "default",
    now: float | None = None,
) -> Explanation:
    """Why ``memory_id`` is visible or hidden at ``at``: each source's state, and
    which retraction hides it. ``visible`` is the gate's answer, like
    `visible`; when expiry, validity or the archive hides the record from
    reads at ``now`` (default: the store's clock), ``hidden_by_time`` and
    the reason say so.

    >>> store = Store()
    >>> _ = store.add_events([{"id": "e1"}, {"id": "e2", "parent": "e1"},
    ...                       {"id": "e2b", "parent": "e1"}])
    >>> m = store.add_memory("用户下个月搬去成都", sources=["e2"])
    >>> print(store.explain(m.id, at="e2b"))
    hidden at 'e2b': source 'e2' is not on the path to 'e2b'
    """
    return _reads.explain(self._engine, memory_id, at=at, namespace=namespace, now=now)


def path(
    self: Front, at: str | None, namespace: str = "default", *, last: int | None = None
) -> list[Event]:
    """The anchor's ancestors and itself, root first (a topological order for merges).

    An anchor still waiting for a parent has no path yet (``[]``).
    ``last=n`` returns only the path's last ``n`` events (below a merge, the
    ``n`` nearest ancestors), reading about ``n`` events instead of the
    whole path.

    >>> store = Store()
    >>> _ = store.add_events([{"id": "e1"}, {"id": "e2", "parent": "e1"}])
    >>> [e.id for e in store.path("e2")]
    ['e1', 'e2']
    """
    return _reads.path(self._engine, at, namespace, last=last)


def get_event(self: Front, event_id: str, namespace: str = "default") -> Event:
    """The stored event, or `UnknownEvent`."""
    return _reads.get_event(self._engine, event_id, namespace)


def events(
    self: Front, *, namespace: str = "default", offset: int = 0, limit: int = 1000
) -> list[Event]:
    """Every event of the namespace in arrival order (on PostgreSQL: by write
    time, then place in the graph), ``limit`` at a time from ``offset``: for
    inspection and export (the gate is about derived records;
    use `path` for one branch's messages).

    >>> store = Store()
    >>> _ = store.add_events([{"id": "e1"}, {"id": "e2", "parent": "e1"},
    ...                       {"id": "e2b", "parent": "e1"}])
    >>> [e.id for e in store.events(offset=1)]
    ['e2', 'e2b']
    """
    return _reads.events(self._engine, namespace=namespace, offset=offset, limit=limit)


def records(
    self: Front, *, namespace: str = "default", offset: int = 0, limit: int = 1000
) -> list[Memory]:
    """Every stored record of the namespace in write order, visible or not,
    ``limit`` at a time from ``offset``. The gate does not apply: this is for
    inspection and administration. What a model may see is `memories(at=)`;
    `explain` says why a record is hidden at an anchor.

    >>> store = Store()
    >>> _ = store.add_events([{"id": "e1"}, {"id": "e1b"}])
    >>> _ = store.add_memory("A", sources=["e1"]); _ = store.add_memory("B", sources=["e1b"])
    >>> [m.content for m in store.records()], [m.content for m in store.memories(at="e1")]
    (['A', 'B'], ['A'])
    """
    return _reads.records(self._engine, namespace=namespace, offset=offset, limit=limit)


def get_memory(self: Front, memory_id: str, namespace: str = "default") -> Memory:
    """The stored record (whatever its visibility), or `UnknownMemory`."""
    return _reads.get_memory(self._engine, memory_id, namespace)
