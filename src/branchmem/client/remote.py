"""`RemoteStore`: the client's front door, `Store`'s methods with their signatures, each
handed to the function of its area (`records`, `retrieval`, `branches`, `admin`, `tree`)."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import httpx

from ..branch_types import AuditEntry, Conflict, HeadMove, MergeResult, Snapshot
from ..context import Context
from ..importers.model import ImportReport
from ..model import Branch, Event, Explanation, Memory
from ..retrieval.embed import Embedder
from ..retrieval.fusion import Weights
from ..retrieval.hit import Hit
from ..retrieval.tokenize import Tokenizer
from ..searchlog import QueryLog
from ..validate import MAX_MESSAGE_BYTES
from . import admin, branches, graph, records, retrieval, tree
from .background import RemoteBackground
from .connection import Connection


class RemoteStore(RemoteBackground):
    """A served store, with `Store`'s methods (the background work's: `background`).
    ``transport`` is any httpx transport: here `httpx.MockTransport` stands in
    for a server, to show what goes over the wire and what comes back::

    >>> import httpx
    >>> from branchmem.errors import UnknownBranch
    >>> from branchmem.server.errors import to_payload
    >>> seen = []
    >>> def server(request: httpx.Request) -> httpx.Response:
    ...     seen.append((request.method, request.url.path, request.headers["authorization"]))
    ...     name = request.url.path.rsplit("/", 1)[-1]
    ...     if name == "main":
    ...         return httpx.Response(200, json={"name": "main", "head": "e2"})
    ...     return httpx.Response(404, json=to_payload(UnknownBranch(name, "alice")))
    >>> store = RemoteStore(
    ...     "http://memory.example", api_key="bm_k", namespace="alice",
    ...     transport=httpx.MockTransport(server),
    ... )
    >>> store.branch_head("main")
    'e2'
    >>> seen
    [('GET', '/v1/namespaces/alice/branches/main', 'Bearer bm_k')]
    >>> store.branch_head("draft")  # the server's error, rebuilt as the same class
    Traceback (most recent call last):
    ...
    branchmem.errors.UnknownBranch: no branch 'draft' in namespace 'alice'; ...
    >>> store.close()

    ``http_client`` is an `httpx.Client` of your own instead (its base URL is
    the one used): starlette's ``TestClient`` serves an app in this process.
    """

    def __init__(
        self,
        url: str,
        *,
        api_key: str | None = None,
        namespace: str = "default",
        timeout: float = 30.0,
        transport: httpx.BaseTransport | None = None,
        http_client: httpx.Client | None = None,
    ) -> None:
        self._c = Connection(
            url,
            api_key=api_key,
            namespace=namespace,
            timeout=timeout,
            transport=transport,
            http_client=http_client,
        )

    @property
    def namespace(self) -> str:
        """The namespace a call without ``namespace=`` acts on."""
        return self._c.namespace

    @namespace.setter
    def namespace(self, value: str) -> None:
        self._c.namespace = value

    def close(self) -> None:
        """Close the HTTP client (and its connection pool)."""
        self._c.close()

    def __enter__(self) -> RemoteStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- events and records (records.py)
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
    ) -> Event:
        """`Store.add_event`."""
        return records.add_event(
            self._c,
            namespace,
            id,
            parent=parent,
            role=role,
            content=content,
            meta=meta,
            branch=branch,
            expected_head=expected_head,
        )

    def add_events(
        self, events: Iterable[Event | Mapping[str, Any]], *, actor: str | None = None
    ) -> list[Event]:
        """`Store.add_events` (one request per namespace named in the items)."""
        return records.add_events(self._c, events)

    children, siblings, versions, diff = tree.children, tree.siblings, tree.versions, tree.diff
    add_edge, graph_neighbors = graph.add_edge, graph.graph_neighbors

    def get_event(self, event_id: str, namespace: str | None = None) -> Event:
        """`Store.get_event`."""
        return records.get_event(self._c, namespace, event_id)

    def path(
        self, at: str | None, namespace: str | None = None, *, last: int | None = None
    ) -> list[Event]:
        """`Store.path` (``last=n``: the last ``n`` of the whole path, by place)."""
        return records.path(self._c, namespace, at, last)

    def events(
        self, *, namespace: str | None = None, offset: int = 0, limit: int = 1000
    ) -> list[Event]:
        """`Store.events`."""
        return records.events(self._c, namespace, offset, limit)

    def records(
        self, *, namespace: str | None = None, offset: int = 0, limit: int = 1000
    ) -> list[Memory]:
        """`Store.records` (through ``inspect`` without an anchor)."""
        return records.records(self._c, namespace, offset, limit)

    def import_export(
        self,
        path: Any,
        *,
        format: str = "auto",
        namespace: str | None = None,
        progress: Any = None,
        max_message_bytes: int = MAX_MESSAGE_BYTES,
    ) -> ImportReport:
        """`Store.import_export`: the export is read here, and each conversation's
        new events go to the server in one request (then its branch is set)."""
        from ..importers import import_export

        store: Any = self  # the importers use only methods RemoteStore shares with Store
        ns = self.namespace if namespace is None else namespace
        return import_export(
            store,
            path,
            format=format,
            namespace=ns,
            progress=progress,
            max_message_bytes=max_message_bytes,
        )

    def add_memory(
        self,
        content: str,
        *,
        sources: Sequence[str],
        namespace: str | None = None,
        actor: str | None = None,
        **fields: Any,
    ) -> Memory:
        """`Store.add_memory` (``kind``, ``key``, ``importance``, ``meta``, ``id``,
        ``expires_at``, ``valid_from``, ``valid_to`` as keywords)."""
        body = {"content": content, "sources": list(sources), **fields}
        return records.add_memory(self._c, namespace, body)

    def add_memories(
        self, items: Iterable[Memory | Mapping[str, Any]], *, actor: str | None = None
    ) -> list[Memory]:
        """`Store.add_memories` (one request per namespace named in the items)."""
        return records.add_memories(self._c, items)

    def remember(
        self,
        content: str,
        *,
        branch: str,
        namespace: str | None = None,
        actor: str | None = None,
        **fields: Any,
    ) -> Memory:
        """`Store.remember`."""
        body = {"content": content, "branch": branch, **fields}
        return records.add_memory(self._c, namespace, body)

    def retract(
        self,
        memory_id: str,
        *,
        sources: Sequence[str],
        namespace: str | None = None,
        id: str | None = None,
        actor: str | None = None,
    ) -> Memory:
        """`Store.retract`."""
        return records.retract(self._c, namespace, memory_id, sources, id)

    def supersede(
        self,
        memory_id: str,
        content: str,
        *,
        sources: Sequence[str],
        namespace: str | None = None,
        actor: str | None = None,
        **fields: Any,
    ) -> Memory:
        """`Store.supersede`."""
        body = {"content": content, "sources": list(sources), **fields}
        return records.supersede(self._c, namespace, memory_id, body)

    def memories(
        self,
        *,
        at: str | Sequence[str] | None,
        kind: str | None = None,
        namespace: str | None = None,
        now: float | None = None,
        as_of: float | None = None,
        include_archived: bool = False,
    ) -> list[Memory]:
        """`Store.memories` (``at=None``: ``[]``, asked of no one)."""
        return records.memories(
            self._c,
            namespace,
            at,
            kind=kind,
            now=now,
            as_of=as_of,
            include_archived=include_archived,
        )

    def get_memory(self, memory_id: str, namespace: str | None = None) -> Memory:
        """`Store.get_memory`."""
        return records.get_memory(self._c, namespace, memory_id)

    def visible(self, memory_id: str, *, at: str | None, namespace: str | None = None) -> bool:
        """`Store.visible`."""
        return records.visible(self._c, namespace, memory_id, at)

    def explain(
        self,
        memory_id: str,
        *,
        at: str | None,
        namespace: str | None = None,
        now: float | None = None,
    ) -> Explanation:
        """`Store.explain`."""
        return records.explain(self._c, namespace, memory_id, at, now)

    # -- search, context, extraction, lifecycle (retrieval.py)
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
    ) -> list[Hit]:
        """`Store.search`; naming an option the server sets (`retrieval.SERVER_CHOSEN`,
        `retrieval.NOT_SERVED`) is refused, an unknown keyword raises ``TypeError``."""
        options = {o: v for o, v in locals().items() if o in retrieval.OPTIONS}  # the keywords
        return retrieval.search(self._c, namespace, query, at, k, options)

    def touch(
        self,
        ids: Iterable[str],
        *,
        namespace: str | None = None,
        now: float | None = None,
        actor: str | None = None,
    ) -> None:
        """`Store.touch`."""
        retrieval.touch(self._c, namespace, ids, now)

    def score(
        self, memory_id: str, *, now: float | None = None, namespace: str | None = None
    ) -> float:
        """`Store.score`."""
        return retrieval.score(self._c, namespace, memory_id, now)

    def archive_expired(
        self, now: float | None = None, *, namespace: str | None = None, actor: str | None = None
    ) -> list[str]:
        """`Store.archive_expired`."""
        return retrieval.archive_expired(self._c, namespace, now)

    def restore(
        self, memory_id: str, *, namespace: str | None = None, actor: str | None = None
    ) -> Memory:
        """`Store.restore`."""
        return retrieval.restore(self._c, namespace, memory_id)

    def extract(
        self,
        at: str,
        *,
        extractor: Any = None,
        window: int = 8,
        namespace: str | None = None,
        actor: str | None = None,
    ) -> list[Memory]:
        """`Store.extract` with the server's offline rule extractor."""
        return retrieval.extract(self._c, namespace, at, extractor, window)

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
    ) -> Context:
        """`Store.context` (its search options are the server's: naming one is
        refused; a keyword it does not take raises ``TypeError``)."""
        options = {o: v for o, v in locals().items() if o in retrieval.OPTIONS}  # the keywords
        return retrieval.context(
            self._c, namespace, at, query=query, window=window, k=k, search_options=options
        )

    # -- branches, snapshots, merges, conflicts (branches.py)
    def create_branch(
        self, name: str, *, at: str, namespace: str | None = None, actor: str | None = None
    ) -> Branch:
        """`Store.create_branch`."""
        return branches.create_branch(self._c, namespace, name, at)

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
        return branches.set_branch(self._c, namespace, name, event_id, expected_head)

    def branch_head(self, name: str, *, namespace: str | None = None) -> str:
        """`Store.branch_head`."""
        return branches.branch_head(self._c, namespace, name)

    def branches(self, *, namespace: str | None = None, count: bool = True) -> list[Branch]:
        """`Store.branches` (always counted)."""
        return branches.branches(self._c, namespace)

    def delete_branch(
        self, name: str, *, namespace: str | None = None, actor: str | None = None
    ) -> None:
        """`Store.delete_branch`."""
        branches.delete_branch(self._c, namespace, name)

    def snapshot(
        self, branch: str, name: str, *, namespace: str | None = None, actor: str | None = None
    ) -> Snapshot:
        """`Store.snapshot`."""
        return branches.snapshot(self._c, namespace, branch, name)

    def snapshots(self, *, namespace: str | None = None) -> list[Snapshot]:
        """`Store.snapshots`."""
        return branches.snapshots(self._c, namespace)

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
        return branches.rollback(self._c, namespace, branch, to, expected_head)

    def history(self, branch: str, *, namespace: str | None = None) -> list[HeadMove]:
        """`Store.history`."""
        return branches.history(self._c, namespace, branch)

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
        return branches.merge(self._c, namespace, body)

    def conflicts(self, *, at: str | None, namespace: str | None = None) -> list[Conflict]:
        """`Store.conflicts`."""
        return branches.conflicts(self._c, namespace, at)

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
        return branches.resolve(self._c, namespace, conflict_id, keep, branch, expected_head)

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
        return branches.prune_branches(self._c, namespace, prefix, older_than, now)

    # -- erasure and the audit log (admin.py)
    def purge(
        self,
        *,
        events: Sequence[str] = (),
        memories: Sequence[str] = (),
        namespace: str | None = None,
        whole_namespace: bool = False,
        actor: str | None = None,
    ) -> list[str]:
        """`Store.purge` (needs an admin grant)."""
        return admin.purge(self._c, namespace, events, memories, whole_namespace)

    def audit(self, namespace: str | None = None, since: float | None = None) -> list[AuditEntry]:
        """`Store.audit` (needs an admin grant)."""
        return admin.audit(self._c, namespace, since)
