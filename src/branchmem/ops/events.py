"""Adding events: one, many, or one written on a branch (`ops.heads`).

A batch is checked whole before anything of it is written, and lands in one
transaction; a large one of one namespace may stream (`ops.stream`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..bulk import gc_paused
from ..engine import Engine
from ..errors import InvalidInput
from ..model import Event
from ..notices import held
from ..validate import check_actor, check_batch, check_namespace
from ..validate_batch import events_from
from .audit import log
from .heads import write_on_branch
from .ingest import ingest_counted, plan
from .stream import add_streamed


def add_event(
    engine: Engine,
    id: str,
    *,
    parent: str | Sequence[str] | None,
    role: str,
    content: str,
    namespace: str,
    meta: dict[str, Any] | None,
    branch: str | None,
    actor: str | None,
    expected_head: str | None,
) -> Event:
    """`Store.add_event`: under ``parent``, or under ``branch``'s head."""
    if branch is not None:
        if parent is not None:
            raise InvalidInput(
                "pass either parent= or branch=, not both: a branch write goes "
                "under the branch's head"
            )
        fields = {"id": id, "role": role, "content": content, "meta": meta}
        ns = check_namespace(namespace)
        ev, _ = write_on_branch(
            engine,
            ns,
            branch,
            fields,
            lambda _eid: [],
            why="add_event",
            actor=actor,
            expected_head=expected_head,
        )
        return ev
    if expected_head is not None:
        raise InvalidInput("expected_head= applies to branch writes; pass branch= too")
    item = {
        "id": id,
        "parent": parent,
        "role": role,
        "content": content,
        "namespace": namespace,
        "meta": meta,
    }
    return add_events(engine, [item], actor=actor)[0]


def add_events(
    engine: Engine, events: Iterable[Event | Mapping[str, Any]], *, actor: str | None
) -> list[Event]:
    """`Store.add_events`."""
    now = engine.clock()
    actor = check_actor(actor)
    items = events if isinstance(events, list) else check_batch(events, "add_events", "event")
    with held(), gc_paused(len(items)):
        return _add_events(engine, items, now, actor)


def _add_events(
    engine: Engine, events: list[Event | Mapping[str, Any]], now: float, actor: str | None
) -> list[Event]:
    streamed = add_streamed(engine, events, now, actor)
    if streamed is not None:
        return streamed
    checked = events_from(events, now)
    namespaces = {e.namespace for e in checked}
    with engine.backend.transaction():
        if len(namespaces) == 1:
            ns = namespaces.pop()
            done, new = ingest_counted(engine, ns, checked)
            if new:  # a re-add that changes nothing writes no audit line
                log(engine, ns, "add_events", [e.id for e in done], actor, now)
            return done
        out: list[Event] = list(checked)
        groups: dict[str, list[int]] = {}  # one pass, not one scan per namespace
        for i, e in enumerate(checked):
            groups.setdefault(e.namespace, []).append(i)
        parts = {ns: groups[ns] for ns in sorted(groups)}
        # Every namespace's part is planned (and so checked) before any is
        # written: a backend without rollback must not keep the first parts.
        for ns, idxs in parts.items():
            plan(engine, ns, [checked[i] for i in idxs])
        for ns, idxs in parts.items():
            done, new = ingest_counted(engine, ns, [checked[i] for i in idxs])
            for i, ev in zip(idxs, done, strict=True):
                out[i] = ev
            if new:
                log(engine, ns, "add_events", [checked[i].id for i in idxs], actor, now)
        return out
