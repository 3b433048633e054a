"""Named branches: movable pointers to events, written on like commits.

A branch is a row ``name -> head``. Writing on a branch appends an event under
its head and advances the head, inside one write transaction: the backend
admits one writer at a time (a lock in memory, ``BEGIN IMMEDIATE`` in SQLite,
also across processes, an advisory lock per namespace in PostgreSQL), so the
head read at the start of the transaction is still the head when it is moved,
and a second writer builds on the first one's event. ``expected_head=`` adds
an explicit compare-and-set for callers who read the head earlier
(`BranchConflict` if it moved): every head move (`set_branch`, `rollback`,
`merge`, `resolve`, `remember`, ``add_event(branch=)``) checks it and moves
the head in the transaction that logs the move, and on PostgreSQL the move
itself is ``UPDATE ... WHERE head = <the head checked>`` (`move_head`), so
of several processes that read one head, one moves it.

Nothing here changes what is visible: that stays the gate's job. Branch
operations only add events, add gated records, and move pointers.
"""

from __future__ import annotations

import uuid
from dataclasses import replace
from typing import TYPE_CHECKING, Any, cast

from .backends.base import BranchRow, HeadSwap, Pos
from .branch_types import AuditEntry, HeadMove
from .errors import (
    BranchConflict,
    BranchExists,
    InvalidInput,
    NameClash,
    UnknownBranch,
    UnknownEvent,
)
from .lineage import ancestor_ranges, in_ranges
from .model import Branch, Event, Memory
from .validate import check_id, check_name, check_namespace, event_from, memory_from, show

if TYPE_CHECKING:
    from collections.abc import Callable

    from .store import Store


def new_event_id() -> str:
    return "ev_" + uuid.uuid4().hex


def new_record_id() -> str:
    return "m_" + uuid.uuid4().hex


# ------------------------------------------------------------------ helpers
def position(s: Store, ns: str, event_id: str) -> Pos | None:
    row = s._b.get_events(ns, [event_id]).get(event_id)
    return None if row is None else row.pos


def is_ancestor(s: Store, ns: str, a: str, b: str) -> bool:
    """Is event ``a`` an ancestor of event ``b`` (or ``b`` itself)?"""
    rows = s._b.get_events(ns, [a, b])
    ra, rb = rows.get(a), rows.get(b)
    if ra is None or rb is None or ra.pos is None or rb.pos is None:
        return False
    return in_ranges(ra.pos, ancestor_ranges(rb.pos, s._seg_parents(ns)))


def branch_row(s: Store, ns: str, name: str) -> BranchRow:
    row = s._b.get_branch_row(ns, check_id(name, "branch name"))
    if row is None:
        raise UnknownBranch(name, ns)
    return row


def check_expected(row: BranchRow, ns: str, expected: str | None) -> None:
    if expected is not None and row.head != expected:
        raise BranchConflict(row.name, ns, expected, row.head)


def move_head(
    s: Store, ns: str, row: BranchRow, head: str, why: str, actor: str | None, now: float
) -> None:
    """Point ``row`` at ``head`` and log the move (inside the caller's transaction).

    A backend with `HeadSwap` moves it only if it is still at ``row.head``
    (`BranchConflict` if another writer moved it since it was read)."""
    old = row.head
    if isinstance(s._b, HeadSwap):
        if not s._b.swap_head(ns, row.name, old, head, now):
            now_at = s._b.get_branch(ns, row.name)
            raise BranchConflict(row.name, ns, old, now_at or "(deleted)")
        row.head, row.updated_at = head, now
    else:
        row.head, row.updated_at = head, now
        s._b.put_branch_row(ns, row)
    add_moves(s, ns, [HeadMove(row.name, old, head, why, actor, now, ns)])


def add_moves(s: Store, ns: str, moves: list[HeadMove]) -> None:
    """Record head moves; their actors are text, redacted on a redacting store."""
    if s._scrub is not None:
        moves = [replace(m, actor=m.actor and s._redact(m.actor)) for m in moves]
    s._b.add_head_moves(ns, moves)


def log(s: Store, ns: str, op: str, ids: list[str], actor: str | None, now: float) -> None:
    """Write an audit line. On a redacting store the actor is redacted, and so are
    the ids (ids stored through it hold nothing to redact; one written before it
    was given a redactor, being purged, must not be logged again)."""
    if s._scrub is not None:
        actor = actor and s._redact(actor)
        ids = [s._redact(i) for i in ids]
    s._b.add_audit(ns, [AuditEntry(now, op, tuple(ids), actor, ns)])


def check_actor(actor: Any) -> str | None:
    return None if actor is None else check_id(actor, "actor")


def resolve_event(s: Store, ns: str, at: str) -> str:
    """The event id ``at`` names: a branch's head or an event id (`UnknownAnchor`)."""
    event_id, _ = s._anchor(ns, at)
    return event_id


def write_on_branch(
    s: Store,
    ns: str,
    branch: str,
    fields: dict[str, Any],
    make_records: Callable[[str], list[Memory]],
    *,
    why: str,
    actor: str | None,
    expected_head: str | None,
) -> tuple[Event, list[Memory]]:
    """Append the event ``fields`` under ``branch``'s head, store ``make_records(event_id)``
    sourced from it, and advance the head: all or nothing.

    If the head moved between reading and moving it (only where writers run at
    once, `HeadSwap`), nothing was written: without ``expected_head`` it starts
    over on the new head (`HEAD_TRIES` times in all)."""
    actor = check_actor(actor)
    if expected_head is not None:
        check_id(expected_head, "expected_head")
    for tries_left in reversed(range(HEAD_TRIES)):
        now = s._clock()
        try:
            with s._b.transaction():
                row = branch_row(s, ns, branch)
                check_expected(row, ns, expected_head)
                ev = event_from({**fields, "parent": row.head, "namespace": ns}, now)
                # As stored: a record refused for its ids fails before the event is written.
                records = s._redacted(make_records(ev.id))
                # Checked before anything is written: the memory backend cannot roll back.
                if s._b.get_events(ns, [ev.id]):
                    raise InvalidInput(
                        f"event {ev.id!r} already exists in namespace {ns!r}; a branch write "
                        "appends a new event, so pass a new id (or none, and one is made)"
                    )
                if records and s._b.get_records(ns, [m.id for m in records]):
                    raise InvalidInput(
                        f"a record with id {show(records[0].id)} already exists in namespace "
                        f"{show(ns)}; pass a new id (or none, and one is made)"
                    )
                (ev,) = s._ingest(ns, [ev])
                stored = s._insert_records(ns, records) if records else []
                move_head(s, ns, row, ev.id, why, actor, now)
                log(s, ns, why, [branch, ev.id, *(m.id for m in stored)], actor, now)
            return ev, stored
        except BranchConflict:
            if expected_head is not None or not tries_left:
                raise
    raise AssertionError("unreachable: the last try returns or raises")


HEAD_TRIES = 5


def make_branch(row: BranchRow, ns: str, count: int | None = None) -> Branch:
    return Branch(
        row.name, row.head, ns, row.fork_point, row.parent, row.created_at, row.updated_at, count
    )


# ------------------------------------------------------------------ the API
class BranchOps:
    """`Store` methods for named branches (mixed into `Store`)."""

    def create_branch(
        self, name: str, *, at: str, namespace: str = "default", actor: str | None = None
    ) -> Branch:
        """Fork a new branch at an event, or at another branch's current head.

        The branch sees what ``at`` saw and nothing written there later.

        >>> from branchmem import Store
        >>> store = Store()
        >>> _ = store.add_event("e1", content="你好")
        >>> store.create_branch("user_001/main", at="e1").head
        'e1'
        >>> store.create_branch("user_001/session_a", at="user_001/main").parent
        'user_001/main'
        """
        s = cast("Store", self)
        ns = check_namespace(namespace)
        name = s._identifier(check_name(name), "branch name")
        actor = check_actor(actor)
        if not isinstance(at, str) or not at:
            raise InvalidInput(f"`at` must be an event id or a branch name, got {show(at)}")
        now = s._clock()
        with s._b.transaction():
            existing = s._b.get_branch_row(ns, name)
            if existing is not None:
                raise BranchExists(name, ns, existing.head)
            if s._b.get_events(ns, [name]):
                raise NameClash(name, ns, "an event")
            head = resolve_event(s, ns, at)
            parent = at if head != at else None
            row = BranchRow(name, head, head, parent, now, now)
            s._b.put_branch_row(ns, row)
            add_moves(s, ns, [HeadMove(name, None, head, "create", actor, now, ns)])
            log(s, ns, "create_branch", [name, head], actor, now)
        return make_branch(row, ns)

    def remember(
        self,
        content: str,
        *,
        branch: str,
        kind: str = "semantic",
        key: str | None = None,
        importance: float = 0.5,
        namespace: str = "default",
        meta: dict[str, Any] | None = None,
        id: str | None = None,
        event_id: str | None = None,
        role: str = "note",
        actor: str | None = None,
        expected_head: str | None = None,
        expires_at: float | None = None,
        valid_from: float | None = None,
        valid_to: float | None = None,
    ) -> Memory:
        """Write a memory on ``branch``: a new event under its head (holding
        ``content``), a memory sourced from that event, and the head advanced.
        The memory's fields are those of `add_memory`.

        Pass ``expected_head=`` to fail with `BranchConflict` if another writer
        moved the head since you read it.

        >>> from branchmem import Store
        >>> store = Store()
        >>> _ = store.add_event("e1")
        >>> _ = store.create_branch("main", at="e1")
        >>> m = store.remember("用户喜欢川菜", branch="main", key="cuisine")
        >>> store.branch_head("main") == m.sources[0]
        True
        """
        s = cast("Store", self)
        ns = check_namespace(namespace)
        eid = new_event_id() if event_id is None else check_id(event_id, "event id")
        now = s._clock()
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
        if s._policy.ttls:
            mem = s._policy.with_ttl(mem)
        fields = {"id": eid, "role": role, "content": content}
        _, stored = write_on_branch(
            s,
            ns,
            branch,
            fields,
            lambda _eid: [mem],
            why="remember",
            actor=actor,
            expected_head=expected_head,
        )
        return stored[0]

    def _write_event(
        self,
        ns: str,
        branch: str,
        fields: dict[str, Any],
        actor: str | None,
        expected_head: str | None,
    ) -> Event:
        s = cast("Store", self)
        ev, _ = write_on_branch(
            s,
            ns,
            branch,
            fields,
            lambda _eid: [],
            why="add_event",
            actor=actor,
            expected_head=expected_head,
        )
        return ev

    def set_branch(
        self,
        name: str,
        event_id: str,
        *,
        namespace: str = "default",
        actor: str | None = None,
        expected_head: str | None = None,
    ) -> Branch:
        """Point branch ``name`` at ``event_id`` (creating or moving it); the move is
        logged in `history`. Prefer `create_branch` and `rollback`, which check more.

        With ``expected_head=``, the branch must exist (`UnknownBranch`) and
        still point there (`BranchConflict` if another writer moved it): the
        check and the move are one compare-and-set in the store, whichever
        process moves the branch, so of several writers that read the same
        head, one moves it.

        >>> from branchmem import Store
        >>> store = Store()
        >>> _ = store.add_events([{"id": "e1"}, {"id": "e2", "parent": "e1"}])
        >>> store.set_branch("main", "e1").head
        'e1'
        >>> store.set_branch("main", "e2", expected_head="e1").head
        'e2'
        >>> store.set_branch("main", "e1", expected_head="e1")
        Traceback (most recent call last):
        ...
        branchmem.errors.BranchConflict: branch 'main' in namespace 'default' is at 'e2', ...
        """
        s = cast("Store", self)
        ns = check_namespace(namespace)
        name = s._identifier(check_name(name), "branch name")
        check_id(event_id, "event id")
        actor = check_actor(actor)
        if expected_head is not None:
            check_id(expected_head, "expected_head")
        now = s._clock()
        with s._b.transaction():
            found = s._b.get_events(ns, [name, event_id])
            if name in found:
                raise NameClash(name, ns, "an event")
            if event_id not in found:
                raise UnknownEvent(event_id, ns)
            row = s._b.get_branch_row(ns, name)
            if row is None and expected_head is not None:
                raise UnknownBranch(name, ns)
            if row is not None:
                check_expected(row, ns, expected_head)
            if row is None:
                row = BranchRow(name, event_id, event_id, None, now, now)
                s._b.put_branch_row(ns, row)
                add_moves(s, ns, [HeadMove(name, None, event_id, "create", actor, now, ns)])
                log(s, ns, "create_branch", [name, event_id], actor, now)
            elif row.head != event_id:
                move_head(s, ns, row, event_id, "set", actor, now)
                log(s, ns, "set_branch", [name, event_id], actor, now)
        return make_branch(row, ns)

    def branch_head(self, name: str, *, namespace: str = "default") -> str:
        """The event id branch ``name`` points at, or `UnknownBranch`.

        >>> from branchmem import Store
        >>> store = Store()
        >>> _ = store.add_event("e1")
        >>> _ = store.create_branch("main", at="e1")
        >>> store.branch_head("main")
        'e1'
        """
        s = cast("Store", self)
        ns = check_namespace(namespace)
        with s._b.reading():
            head = s._b.get_branch(ns, check_id(name, "branch name"))
        if head is None:
            raise UnknownBranch(name, ns)
        return head

    def branches(self, *, namespace: str = "default", count: bool = True) -> list[Branch]:
        """Every branch of the namespace, sorted by name, with its fork point,
        parent branch, times and (unless ``count=False``) the number of memories
        visible at its head.

        >>> from branchmem import Store
        >>> store = Store()
        >>> _ = store.add_event("e1")
        >>> _ = store.create_branch("main", at="e1")
        >>> _ = store.remember("x", branch="main")
        >>> [(b.name, b.fork_point, b.memories) for b in store.branches()]
        [('main', 'e1', 1)]
        """
        s = cast("Store", self)
        ns = check_namespace(namespace)
        with s._b.reading():
            rows = s._b.list_branch_rows(ns)
            return [
                make_branch(r, ns, len(s.memories(at=r.head, namespace=ns)) if count else None)
                for r in rows
            ]

    def delete_branch(
        self, name: str, *, namespace: str = "default", actor: str | None = None
    ) -> None:
        """Remove the pointer ``name``. Events and records stay, reachable from
        any other anchor; `history` keeps the branch's moves.

        >>> from branchmem import Store
        >>> store = Store()
        >>> _ = store.add_event("e1")
        >>> _ = store.create_branch("tmp", at="e1")
        >>> store.delete_branch("tmp")
        >>> store.branches()
        []
        """
        s = cast("Store", self)
        ns = check_namespace(namespace)
        actor = check_actor(actor)
        now = s._clock()
        with s._b.transaction():
            row = branch_row(s, ns, name)
            s._b.delete_branch(ns, row.name)
            add_moves(s, ns, [HeadMove(row.name, row.head, None, "delete", actor, now, ns)])
            log(s, ns, "delete_branch", [row.name, row.head], actor, now)
