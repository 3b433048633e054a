"""Named branches: movable pointers to events, written on like commits.

A branch is a row ``name -> head`` (`ops.heads` moves it). Nothing here
changes what is visible: that stays the gate's job. Branch operations only
add events, add gated records, and move pointers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..backends.base import BranchRow
from ..branch_types import HeadMove
from ..engine import Engine
from ..errors import BranchExists, InvalidInput, NameClash, UnknownBranch, UnknownEvent
from ..gate import resolve_event
from ..model import Branch, Memory, new_event_id, new_record_id
from ..validate import (
    check_actor,
    check_id,
    check_name,
    check_namespace,
    check_time,
    memory_from,
    show,
)
from .audit import log
from .heads import add_moves, branch_row, check_expected, make_branch, move_head, write_on_branch
from .reads import memories


def create_branch(
    engine: Engine, name: str, *, at: str, namespace: str, actor: str | None
) -> Branch:
    """`Store.create_branch`."""
    ns = check_namespace(namespace)
    name = engine.identifier(check_name(name), "branch name")
    actor = check_actor(actor)
    if not isinstance(at, str) or not at:
        raise InvalidInput(f"`at` must be an event id or a branch name, got {show(at)}")
    now = engine.clock()
    b = engine.backend
    with b.transaction():
        existing = b.get_branch_row(ns, name)
        if existing is not None:
            raise BranchExists(name, ns, existing.head)
        if b.get_events(ns, [name]):
            raise NameClash(name, ns, "an event")
        head = resolve_event(engine, ns, at)
        parent = at if head != at else None
        row = BranchRow(name, head, head, parent, now, now)
        b.put_branch_row(ns, row)
        add_moves(engine, ns, [HeadMove(name, None, head, "create", actor, now, ns)])
        log(engine, ns, "create_branch", [name, head], actor, now)
    return make_branch(row, ns)


def remember(
    engine: Engine,
    content: str,
    *,
    branch: str,
    kind: str,
    key: str | None,
    importance: float,
    namespace: str,
    meta: dict[str, Any] | None,
    id: str | None,
    event_id: str | None,
    role: str,
    actor: str | None,
    expected_head: str | None,
    expires_at: float | None,
    valid_from: float | None,
    valid_to: float | None,
) -> Memory:
    """`Store.remember`."""
    ns = check_namespace(namespace)
    eid = new_event_id() if event_id is None else check_id(event_id, "event id")
    now = engine.clock()
    mem = memory_from(
        {
            "content": content,
            "sources": [eid],
            "kind": kind,
            "key": key,
            "importance": importance,
            "namespace": ns,
            "meta": meta,
            "id": id,
            "expires_at": expires_at,
            "valid_from": valid_from,
            "valid_to": valid_to,
        },
        now,
        new_record_id,
    )
    if engine.policy.ttls:
        mem = engine.policy.with_ttl(mem)
    fields = {"id": eid, "role": role, "content": content}
    _, stored = write_on_branch(
        engine,
        ns,
        branch,
        fields,
        lambda _eid: [mem],
        why="remember",
        actor=actor,
        expected_head=expected_head,
    )
    return stored[0]


def set_branch(
    engine: Engine,
    name: str,
    event_id: str,
    *,
    namespace: str,
    actor: str | None,
    expected_head: str | None,
) -> Branch:
    """`Store.set_branch`."""
    ns = check_namespace(namespace)
    name = engine.identifier(check_name(name), "branch name")
    check_id(event_id, "event id")
    actor = check_actor(actor)
    if expected_head is not None:
        check_id(expected_head, "expected_head")
    now = engine.clock()
    b = engine.backend
    with b.transaction():
        found = b.get_events(ns, [name, event_id])
        if name in found:
            raise NameClash(name, ns, "an event")
        if event_id not in found:
            raise UnknownEvent(event_id, ns)
        row = b.get_branch_row(ns, name)
        if row is None and expected_head is not None:
            raise UnknownBranch(name, ns)
        if row is not None:
            check_expected(row, ns, expected_head)
        if row is None:
            row = BranchRow(name, event_id, event_id, None, now, now)
            b.put_branch_row(ns, row)
            add_moves(engine, ns, [HeadMove(name, None, event_id, "create", actor, now, ns)])
            log(engine, ns, "create_branch", [name, event_id], actor, now)
        elif row.head != event_id:
            move_head(engine, ns, row, event_id, "set", actor, now)
            log(engine, ns, "set_branch", [name, event_id], actor, now)
    return make_branch(row, ns)


def branch_head(engine: Engine, name: str, *, namespace: str) -> str:
    """`Store.branch_head`."""
    ns = check_namespace(namespace)
    b = engine.backend
    with b.reading():
        head = b.get_branch(ns, check_id(name, "branch name"))
    if head is None:
        raise UnknownBranch(name, ns)
    return head


def branches(engine: Engine, *, namespace: str, count: bool) -> list[Branch]:
    """`Store.branches`."""
    ns = check_namespace(namespace)
    b = engine.backend

    def visible_at(head: str) -> int:
        return len(
            memories(
                engine,
                at=head,
                kind=None,
                namespace=ns,
                now=None,
                as_of=None,
                include_archived=False,
                touch=False,
            )
        )

    with b.reading():
        rows = b.list_branch_rows(ns)
        return [make_branch(r, ns, visible_at(r.head) if count else None) for r in rows]


def delete_branch(engine: Engine, name: str, *, namespace: str, actor: str | None) -> None:
    """`Store.delete_branch`."""
    ns = check_namespace(namespace)
    actor = check_actor(actor)
    now = engine.clock()
    with engine.backend.transaction():
        _delete(engine, ns, branch_row(engine, ns, name), actor, now)


def _delete(engine: Engine, ns: str, row: BranchRow, actor: str | None, now: float) -> None:
    engine.backend.delete_branch(ns, row.name)
    add_moves(engine, ns, [HeadMove(row.name, row.head, None, "delete", actor, now, ns)])
    log(engine, ns, "delete_branch", [row.name, row.head], actor, now)


def prune_branches(
    engine: Engine,
    prefix: str,
    older_than: float,
    *,
    namespace: str,
    now: float | None,
    actor: str | None,
    check: Callable[[str], object] | None,
) -> list[str]:
    """`Store.prune_branches`."""
    ns = check_namespace(namespace)
    if isinstance(prefix, str) and prefix.endswith("/"):
        prefix = prefix[:-1]  # "tmp/" and "tmp" name the same subtree
    prefix = check_name(prefix, "branch prefix")
    age = check_time(older_than, "older_than")
    if age is None or age < 0:
        raise InvalidInput(f"older_than must be a number of seconds >= 0, got {show(older_than)}")
    t = check_time(now, "now")
    actor = check_actor(actor)
    when = engine.clock()
    cutoff = (when if t is None else t) - age
    b = engine.backend
    with b.transaction():
        doomed = [
            row
            for row in b.list_branch_rows(ns)
            if row.name.startswith(prefix + "/") and row.updated_at <= cutoff
        ]
        if check is not None:
            for row in doomed:
                check(row.name)
        for row in doomed:
            _delete(engine, ns, row, actor, engine.clock())
        removed = [row.name for row in doomed]
        if removed:
            log(engine, ns, "prune_branches", removed, actor, when)
    return removed
