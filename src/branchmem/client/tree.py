"""The tree reads and the diff over the HTTP API: the remote stores' methods
``children``, ``siblings``, ``versions`` and ``diff`` (`Store`'s, over the wire),
written as plans (`wire.Plan`) of the store object and bound in its class body."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..tree_types import Diff, EventPage, Versions
from ..validate import check_anchors
from .wire import Plan, call

Remote = Any
"""The store a door is bound on (the plans need nothing of it)."""


def children(
    self: Remote,
    event_id: str | None,
    *,
    namespace: str | None = None,
    limit: int = 100,
    cursor: str | None = None,
) -> Plan[EventPage]:
    """`Store.children` (``None``: the roots)."""
    parts = ("roots",) if event_id is None else ("events", event_id, "children")
    got = yield from call("GET", namespace, *parts, params={"limit": limit, "cursor": cursor})
    return EventPage.from_dict(got)


def siblings(
    self: Remote,
    event_id: str,
    *,
    namespace: str | None = None,
    limit: int = 100,
    cursor: str | None = None,
) -> Plan[EventPage]:
    """`Store.siblings`."""
    params = {"limit": limit, "cursor": cursor}
    got = yield from call("GET", namespace, "events", event_id, "siblings", params=params)
    return EventPage.from_dict(got)


def versions(self: Remote, event_id: str, *, namespace: str | None = None) -> Plan[Versions]:
    """`Store.versions`."""
    return Versions.from_dict((yield from call("GET", namespace, "events", event_id, "versions")))


def diff(
    self: Remote,
    a: str | Sequence[str],
    b: str | Sequence[str],
    *,
    kind: str | None = None,
    namespace: str | None = None,
) -> Plan[Diff]:
    """`Store.diff` (a list on either side: a scope chain)."""
    params: dict[str, Any] = {"a": _side(a), "b": _side(b), "kind": kind}
    return Diff.from_dict((yield from call("GET", namespace, "diff", params=params)))


def _side(at: str | Sequence[str]) -> list[str]:
    return [at] if isinstance(at, str) else check_anchors(at)
