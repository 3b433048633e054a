"""`Store`'s doors for merging: merge a branch or an event into a branch, the
open conflicts, and resolving one (`branchmem.ops.merge`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..ops import merge as _merge

if TYPE_CHECKING:
    from ..branch_types import Conflict, MergeResult
    from ..model import Event
    from . import Front


def merge(
    self: Front,
    source: str,
    into: str,
    *,
    strategy: str = "append",
    namespace: str = "default",
    actor: str | None = None,
    fast_forward: bool = True,
    event_id: str | None = None,
    expected_head: str | None = None,
) -> MergeResult:
    """Merge ``source`` (a branch or an event) into branch ``into``.

    A merge event with both heads as parents is appended and ``into``
    advances to it. If ``source`` is already an ancestor of ``into``
    nothing happens; if ``into``'s head is an ancestor of ``source`` the
    head just moves forward (unless ``fast_forward=False``, or the strategy
    has key collisions to record). Where both sides hold visible memories
    with the same ``key`` and different content:

    - ``append`` keeps both;
    - ``overwrite`` retracts the target's value (incoming wins);
    - ``keep_both`` keeps both and writes a conflict record (see `conflicts`).

    >>> from branchmem import Store
    >>> store = Store()
    >>> _ = store.add_event("e1")
    >>> _ = store.create_branch("main", at="e1")
    >>> _ = store.remember("预算3000", branch="main", key="budget")
    >>> _ = store.create_branch("chat", at="main")
    >>> _ = store.remember("预算4000", branch="chat", key="budget")
    >>> _ = store.remember("预算2500", branch="main", key="budget")
    >>> r = store.merge("chat", "main", strategy="overwrite")
    >>> (r.added, r.overwritten), [m.content for m in store.memories(at="main")]
    ((1, 2), ['预算4000'])
    """
    return _merge.merge(
        self._engine,
        source,
        into,
        strategy=strategy,
        namespace=namespace,
        actor=actor,
        fast_forward=fast_forward,
        event_id=event_id,
        expected_head=expected_head,
    )


def conflicts(self: Front, *, at: str | None, namespace: str = "default") -> list[Conflict]:
    """Open conflicts visible at ``at`` (an event or a branch), oldest first.

    >>> from branchmem import Store
    >>> store = Store()
    >>> _ = store.add_event("e1")
    >>> _ = store.create_branch("main", at="e1")
    >>> _ = store.create_branch("chat", at="e1")
    >>> _ = store.remember("预算3000", branch="main", key="budget")
    >>> _ = store.remember("预算4000", branch="chat", key="budget")
    >>> _ = store.merge("chat", "main", strategy="keep_both")
    >>> [c.key for c in store.conflicts(at="main")]
    ['budget']
    """
    return _merge.conflicts(self._engine, at=at, namespace=namespace)


def resolve(
    self: Front,
    conflict_id: str,
    keep: str,
    *,
    branch: str,
    namespace: str = "default",
    actor: str | None = None,
    expected_head: str | None = None,
) -> Event:
    """Close a conflict on ``branch``, keeping memory ``keep``.

    Appends a resolve event under the branch head; from it, the other
    members and the conflict itself are retracted. Returns that event.
    A conflict not open at the branch head is `ConflictClosed`.

    >>> from branchmem import Store
    >>> store = Store()
    >>> _ = store.add_event("e1")
    >>> _ = store.create_branch("main", at="e1")
    >>> _ = store.create_branch("chat", at="e1")
    >>> a = store.remember("预算3000", branch="main", key="budget")
    >>> b = store.remember("预算4000", branch="chat", key="budget")
    >>> c = store.merge("chat", "main", strategy="keep_both").conflict_ids[0]
    >>> _ = store.resolve(c, keep=b.id, branch="main")
    >>> [m.content for m in store.memories(at="main")], store.conflicts(at="main")
    (['预算4000'], [])
    """
    return _merge.resolve(
        self._engine,
        conflict_id,
        keep,
        branch=branch,
        namespace=namespace,
        actor=actor,
        expected_head=expected_head,
    )
