"""`Store`'s doors for events: one (under a parent, or on a branch) or many in
one transaction (`branchmem.ops.events`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from contextlib import nullcontext
from typing import TYPE_CHECKING, Any

from ..ops import events as _events
from ..ops import jobs as _jobs

if TYPE_CHECKING:
    from ..model import Event
    from . import Front


def add_event(
    self: Front,
    id: str,
    *,
    parent: str | Sequence[str] | None = None,
    role: str = "user",
    content: str = "",
    namespace: str = "default",
    meta: dict[str, Any] | None = None,
    branch: str | None = None,
    actor: str | None = None,
    expected_head: str | None = None,
    extract: bool = False,
) -> Event:
    """Add one event (a message, tool call, note) under ``parent``.

    ``parent`` may be ``None`` (a root), an id, or a list of ids (a merge),
    and may not have arrived yet: the event then waits, hidden, until it
    does. Re-adding an identical event is a no-op.

    With ``branch=`` (and no ``parent``) the event goes under the branch's
    head and the head advances to it (see `remember` for ``expected_head``).

    ``extract=True`` queues an extraction at the new event in the same
    transaction and returns without waiting for it: a worker (`start_worker`,
    ``branchmem worker``) runs the extractor; `pending` lists what waits.

    >>> store = Store()
    >>> store.add_event("e1", content="你好").id
    'e1'
    """
    engine = self._engine
    queue = _jobs.check_extract(extract)
    with engine.backend.transaction() if queue else nullcontext():
        ev = _events.add_event(
            engine,
            id,
            parent=parent,
            role=role,
            content=content,
            namespace=namespace,
            meta=meta,
            branch=branch,
            actor=actor,
            expected_head=expected_head,
        )
        if queue:
            _jobs.enqueue(engine, ev.namespace, [ev.id])
    return ev


def add_events(
    self: Front,
    events: Iterable[Event | Mapping[str, Any]],
    *,
    actor: str | None = None,
    extract: bool = False,
) -> list[Event]:
    """Add many events in one transaction, in the given order.

    Each item is an `Event` or a dict with ``id`` and optionally
    ``parent``, ``role``, ``content``, ``namespace``, ``meta``. Parents may
    come later in the list (or in a later call). If any item is invalid,
    nothing is added. The audit log gets one line per namespace.
    ``extract=True`` queues an extraction at each new tip of the batch (an
    event no other event of it names as a parent), as `add_event` does.

    >>> store = Store()
    >>> [e.id for e in store.add_events([{"id": "b", "parent": "a"}, {"id": "a"}])]
    ['b', 'a']
    """
    if _jobs.check_extract(extract):
        with self._engine.backend.transaction():
            done = _events.add_events(self._engine, events, actor=actor)
            for ns, tips in _jobs.tips_of(done).items():
                _jobs.enqueue(self._engine, ns, tips)
        return done
    return _events.add_events(self._engine, events, actor=actor)
