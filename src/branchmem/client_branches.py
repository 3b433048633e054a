"""`RemoteStore` methods for branches, snapshots, merges and conflicts.

Each is `Store`'s method of the same name over the HTTP API (see
`branchmem.client`).
"""

from __future__ import annotations

from typing import Any

from .branch_types import Conflict, HeadMove, MergeResult, Snapshot
from .client_transport import Transport
from .model import Branch, Event


class RemoteBranchOps(Transport):
    """`RemoteStore` methods for branches and merges (mixed into `RemoteStore`)."""

    def create_branch(
        self, name: str, *, at: str, namespace: str | None = None, actor: str | None = None
    ) -> Branch:
        """`Store.create_branch`."""
        return Branch(**self._send("POST", namespace, "branches", json={"name": name, "at": at}))

    def set_branch(
        self,
        name: str,
        event_id: str,
        *,
        namespace: str | None = None,
        actor: str | None = None,
        expected_head: str | None = None,
    ) -> Branch:
        """`Store.set_branch` (with ``expected_head``: only if the head is still there)."""
        body = {"to": event_id, "expected_head": expected_head}
        return Branch(**self._send("POST", namespace, "branches", name, "head", json=body))

    def branch_head(self, name: str, *, namespace: str | None = None) -> str:
        """`Store.branch_head`."""
        return str(self._send("GET", namespace, "branches", name)["head"])

    def branches(self, *, namespace: str | None = None, count: bool = True) -> list[Branch]:
        """`Store.branches` (always counted)."""
        return [Branch(**d) for d in self._all("branches", namespace, "branches")]

    def delete_branch(
        self, name: str, *, namespace: str | None = None, actor: str | None = None
    ) -> None:
        """`Store.delete_branch`."""
        self._send("DELETE", namespace, "branches", name)

    def snapshot(
        self, branch: str, name: str, *, namespace: str | None = None, actor: str | None = None
    ) -> Snapshot:
        """`Store.snapshot`."""
        body = {"branch": branch, "name": name}
        return Snapshot(**self._send("POST", namespace, "snapshots", json=body))

    def snapshots(self, *, namespace: str | None = None) -> list[Snapshot]:
        """`Store.snapshots`."""
        return [Snapshot(**d) for d in self._all("snapshots", namespace, "snapshots")]

    def rollback(
        self,
        branch: str,
        to: str,
        *,
        namespace: str | None = None,
        actor: str | None = None,
        expected_head: str | None = None,
    ) -> Branch:
        """`Store.rollback`."""
        body = {"branch": branch, "to": to, "expected_head": expected_head}
        return Branch(**self._send("POST", namespace, "rollback", json=body))

    def history(self, branch: str, *, namespace: str | None = None) -> list[HeadMove]:
        """`Store.history`."""
        return [HeadMove(**d) for d in self._all("moves", namespace, "history", branch=branch)]

    def merge(
        self,
        source: str,
        into: str,
        *,
        strategy: str = "append",
        namespace: str | None = None,
        actor: str | None = None,
        fast_forward: bool = True,
        event_id: str | None = None,
        expected_head: str | None = None,
    ) -> MergeResult:
        """`Store.merge`."""
        body: dict[str, Any] = {"source": source, "into": into, "strategy": strategy}
        body |= {"fast_forward": fast_forward, "event_id": event_id, "expected_head": expected_head}
        d = self._send("POST", namespace, "merge", json=body)
        return MergeResult(**{**d, "conflict_ids": tuple(d["conflict_ids"])})

    def conflicts(self, *, at: str | None, namespace: str | None = None) -> list[Conflict]:
        """`Store.conflicts`."""
        if at is None:
            return []
        found = self._all("conflicts", namespace, "conflicts", at=at)
        return [Conflict(**{**d, "members": tuple(d["members"])}) for d in found]

    def resolve(
        self,
        conflict_id: str,
        keep: str,
        *,
        branch: str,
        namespace: str | None = None,
        actor: str | None = None,
        expected_head: str | None = None,
    ) -> Event:
        """`Store.resolve`."""
        body = {"keep": keep, "branch": branch, "expected_head": expected_head}
        d = self._send("POST", namespace, "conflicts", conflict_id, "resolve", json=body)
        return Event.from_dict(d)

    def prune_branches(
        self,
        prefix: str,
        older_than: float,
        *,
        namespace: str | None = None,
        now: float | None = None,
        actor: str | None = None,
    ) -> list[str]:
        """`Store.prune_branches`."""
        body = {"prefix": prefix, "older_than": older_than, "now": now}
        return list(self._send("POST", namespace, "prune", json=body)["ids"])
