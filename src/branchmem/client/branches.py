"""Branches, snapshots, merges and conflicts over the HTTP API.

Plain functions of a `Connection`, one per `Store` method of the same name;
`branchmem.client.RemoteStore` calls them. ``namespace=None`` is the
connection's own.
"""

from __future__ import annotations

from typing import Any

from ..branch_types import Conflict, HeadMove, MergeResult, Snapshot
from ..model import Branch, Event
from . import decode
from .connection import Connection


def create_branch(c: Connection, namespace: str | None, name: str, at: str) -> Branch:
    return Branch(**c.send("POST", namespace, "branches", json={"name": name, "at": at}))


def set_branch(
    c: Connection, namespace: str | None, name: str, to: str, expected_head: str | None
) -> Branch:
    body = {"to": to, "expected_head": expected_head}
    return Branch(**c.send("POST", namespace, "branches", name, "head", json=body))


def branch_head(c: Connection, namespace: str | None, name: str) -> str:
    return str(c.send("GET", namespace, "branches", name)["head"])


def branches(c: Connection, namespace: str | None) -> list[Branch]:
    return [Branch(**d) for d in c.all("branches", namespace, "branches")]


def delete_branch(c: Connection, namespace: str | None, name: str) -> None:
    c.send("DELETE", namespace, "branches", name)


def snapshot(c: Connection, namespace: str | None, branch: str, name: str) -> Snapshot:
    body = {"branch": branch, "name": name}
    return Snapshot(**c.send("POST", namespace, "snapshots", json=body))


def snapshots(c: Connection, namespace: str | None) -> list[Snapshot]:
    return [Snapshot(**d) for d in c.all("snapshots", namespace, "snapshots")]


def rollback(
    c: Connection, namespace: str | None, branch: str, to: str, expected_head: str | None
) -> Branch:
    body = {"branch": branch, "to": to, "expected_head": expected_head}
    return Branch(**c.send("POST", namespace, "rollback", json=body))


def history(c: Connection, namespace: str | None, branch: str) -> list[HeadMove]:
    return [HeadMove(**d) for d in c.all("moves", namespace, "history", branch=branch)]


def merge(c: Connection, namespace: str | None, body: dict[str, Any]) -> MergeResult:
    """``body``: source, into, strategy, fast_forward, event_id, expected_head."""
    return decode.merge_result(c.send("POST", namespace, "merge", json=body))


def conflicts(c: Connection, namespace: str | None, at: str | None) -> list[Conflict]:
    if at is None:
        return []
    return [decode.conflict(d) for d in c.all("conflicts", namespace, "conflicts", at=at)]


def resolve(
    c: Connection,
    namespace: str | None,
    conflict_id: str,
    keep: str,
    branch: str,
    expected_head: str | None,
) -> Event:
    body = {"keep": keep, "branch": branch, "expected_head": expected_head}
    d = c.send("POST", namespace, "conflicts", conflict_id, "resolve", json=body)
    return Event.from_dict(d)


def prune_branches(
    c: Connection, namespace: str | None, prefix: str, older_than: float, now: float | None
) -> list[str]:
    body = {"prefix": prefix, "older_than": older_than, "now": now}
    return list(c.send("POST", namespace, "prune", json=body)["ids"])
