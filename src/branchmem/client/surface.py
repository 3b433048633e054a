"""`Surface`: `Store`'s methods over the HTTP API, each written once as a plan.

Every method hands its arguments to the plan of its area (`records`,
`retrieval`, `branches`, `admin`, `tree`, `graph`) and is a `door`:
`RemoteStore` runs it and returns the result, `AsyncRemoteStore` returns a
coroutine of it. ``namespace=None`` is the connection's own.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..branch_types import AuditEntry, Conflict, HeadMove, MergeResult, Snapshot
from ..context import Context
from ..model import Branch, Event, Explanation, Memory
from ..retrieval.embed import Embedder
from ..retrieval.fusion import Weights
from ..retrieval.hit import Hit
from ..retrieval.tokenize import Tokenizer
from ..searchlog import QueryLog
from . import admin, branches, graph, records, retrieval, tree
from .background import BackgroundDoors
from .doors import door
from .wire import Plan, Wire


class Surface(BackgroundDoors):
    """The methods `RemoteStore` and `AsyncRemoteStore` share (see `doors`)."""

    _c: Wire

    @property
    def namespace(self) -> str:
        """The namespace a call without ``namespace=`` acts on."""
        return self._c.namespace

    @namespace.setter
    def namespace(self, value: str) -> None:
        self._c.namespace = value

    # -- events and records (records.py)
    @door
    def add_event(
        self,
        id: str,
        *,
        parent: str | Sequence[str] | None = None,
        role: str = "user",
        content: str = "",
        namespace: str | None = None,
        meta: dict[str, Any] | None = None,
        branch: str | None = None,
        actor: str | None = None,
        expected_head: str | None = None,
    ) -> Plan[Event]:
        """`Store.add_event`."""
        return records.add_event(
            namespace,
            id,
            parent=parent,
            role=role,
            content=content,
            meta=meta,
            branch=branch,
            expected_head=expected_head,
        )

    @door
    def add_events(
        self, events: Iterable[Event | Mapping[str, Any]], *, actor: str | None = None
    ) -> Plan[list[Event]]:
        """`Store.add_events` (one request per namespace named in the items)."""
        return records.add_events(events)

    children, siblings = door(tree.children), door(tree.siblings)
    versions, diff = door(tree.versions), door(tree.diff)
    add_edge, graph_neighbors = door(graph.add_edge), door(graph.graph_neighbors)

    @door
    def get_event(self, event_id: str, namespace: str | None = None) -> Plan[Event]:
        """`Store.get_event`."""
        return records.get_event(namespace, event_id)

    @door
    def path(
        self, at: str | None, namespace: str | None = None, *, last: int | None = None
    ) -> Plan[list[Event]]:
        """`Store.path` (``last=n``: the last ``n`` of the whole path, by place)."""
        return records.path(namespace, at, last)

    @door
    def events(
        self, *, namespace: str | None = None, offset: int = 0, limit: int = 1000
    ) -> Plan[list[Event]]:
        """`Store.events`."""
        return records.events(namespace, offset, limit)

    @door
    def records(
        self, *, namespace: str | None = None, offset: int = 0, limit: int = 1000
    ) -> Plan[list[Memory]]:
        """`Store.records` (through ``inspect`` without an anchor)."""
        return records.records(namespace, offset, limit)

    @door
    def add_memory(
        self,
        /,
        content: str,
        *,
        sources: Sequence[str],
        namespace: str | None = None,
        actor: str | None = None,
        **fields: Any,
    ) -> Plan[Memory]:
        """`Store.add_memory` (``kind``, ``key``, ``importance``, ``meta``, ``id``,
        ``expires_at``, ``valid_from``, ``valid_to`` as keywords)."""
        body = {"content": content, "sources": list(sources), **fields}
        return records.add_memory(namespace, body)

    @door
    def add_memories(
        self, items: Iterable[Memory | Mapping[str, Any]], *, actor: str | None = None
    ) -> Plan[list[Memory]]:
        """`Store.add_memories` (one request per namespace named in the items)."""
        return records.add_memories(items)

    @door
    def remember(
        self,
        /,
        content: str,
        *,
        branch: str,
        namespace: str | None = None,
        actor: str | None = None,
        **fields: Any,
    ) -> Plan[Memory]:
        """`Store.remember`."""
        body = {"content": content, "branch": branch, **fields}
        return records.add_memory(namespace, body)

    @door
    def retract(
        self,
        memory_id: str,
        *,
        sources: Sequence[str],
        namespace: str | None = None,
        id: str | None = None,
        actor: str | None = None,
    ) -> Plan[Memory]:
        """`Store.retract`."""
        return records.retract(namespace, memory_id, sources, id)

    @door
    def supersede(
        self,
        /,
        memory_id: str,
        content: str,
        *,
        sources: Sequence[str],
        namespace: str | None = None,
        actor: str | None = None,
        **fields: Any,
    ) -> Plan[Memory]:
        """`Store.supersede`."""
        body = {"content": content, "sources": list(sources), **fields}
        return records.supersede(namespace, memory_id, body)

    @door
    def memories(
        self,
        *,
        at: str | Sequence[str] | None,
        kind: str | None = None,
        namespace: str | None = None,
        now: float | None = None,
        as_of: float | None = None,
        include_archived: bool = False,
    ) -> Plan[list[Memory]]:
        """`Store.memories` (``at=None``: ``[]``, asked of no one)."""
        return records.memories(
            namespace,
            at,
            kind=kind,
            now=now,
            as_of=as_of,
            include_archived=include_archived,
        )

    @door
    def get_memory(self, memory_id: str, namespace: str | None = None) -> Plan[Memory]:
        """`Store.get_memory`."""
        return records.get_memory(namespace, memory_id)

    @door
    def visible(
        self, memory_id: str, *, at: str | None, namespace: str | None = None
    ) -> Plan[bool]:
        """`Store.visible`."""
        return records.visible(namespace, memory_id, at)

    @door
    def explain(
        self,
        memory_id: str,
        *,
        at: str | None,
        namespace: str | None = None,
        now: float | None = None,
    ) -> Plan[Explanation]:
        """`Store.explain`."""
        return records.explain(namespace, memory_id, at, now)

    # -- search, context, extraction, lifecycle (retrieval.py)
    @door
    def search(
        self,
        query: str,
        *,
        at: str | Sequence[str] | None,
        k: int = 10,
        namespace: str | None = None,
        mode: str | None = None,
        embedder: Embedder | str | None = None,
        tokenizer: Tokenizer | str | None = None,
        weights: Weights | None = None,
        scope_weights: Sequence[float] | None = None,
        kind: str | Sequence[str] | None = None,
        key_prefix: str | None = None,
        meta: Mapping[str, Any] | None = None,
        now: float | None = None,
        as_of: float | None = None,
        explain: bool = False,
        log: QueryLog | str | os.PathLike[str] | None = None,
        max_embed: int | None = None,
        min_score: float | None = None,
        cutoff: str | None = None,
        filter: Mapping[str, Any] | None = None,
        hops: int = 0,
        wait: float | None = None,
    ) -> Plan[list[Hit]]:
        """`Store.search`; naming an option that is not served per call (those of
        `branchmem.retrieval.options.SEARCH` with ``served=False``) is refused, an
        unknown keyword raises ``TypeError``."""
        options = {o: v for o, v in locals().items() if o in retrieval.OPTIONS}  # the keywords
        return retrieval.search(namespace, query, at, k, options)

    @door
    def touch(
        self,
        ids: Iterable[str],
        *,
        namespace: str | None = None,
        now: float | None = None,
        actor: str | None = None,
    ) -> Plan[None]:
        """`Store.touch`."""
        return retrieval.touch(namespace, ids, now)

    @door
    def score(
        self, memory_id: str, *, now: float | None = None, namespace: str | None = None
    ) -> Plan[float]:
        """`Store.score`."""
        return retrieval.score(namespace, memory_id, now)

    @door
    def archive_expired(
        self, now: float | None = None, *, namespace: str | None = None, actor: str | None = None
    ) -> Plan[list[str]]:
        """`Store.archive_expired`."""
        return retrieval.archive_expired(namespace, now)

    @door
    def restore(
        self, memory_id: str, *, namespace: str | None = None, actor: str | None = None
    ) -> Plan[Memory]:
        """`Store.restore`."""
        return retrieval.restore(namespace, memory_id)

    @door
    def extract(
        self,
        at: str,
        *,
        extractor: Any = None,
        window: int = 8,
        namespace: str | None = None,
        actor: str | None = None,
    ) -> Plan[list[Memory]]:
        """`Store.extract` with the server's offline rule extractor."""
        return retrieval.extract(namespace, at, extractor, window)

    @door
    def context(
        self,
        at: str | Sequence[str] | None,
        *,
        query: str | None = None,
        window: int | None = 8,
        k: int | None = 10,
        namespace: str | None = None,
        mode: str | None = None,
        embedder: Embedder | str | None = None,
        tokenizer: Tokenizer | str | None = None,
        weights: Weights | None = None,
        scope_weights: Sequence[float] | None = None,
        kind: str | Sequence[str] | None = None,
        key_prefix: str | None = None,
        meta: Mapping[str, Any] | None = None,
        now: float | None = None,
        as_of: float | None = None,
        explain: bool | None = None,
        log: QueryLog | str | os.PathLike[str] | None = None,
        max_embed: int | None = None,
    ) -> Plan[Context]:
        """`Store.context` (its search options are the server's: naming one is
        refused; a keyword it does not take raises ``TypeError``)."""
        options = {o: v for o, v in locals().items() if o in retrieval.OPTIONS}  # the keywords
        return retrieval.context(
            namespace, at, query=query, window=window, k=k, search_options=options
        )

    # -- branches, snapshots, merges, conflicts (branches.py)
    @door
    def create_branch(
        self, name: str, *, at: str, namespace: str | None = None, actor: str | None = None
    ) -> Plan[Branch]:
        """`Store.create_branch`."""
        return branches.create_branch(namespace, name, at)

    @door
    def set_branch(
        self,
        name: str,
        event_id: str,
        *,
        namespace: str | None = None,
        actor: str | None = None,
        expected_head: str | None = None,
    ) -> Plan[Branch]:
        """`Store.set_branch` (with ``expected_head``: only if the head is still there)."""
        return branches.set_branch(namespace, name, event_id, expected_head)

    @door
    def branch_head(self, name: str, *, namespace: str | None = None) -> Plan[str]:
        """`Store.branch_head`."""
        return branches.branch_head(namespace, name)

    @door
    def branches(self, *, namespace: str | None = None, count: bool = True) -> Plan[list[Branch]]:
        """`Store.branches` (always counted)."""
        return branches.branches(namespace)

    @door
    def delete_branch(
        self, name: str, *, namespace: str | None = None, actor: str | None = None
    ) -> Plan[None]:
        """`Store.delete_branch`."""
        return branches.delete_branch(namespace, name)

    @door
    def snapshot(
        self, branch: str, name: str, *, namespace: str | None = None, actor: str | None = None
    ) -> Plan[Snapshot]:
        """`Store.snapshot`."""
        return branches.snapshot(namespace, branch, name)

    @door
    def snapshots(self, *, namespace: str | None = None) -> Plan[list[Snapshot]]:
        """`Store.snapshots`."""
        return branches.snapshots(namespace)

    @door
    def rollback(
        self,
        branch: str,
        to: str,
        *,
        namespace: str | None = None,
        actor: str | None = None,
        expected_head: str | None = None,
    ) -> Plan[Branch]:
        """`Store.rollback`."""
        return branches.rollback(namespace, branch, to, expected_head)

    @door
    def history(self, branch: str, *, namespace: str | None = None) -> Plan[list[HeadMove]]:
        """`Store.history`."""
        return branches.history(namespace, branch)

    @door
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
    ) -> Plan[MergeResult]:
        """`Store.merge`."""
        body: dict[str, Any] = {"source": source, "into": into, "strategy": strategy}
        body |= {"fast_forward": fast_forward, "event_id": event_id, "expected_head": expected_head}
        return branches.merge(namespace, body)

    @door
    def conflicts(self, *, at: str | None, namespace: str | None = None) -> Plan[list[Conflict]]:
        """`Store.conflicts`."""
        return branches.conflicts(namespace, at)

    @door
    def resolve(
        self,
        conflict_id: str,
        keep: str,
        *,
        branch: str,
        namespace: str | None = None,
        actor: str | None = None,
        expected_head: str | None = None,
    ) -> Plan[Event]:
        """`Store.resolve`."""
        return branches.resolve(namespace, conflict_id, keep, branch, expected_head)

    @door
    def prune_branches(
        self,
        prefix: str,
        older_than: float,
        *,
        namespace: str | None = None,
        now: float | None = None,
        actor: str | None = None,
    ) -> Plan[list[str]]:
        """`Store.prune_branches`."""
        return branches.prune_branches(namespace, prefix, older_than, now)

    # -- erasure and the audit log (admin.py)
    @door
    def purge(
        self,
        *,
        events: Sequence[str] = (),
        memories: Sequence[str] = (),
        namespace: str | None = None,
        whole_namespace: bool = False,
        actor: str | None = None,
    ) -> Plan[list[str]]:
        """`Store.purge` (needs an admin grant)."""
        return admin.purge(namespace, events, memories, whole_namespace)

    @door
    def audit(
        self, namespace: str | None = None, since: float | None = None
    ) -> Plan[list[AuditEntry]]:
        """`Store.audit` (needs an admin grant)."""
        return admin.audit(namespace, since)
