"""The tree reads and the diff over the HTTP API: `RemoteStore`'s methods
``children``, ``siblings``, ``versions`` and ``diff`` (`Store`'s, over the wire),
written as functions of the store object and bound in its class body."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

from ..tree_types import Diff, EventPage, Versions
from ..validate import check_anchors

if TYPE_CHECKING:
    from .connection import Connection


class Remote(Protocol):
    """What the functions need of `RemoteStore`: its connection."""

    _c: Connection


def children(
    self: Remote,
    event_id: str | None,
    *,
    namespace: str | None = None,
    limit: int = 100,
    cursor: str | None = None,
) -> EventPage:
    """`Store.children` (``None``: the roots)."""
    parts = ("roots",) if event_id is None else ("events", event_id, "children")
    got = self._c.send("GET", namespace, *parts, params={"limit": limit, "cursor": cursor})
    return EventPage.from_dict(got)


def siblings(
    self: Remote,
    event_id: str,
    *,
    namespace: str | None = None,
    limit: int = 100,
    cursor: str | None = None,
) -> EventPage:
    """`Store.siblings`."""
    params = {"limit": limit, "cursor": cursor}
    got = self._c.send("GET", namespace, "events", event_id, "siblings", params=params)
    return EventPage.from_dict(got)


def versions(self: Remote, event_id: str, *, namespace: str | None = None) -> Versions:
    """`Store.versions`."""
    return Versions.from_dict(self._c.send("GET", namespace, "events", event_id, "versions"))


def diff(
    self: Remote,
    a: str | Sequence[str],
    b: str | Sequence[str],
    *,
    kind: str | None = None,
    namespace: str | None = None,
) -> Diff:
    """`Store.diff` (a list on either side: a scope chain)."""
    params: dict[str, Any] = {"a": _side(a), "b": _side(b), "kind": kind}
    return Diff.from_dict(self._c.send("GET", namespace, "diff", params=params))


def _side(at: str | Sequence[str]) -> list[str]:
    return [at] if isinstance(at, str) else check_anchors(at)
