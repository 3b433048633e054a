"""Snapshots, rollback and the history of a branch's head.

A snapshot names a branch's head for good; `rollback` moves the head back to
a snapshot, or to any head the branch held or an ancestor of its head. Moving
a head never deletes anything: what the gate shows follows the anchor.
"""

from __future__ import annotations

from ..branch_types import HeadMove, Snapshot
from ..engine import Engine
from ..errors import NameClash, NotAnAncestor, SnapshotExists, UnknownBranch, UnknownSnapshot
from ..gate import is_ancestor
from ..model import Branch
from ..validate import check_actor, check_id, check_name, check_namespace
from .audit import log
from .heads import branch_row, check_expected, make_branch, move_head


def snapshot(
    engine: Engine, branch: str, name: str, *, namespace: str, actor: str | None
) -> Snapshot:
    """`Store.snapshot`."""
    ns = check_namespace(namespace)
    name = engine.identifier(check_name(name, "snapshot name"), "snapshot name")
    actor = check_actor(actor)
    now = engine.clock()
    b = engine.backend
    with b.transaction():
        row = branch_row(engine, ns, branch)
        old = b.get_snapshot(ns, name)
        if old is not None:
            if old.event != row.head:
                raise SnapshotExists(name, ns, old.event)
            return old
        if b.get_events(ns, [name]):
            raise NameClash(name, ns, "an event")
        snap = Snapshot(name, row.name, row.head, ns, now)
        b.put_snapshot(ns, snap)
        log(engine, ns, "snapshot", [row.name, name, row.head], actor, now)
    return snap


def snapshots(engine: Engine, *, namespace: str) -> list[Snapshot]:
    """`Store.snapshots`."""
    ns = check_namespace(namespace)
    with engine.backend.reading():
        return engine.backend.list_snapshots(ns)


def rollback(
    engine: Engine,
    branch: str,
    to: str,
    *,
    namespace: str,
    actor: str | None,
    expected_head: str | None,
) -> Branch:
    """`Store.rollback`."""
    ns = check_namespace(namespace)
    check_id(to, "rollback target")
    actor = check_actor(actor)
    if expected_head is not None:
        check_id(expected_head, "expected_head")
    now = engine.clock()
    b = engine.backend
    with b.transaction():
        row = branch_row(engine, ns, branch)
        check_expected(row, ns, expected_head)
        snap = b.get_snapshot(ns, to)
        target = snap.event if snap is not None else to
        if snap is None and not b.get_events(ns, [to]):
            raise UnknownSnapshot(to, ns)
        if target != row.head:
            moves = b.head_moves(ns, row.name)
            # Heads held since the branch was (last) created: not an older namesake's.
            born = max((i for i, m in enumerate(moves) if m.from_head is None), default=0)
            held = {m.to_head for m in moves[born:]}
            if target not in held and not is_ancestor(engine, ns, target, row.head):
                raise NotAnAncestor(row.name, ns, to)
            move_head(engine, ns, row, target, "rollback", actor, now)
            log(engine, ns, "rollback", [row.name, target], actor, now)
    return make_branch(row, ns)


def history(engine: Engine, branch: str, *, namespace: str) -> list[HeadMove]:
    """`Store.history`."""
    ns = check_namespace(namespace)
    with engine.backend.reading():
        moves = engine.backend.head_moves(ns, check_id(branch, "branch name"))
    if not moves:
        raise UnknownBranch(branch, ns)
    return moves
