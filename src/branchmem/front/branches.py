"""`Store`'s doors for branches: create, remember on, set, list, delete and
prune pointers (`branchmem.ops.branches`); snapshots, rollback and a head's
history (`branchmem.ops.snapshots`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..ops import branches as _branches
from ..ops import snapshots as _snapshots

if TYPE_CHECKING:
    from ..branch_types import HeadMove, Snapshot
    from ..model import Branch, Memory
    from . import Front


def create_branch(
    self: Front, name: str, *, at: str, namespace: str = "default", actor: str | None = None
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
    return _branches.create_branch(self._engine, name, at=at, namespace=namespace, actor=actor)


def remember(
    self: Front,
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
    return _branches.remember(
        self._engine,
        content,
        branch=branch,
        kind=kind,
        key=key,
        importance=importance,
        namespace=namespace,
        meta=meta,
        id=id,
        event_id=event_id,
        role=role,
        actor=actor,
        expected_head=expected_head,
        expires_at=expires_at,
        valid_from=valid_from,
        valid_to=valid_to,
    )


def set_branch(
    self: Front,
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
    return _branches.set_branch(
        self._engine,
        name,
        event_id,
        namespace=namespace,
        actor=actor,
        expected_head=expected_head,
    )


def branch_head(self: Front, name: str, *, namespace: str = "default") -> str:
    """The event id branch ``name`` points at, or `UnknownBranch`.

    >>> from branchmem import Store
    >>> store = Store()
    >>> _ = store.add_event("e1")
    >>> _ = store.create_branch("main", at="e1")
    >>> store.branch_head("main")
    'e1'
    """
    return _branches.branch_head(self._engine, name, namespace=namespace)


def branches(self: Front, *, namespace: str = "default", count: bool = True) -> list[Branch]:
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
    return _branches.branches(self._engine, namespace=namespace, count=count)


def delete_branch(
    self: Front, name: str, *, namespace: str = "default", actor: str | None = None
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
    return _branches.delete_branch(self._engine, name, namespace=namespace, actor=actor)


def prune_branches(
    self: Front,
    prefix: str,
    older_than: float,
    *,
    namespace: str = "default",
    now: float | None = None,
    actor: str | None = None,
    check: Callable[[str], object] | None = None,
) -> list[str]:
    """Delete the branch pointers under ``prefix/`` whose head has not moved
    for ``older_than`` seconds. Records stay, reachable from any other
    anchor. Returns the names removed.

    ``prefix`` names a folder of the name hierarchy: ``"tmp"`` and
    ``"tmp/"`` both prune ``tmp/a`` and ``tmp/b/c``, never the branch
    ``tmp`` itself (`delete_branch` removes that) nor ``tmpx``.
    ``check``, if given, is called with each name that would be deleted,
    before any is; an exception it raises ends the call with nothing
    deleted (the server checks each name against the caller's grant).

    >>> from branchmem import Store
    >>> store = Store(clock=lambda: 0.0)
    >>> _ = store.add_event("e1")
    >>> _ = store.create_branch("tmp", at="e1")
    >>> _ = store.create_branch("tmp/a", at="e1")
    >>> store.prune_branches("tmp", older_than=60, now=3600.0)
    ['tmp/a']
    """
    return _branches.prune_branches(
        self._engine, prefix, older_than, namespace=namespace, now=now, actor=actor, check=check
    )


def snapshot(
    self: Front, branch: str, name: str, *, namespace: str = "default", actor: str | None = None
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
    return _snapshots.snapshot(self._engine, branch, name, namespace=namespace, actor=actor)


def snapshots(self: Front, *, namespace: str = "default") -> list[Snapshot]:
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
    return _snapshots.snapshots(self._engine, namespace=namespace)


def rollback(
    self: Front,
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
    return _snapshots.rollback(
        self._engine, branch, to, namespace=namespace, actor=actor, expected_head=expected_head
    )


def history(self: Front, branch: str, *, namespace: str = "default") -> list[HeadMove]:
    """Every move of ``branch``'s head, oldest first: who, when, from, to, why.

    >>> from branchmem import Store
    >>> store = Store()
    >>> _ = store.add_event("e1")
    >>> _ = store.create_branch("main", at="e1", actor="alice")
    >>> [(h.why, h.from_head, h.to_head, h.actor) for h in store.history("main")]
    [('create', None, 'e1', 'alice')]
    """
    return _snapshots.history(self._engine, branch, namespace=namespace)
