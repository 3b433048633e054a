"""Branch heads: reading a branch's row, moving its head, writing on it.

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
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from ..backends.base import BranchRow
from ..branch_types import HeadMove
from ..engine import Engine
from ..errors import BranchConflict, InvalidInput, UnknownBranch
from ..model import Branch, Event, Memory
from ..validate import check_actor, check_id, event_from, show
from .audit import log
from .ingest import ingest
from .records import insert_records

HEAD_TRIES = 5
"""Tries of a branch write whose head another writer moved meanwhile (`write_on_branch`)."""


def branch_row(engine: Engine, ns: str, name: str) -> BranchRow:
    """The stored row of branch ``name``, or `UnknownBranch`."""
    row = engine.backend.get_branch_row(ns, check_id(name, "branch name"))
    if row is None:
        raise UnknownBranch(name, ns)
    return row


def check_expected(row: BranchRow, ns: str, expected: str | None) -> None:
    if expected is not None and row.head != expected:
        raise BranchConflict(row.name, ns, expected, row.head)


def make_branch(row: BranchRow, ns: str, count: int | None = None) -> Branch:
    return Branch(
        row.name, row.head, ns, row.fork_point, row.parent, row.created_at, row.updated_at, count
    )


def add_moves(engine: Engine, ns: str, moves: list[HeadMove]) -> None:
    """Record head moves; their actors are text, redacted on a redacting store."""
    if engine.scrub is not None:
        moves = [replace(m, actor=m.actor and engine.redact(m.actor)) for m in moves]
    engine.backend.add_head_moves(ns, moves)


def move_head(
    engine: Engine, ns: str, row: BranchRow, head: str, why: str, actor: str | None, now: float
) -> None:
    """Point ``row`` at ``head`` and log the move (inside the caller's transaction).

    A backend with `HeadSwap` moves it only if it is still at ``row.head``
    (`BranchConflict` if another writer moved it since it was read)."""
    old = row.head
    b = engine.backend
    # (`HeadSwap` has one method: looked up, not matched against the protocol,
    # which costs more than the move on a small write)
    swap = getattr(b, "swap_head", None)
    if swap is not None:
        if not swap(ns, row.name, old, head, now):
            now_at = b.get_branch(ns, row.name)
            raise BranchConflict(row.name, ns, old, now_at or "(deleted)")
        row.head, row.updated_at = head, now
    else:
        row.head, row.updated_at = head, now
        b.put_branch_row(ns, row)
    add_moves(engine, ns, [HeadMove(row.name, old, head, why, actor, now, ns)])


def write_on_branch(
    engine: Engine,
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
    b = engine.backend
    for tries_left in reversed(range(HEAD_TRIES)):
        now = engine.clock()
        try:
            with b.transaction():
                row = branch_row(engine, ns, branch)
                check_expected(row, ns, expected_head)
                ev = event_from({**fields, "parent": row.head, "namespace": ns}, now)
                # As stored: a record refused for its ids fails before the event is written.
                records = engine.redacted(make_records(ev.id))
                # Checked before anything is written: the memory backend cannot roll back.
                if b.get_events(ns, [ev.id]):
                    raise InvalidInput(
                        f"event {ev.id!r} already exists in namespace {ns!r}; a branch write "
                        "appends a new event, so pass a new id (or none, and one is made)"
                    )
                if records and b.get_records(ns, [m.id for m in records]):
                    raise InvalidInput(
                        f"a record with id {show(records[0].id)} already exists in namespace "
                        f"{show(ns)}; pass a new id (or none, and one is made)"
                    )
                (ev,) = ingest(engine, ns, [ev])
                stored = insert_records(engine, ns, records) if records else []
                move_head(engine, ns, row, ev.id, why, actor, now)
                log(engine, ns, why, [branch, ev.id, *(m.id for m in stored)], actor, now)
            return ev, stored
        except BranchConflict:
            if expected_head is not None or not tries_left:
                raise
    raise AssertionError("unreachable: the last try returns or raises")
