"""`Store`'s doors to the shape of the tree: children, siblings, versions, and
what moving the anchor changes (`branchmem.ops.tree`, `branchmem.ops.diff`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..ops import diff as _diff
from ..ops import tree as _tree

if TYPE_CHECKING:
    from ..tree_types import Diff, EventPage, Versions
    from . import Front


def children(
    self: Front,
    event_id: str | None,
    *,
    namespace: str = "default",
    limit: int = 100,
    cursor: str | None = None,
) -> EventPage:
    """The events under ``event_id`` (the roots when None), in arrival order,
    a page of ``limit``; pass the page's ``cursor`` back for the next.

    >>> s = Store(); _ = s.add_events([{"id": "q"}, {"id": "r1", "parent": "q"}])
    >>> [e.id for e in s.children("q").events], s.children("q").cursor
    (['r1'], None)
    """
    return _tree.children(self._engine, event_id, namespace=namespace, limit=limit,
                          cursor=cursor)  # fmt: skip


def siblings(
    self: Front,
    event_id: str,
    *,
    namespace: str = "default",
    limit: int = 100,
    cursor: str | None = None,
) -> EventPage:
    """The versions of ``event_id``: the events with its parents (for a root,
    the roots naming the same first root in ``meta["version_of"]``), itself
    included, in arrival order; paged like `children`. The page iterates.

    >>> s = Store(); _ = s.add_events([{"id": "q"}, {"id": "a", "parent": "q"},
    ...                                {"id": "b", "parent": "q"}])
    >>> [e.id for e in s.siblings("b")]
    ['a', 'b']
    """
    return _tree.siblings(self._engine, event_id, namespace=namespace, limit=limit,
                          cursor=cursor)  # fmt: skip


def versions(self: Front, event_id: str, *, namespace: str = "default") -> Versions:
    """Where ``event_id`` stands among its `siblings`: "version 2 of 3", with
    the previous and next versions' ids. Roots are separate conversations
    (1/1) unless one names the other in ``meta["version_of"]``: an edit of a
    conversation's first message.

    >>> s = Store(); _ = s.add_events([{"id": "a"}, {"id": "other"},
    ...                                {"id": "b", "meta": {"version_of": "a"}}])
    >>> print(s.versions("b"), s.versions("b").previous, s.versions("other"))
    2/2 a 1/1
    """
    return _tree.versions(self._engine, event_id, namespace=namespace)


def diff(
    self: Front,
    a: str | Sequence[str],
    b: str | Sequence[str],
    *,
    kind: str | None = None,
    namespace: str = "default",
) -> Diff:
    """What moving the anchor from ``a`` to ``b`` changes: the memories visible at
    ``a`` and not at ``b`` (``only_a``), the reverse (``only_b``), the fork point.

    >>> s = Store(); _ = s.add_events([{"id": "q"}, {"id": "r1", "parent": "q"}])
    >>> _ = s.add_memory("x", sources=["r1"]); d = s.diff("r1", "q")
    >>> [m.content for m in d.only_a], d.fork_point
    (['x'], 'q')
    """
    return _diff.diff(self._engine, a, b, kind=kind, namespace=namespace)
