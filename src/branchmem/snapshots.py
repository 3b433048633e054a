"""Snapshots, rollback and the history of a branch's head (mixed into `Store`).

A snapshot names a branch's head for good; `rollback` moves the head back to
a snapshot, or to any head the branch held or an ancestor of its head. Moving
a head never deletes anything: what the gate shows follows the anchor.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from .branch_types import HeadMove, Snapshot
from .branches import (
    branch_row,
    check_actor,
    check_expected,
    is_ancestor,
    log,
    make_branch,
    move_head,
)
from .errors import NameClash, NotAnAncestor, SnapshotExists, UnknownBranch, UnknownSnapshot
from .model import Branch
from .validate import check_id, check_name, check_namespace

if TYPE_CHECKING:
    from .store import Store


class SnapshotOps:
    """`Store` methods for snapshots, rollback and head history."""

    def snapshot(
        self, branch: str, name: str, *, namespace: str = "default", actor: str | None = None
    ) -> Snapshot:
        """Name the branch's current head, for good: `rollback` can return to it.

        Taking the same snapshot again is a no-op; reusing the name for another
        event is `SnapshotExists`.

        >>> from branchmem import Store
        >>> store = Store()
        >>> _ = store.add_event("e1")
        >>> _ = store.create_branch("main", at="e1")
        >>> store.snapshot("main", "v1").event
        'e1'
        """
        s = cast("Store", self)
        ns = check_namespace(namespace)
        name = s._identifier(check_name(name, "snapshot name"), "snapshot name")
        actor = check_actor(actor)
        now = s._clock()
        with s._b.transaction():
            row = branch_row(s, ns, branch)
            old = s._b.get_snapshot(ns, name)
            if old is not None:
                if old.event != row.head:
                    raise SnapshotExists(name, ns, old.event)
                return old
            if s._b.get_events(ns, [name]):
                raise NameClash(name, ns, "an event")
            snap = Snapshot(name, row.name, row.head, ns, now)
            s._b.put_snapshot(ns, snap)
            log(s, ns, "snapshot", [row.name, name, row.head], actor, now)
        return snap

    def snapshots(self, *, namespace: str = "default") -> list[Snapshot]:
        """Every snapshot of the namespace, sorted by name.

        >>> from branchmem import Store
        >>> store = Store()
        >>> _ = store.add_event("e1")
        >>> _ = store.create_branch("main", at="e1")
        >>> [(s.name, s.branch, s.event) for s in (store.snapshot("main", "v1"),)]
        [('v1', 'main', 'e1')]
        >>> [s.name for s in store.snapshots()]
        ['v1']
        """
        s = cast("Store", self)
        ns = check_namespace(namespace)
        with s._b.reading():
            return s._b.list_snapshots(ns)

    def rollback(
        self,
        branch: str,
        to: str,
        *,
        namespace: str = "default",
        actor: str | None = None,
        expected_head: str | None = None,
    ) -> Branch:
        """Move ``branch``'s head back to a snapshot or an ancestor event.

        Nothing is deleted: a head the branch held before stays a valid target,
        so rolling forward again is a rollback to it (or to a later snapshot).
        Anything else is `NotAnAncestor`. ``to`` is read as a snapshot name
        first (a snapshot may be of any branch), then as an event id. With
        ``expected_head=``, `BranchConflict` if the head is no longer there
        (checked and moved in one compare-and-set, as `set_branch`).

        >>> from branchmem import Store
        >>> store = Store()
        >>> _ = store.add_event("e1")
        >>> _ = store.create_branch("main", at="e1")
        >>> _ = store.snapshot("main", "v1")
        >>> m = store.remember("预算3000", branch="main")
        >>> _ = store.rollback("main", "v1")
        >>> store.memories(at="main")
        []
        """
        s = cast("Store", self)
        ns = check_namespace(namespace)
        check_id(to, "rollback target")
        actor = check_actor(actor)
        if expected_head is not None:
            check_id(expected_head, "expected_head")
        now = s._clock()
        with s._b.transaction():
            row = branch_row(s, ns, branch)
            check_expected(row, ns, expected_head)
            snap = s._b.get_snapshot(ns, to)
            target = snap.event if snap is not None else to
            if snap is None and not s._b.get_events(ns, [to]):
                raise UnknownSnapshot(to, ns)
            if target != row.head:
                moves = s._b.head_moves(ns, row.name)
                # Heads held since the branch was (last) created: not an older namesake's.
                born = max((i for i, m in enumerate(moves) if m.from_head is None), default=0)
                held = {m.to_head for m in moves[born:]}
                if target not in held and not is_ancestor(s, ns, target, row.head):
                    raise NotAnAncestor(row.name, ns, to)
                move_head(s, ns, row, target, "rollback", actor, now)
                log(s, ns, "rollback", [row.name, target], actor, now)
        return make_branch(row, ns)

    def history(self, branch: str, *, namespace: str = "default") -> list[HeadMove]:
        """Every move of ``branch``'s head, oldest first: who, when, from, to, why.

        >>> from branchmem import Store
        >>> store = Store()
        >>> _ = store.add_event("e1")
        >>> _ = store.create_branch("main", at="e1", actor="alice")
        >>> [(h.why, h.from_head, h.to_head, h.actor) for h in store.history("main")]
        [('create', None, 'e1', 'alice')]
        """
        s = cast("Store", self)
        ns = check_namespace(namespace)
        with s._b.reading():
            moves = s._b.head_moves(ns, check_id(branch, "branch name"))
        if not moves:
            raise UnknownBranch(branch, ns)
        return moves
