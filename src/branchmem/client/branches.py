"""Branches, snapshots, merges and conflicts over the HTTP API.

Plans (`wire.Plan`), one per `Store` method of the same name, that
`RemoteStore` and `AsyncRemoteStore` run (`surface`). ``namespace=None`` is the
connection's own.
"""

from __future__ import annotations

from typing import Any

from ..branch_types import Conflict, HeadMove, MergeResult, Snapshot
from ..model import Branch, Event
from . import decode
from .wire import Plan, call, pages


def create_branch(namespace: str | None, name: str, at: str) -> Plan[Branch]:
    return Branch(**(yield from call("POST", namespace, "branches", json={"name": name, "at": at})))


def set_branch(
    namespace: str | None, name: str, to: str, expected_head: str | None
) -> Plan[Branch]:
    body = {"to": to, "expected_head": expected_head}
    return Branch(**(yield from call("POST", namespace, "branches", name, "head", json=body)))


def branch_head(namespace: str | None, name: str) -> Plan[str]:
    return str((yield from call("GET", namespace, "branches", name))["head"])


def branches(namespace: str | None) -> Plan[list[Branch]]:
    return [Branch(**d) for d in (yield from pages("branches", namespace, "branches"))]


def delete_branch(namespace: str | None, name: str) -> Plan[None]:
    (yield from call("DELETE", namespace, "branches", name))


def snapshot(namespace: str | None, branch: str, name: str) -> Plan[Snapshot]:
    body = {"branch": branch, "name": name}
    return Snapshot(**(yield from call("POST", namespace, "snapshots", json=body)))


def snapshots(namespace: str | None) -> Plan[list[Snapshot]]:
    return [Snapshot(**d) for d in (yield from pages("snapshots", namespace, "snapshots"))]


def rollback(
    namespace: str | None, branch: str, to: str, expected_head: str | None
) -> Plan[Branch]:
    body = {"branch": branch, "to": to, "expected_head": expected_head}
    return Branch(**(yield from call("POST", namespace, "rollback", json=body)))


def history(namespace: str | None, branch: str) -> Plan[list[HeadMove]]:
    return [HeadMove(**d) for d in (yield from pages("moves", namespace, "history", branch=branch))]


def merge(namespace: str | None, body: dict[str, Any]) -> Plan[MergeResult]:
    """``body``: source, into, strategy, fast_forward, event_id, expected_head."""
    return decode.merge_result((yield from call("POST", namespace, "merge", json=body)))


def conflicts(namespace: str | None, at: str | None) -> Plan[list[Conflict]]:
    if at is None:
        return []
    return [
        decode.conflict(d) for d in (yield from pages("conflicts", namespace, "conflicts", at=at))
    ]


def resolve(
    namespace: str | None,
    conflict_id: str,
    keep: str,
    branch: str,
    expected_head: str | None,
) -> Plan[Event]:
    body = {"keep": keep, "branch": branch, "expected_head": expected_head}
    d = yield from call("POST", namespace, "conflicts", conflict_id, "resolve", json=body)
    return Event.from_dict(d)


def prune_branches(
    namespace: str | None, prefix: str, older_than: float, now: float | None
) -> Plan[list[str]]:
    body = {"prefix": prefix, "older_than": older_than, "now": now}
    return list((yield from call("POST", namespace, "prune", json=body))["ids"])
