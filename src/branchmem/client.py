"""`RemoteStore`: `Store`'s methods over a served store's HTTP API.

Code moves between embedded and served by changing one line::

    store = Store("mem.db")
    store = RemoteStore("http://127.0.0.1:8080", api_key=KEY, namespace="alice")

Results are the same frozen dataclasses, and errors the same exception
classes (rebuilt from the error ``type`` the server answers, with their
message and ids). Needs only httpx. Differences: ``namespace`` defaults to
the one given to the constructor; ``actor=`` is accepted and ignored, since
the server records the key's principal as the actor of every write; search
takes only JSON-friendly options (``embedder`` and ``log`` are the server's).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any
from urllib.parse import quote

import httpx

from .branch_types import AuditEntry, Conflict, HeadMove, MergeResult, Snapshot
from .context import Context
from .errors import BranchmemError, InvalidInput, StorageError
from .model import Branch, Event, Explanation, Memory, SourceStatus
from .retrieval.hit import Hit, HitExplanation
from .server.errors import from_payload


class RemoteStore:
    """A served store, with `Store`'s methods.

    >>> store = RemoteStore("http://127.0.0.1:8080", api_key="bm_...", namespace="alice")
    ... # doctest: +SKIP
    """

    def __init__(
        self,
        url: str,
        *,
        api_key: str | None = None,
        namespace: str = "default",
        timeout: float = 30.0,
        http_client: httpx.Client | None = None,
    ) -> None:
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        if http_client is None:
            http_client = httpx.Client(base_url=url, timeout=timeout)
        self._http = http_client
        self.namespace = namespace

    def __enter__(self) -> RemoteStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the HTTP connection pool."""
        self._http.close()

    # -------------------------------------------------------------- plumbing
    def _url(self, namespace: str | None, *parts: str) -> str:
        ns = self.namespace if namespace is None else namespace
        tail = "/".join(quote(p, safe="") for p in parts)
        return f"/v1/namespaces/{quote(ns, safe='')}/{tail}"

    def _send(
        self,
        method: str,
        namespace: str | None,
        *parts: str,
        json: Any = None,
        params: Mapping[str, Any] | None = None,
    ) -> Any:
        clean = None if params is None else {k: v for k, v in params.items() if v is not None}
        try:
            r = self._http.request(
                method, self._url(namespace, *parts), json=json, params=clean, headers=self._headers
            )
        except httpx.HTTPError as exc:
            raise StorageError(f"the server did not answer: {exc}") from exc
        try:
            body = r.json()
        except ValueError:
            body = None
        if r.status_code >= 400:
            raise from_payload(body, r.status_code)
        return body

    def _all(self, name: str, namespace: str | None, *parts: str, **params: Any) -> list[Any]:
        """Every page of a paginated list."""
        out: list[Any] = []
        offset: int | None = 0
        while offset is not None:
            body = self._send("GET", namespace, *parts, params={**params, "offset": offset})
            out += body[name]
            offset = body.get("next_offset")
        return out

    # ---------------------------------------------------------------- events
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
        body = {"id": id, "parent": _plain(parent), "role": role, "content": content}
        body |= {"meta": meta, "branch": branch, "expected_head": expected_head}
        return Event.from_dict(self._send("POST", namespace, "events", json=body)["events"][0])

    def add_events(
        self, events: Iterable[Event | Mapping[str, Any]], *, actor: str | None = None
    ) -> list[Event]:
        """`Store.add_events` (one request per namespace named in the items)."""
        items = [e.to_dict() if isinstance(e, Event) else dict(e) for e in events]
        by_ns: dict[str | None, list[int]] = {}
        for i, item in enumerate(items):
            by_ns.setdefault(item.pop("namespace", None), []).append(i)
            item.pop("created_at", None)
            if "parents" in item:
                item["parent"] = _plain(item.pop("parents"))
        out: list[Event | None] = [None] * len(items)
        for ns, idxs in by_ns.items():
            body = {"events": [items[i] for i in idxs]}
            done = self._send("POST", ns, "events", json=body)["events"]
            for i, d in zip(idxs, done, strict=True):
                out[i] = Event.from_dict(d)
        return [e for e in out if e is not None]

    def get_event(self, event_id: str, namespace: str | None = None) -> Event:
        """`Store.get_event`."""
        return Event.from_dict(self._send("GET", namespace, "events", event_id))

    def path(self, at: str | None, namespace: str | None = None) -> list[Event]:
        """`Store.path`."""
        return [Event.from_dict(d) for d in self._all("events", namespace, "path", at=at)]

    # --------------------------------------------------------------- records
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
        return Memory.from_dict(self._send("POST", namespace, "memories", json=body)["memories"][0])

    def add_memories(
        self, items: Iterable[Memory | Mapping[str, Any]], *, actor: str | None = None
    ) -> list[Memory]:
        """`Store.add_memories` (one request per namespace named in the items)."""
        wanted = _MEMORY_FIELDS
        rows = [m.to_dict() if isinstance(m, Memory) else dict(m) for m in items]
        by_ns: dict[str | None, list[int]] = {}
        for i, row in enumerate(rows):
            by_ns.setdefault(row.get("namespace"), []).append(i)
        out: list[Memory | None] = [None] * len(rows)
        for ns, idxs in by_ns.items():
            body = {"memories": [_pick(rows[i], wanted) for i in idxs]}
            done = self._send("POST", ns, "memories", json=body)["memories"]
            for i, d in zip(idxs, done, strict=True):
                out[i] = Memory.from_dict(d)
        return [m for m in out if m is not None]

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
        return Memory.from_dict(self._send("POST", namespace, "memories", json=body)["memories"][0])

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
        body = {"sources": list(sources), "id": id}
        return Memory.from_dict(
            self._send("POST", namespace, "memories", memory_id, "retract", json=body)
        )

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
        d = self._send("POST", namespace, "memories", memory_id, "supersede", json=body)
        return Memory.from_dict(d)

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
        if at is None:
            return []
        params = {"at": [at] if isinstance(at, str) else list(at), "kind": kind, "now": now}
        params |= {"as_of": as_of, "include_archived": include_archived}
        return [Memory.from_dict(d) for d in self._all("memories", namespace, "memories", **params)]

    def get_memory(self, memory_id: str, namespace: str | None = None) -> Memory:
        """`Store.get_memory`."""
        return Memory.from_dict(self._send("GET", namespace, "memories", memory_id))

    def visible(self, memory_id: str, *, at: str | None, namespace: str | None = None) -> bool:
        """`Store.visible`."""
        d = self._send("GET", namespace, "memories", memory_id, "visible", params={"at": at})
        return bool(d["visible"])

    def explain(
        self,
        memory_id: str,
        *,
        at: str | None,
        namespace: str | None = None,
        now: float | None = None,
    ) -> Explanation:
        """`Store.explain`."""
        params = {"at": at, "now": now}
        return _explanation(
            self._send("GET", namespace, "memories", memory_id, "explain", params=params)
        )

    def search(
        self,
        query: str,
        *,
        at: str | Sequence[str] | None,
        k: int = 10,
        namespace: str | None = None,
        **options: Any,
    ) -> list[Hit]:
        """`Store.search` (options: ``mode``, ``kind``, ``key_prefix``, ``meta``,
        ``now``, ``as_of``, ``explain``). The embedder is the server's."""
        for option in ("embedder", "tokenizer", "weights", "log"):
            if options.get(option) is not None:
                raise InvalidInput(
                    f"{option}= is chosen by the server (branchmem serve), not per search; "
                    "leave it out"
                )
        anchors = at if at is None or isinstance(at, str) else list(at)
        body = {"query": query, "at": anchors, "k": k, **options}
        return [_hit(h) for h in self._send("POST", namespace, "search", json=body)["hits"]]

    def touch(
        self,
        ids: Iterable[str],
        *,
        namespace: str | None = None,
        now: float | None = None,
        actor: str | None = None,
    ) -> None:
        """`Store.touch`."""
        if isinstance(ids, str):
            raise InvalidInput("touch() takes a list of memory ids, e.g. touch([m.id])")
        self._send("POST", namespace, "touch", json={"ids": list(ids), "now": now})

    def score(
        self, memory_id: str, *, now: float | None = None, namespace: str | None = None
    ) -> float:
        """`Store.score`."""
        d = self._send("GET", namespace, "memories", memory_id, "score", params={"now": now})
        return float(d["score"])

    def archive_expired(
        self, now: float | None = None, *, namespace: str | None = None, actor: str | None = None
    ) -> list[str]:
        """`Store.archive_expired`."""
        return list(self._send("POST", namespace, "archive", json={"now": now})["ids"])

    def restore(
        self, memory_id: str, *, namespace: str | None = None, actor: str | None = None
    ) -> Memory:
        """`Store.restore`."""
        return Memory.from_dict(self._send("POST", namespace, "memories", memory_id, "restore"))

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
        if extractor is not None:
            raise InvalidInput("extractor= is the server's, not per call; leave it out")
        body = {"at": at, "window": window}
        return [
            Memory.from_dict(d)
            for d in self._send("POST", namespace, "extract", json=body)["memories"]
        ]

    def context(
        self,
        at: str | Sequence[str] | None,
        *,
        query: str | None = None,
        window: int | None = 8,
        k: int | None = 10,
        namespace: str | None = None,
        **search_options: Any,
    ) -> Context:
        """`Store.context` (search options are the server's)."""
        if search_options:
            raise InvalidInput("search options are the server's, not per call; leave them out")
        anchors = [at] if isinstance(at, str) else None if at is None else list(at)
        params = {"at": anchors, "query": query, "window": window, "k": k}
        d = self._send("GET", namespace, "context", params=params)
        chain = tuple(d["at"]) if isinstance(d["at"], list) else d["at"]
        mems = [Memory.from_dict(m) for m in d["memories"]]
        return Context(chain, [dict(m) for m in d["messages"]], mems, d["query"])

    # -------------------------------------------------------------- branches
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
        self, branch: str, to: str, *, namespace: str | None = None, actor: str | None = None
    ) -> Branch:
        """`Store.rollback`."""
        return Branch(
            **self._send("POST", namespace, "rollback", json={"branch": branch, "to": to})
        )

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

    # ----------------------------------------------------------------- admin
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
        body = {
            "events": list(events),
            "memories": list(memories),
            "whole_namespace": whole_namespace,
        }
        return list(self._send("POST", namespace, "purge", json=body)["removed"])

    def audit(self, namespace: str | None = None, since: float | None = None) -> list[AuditEntry]:
        """`Store.audit` (needs an admin grant)."""
        found = self._all("entries", namespace, "audit", since=since)
        return [AuditEntry(**{**d, "ids": tuple(d["ids"])}) for d in found]


_MEMORY_FIELDS: tuple[str, ...] = ("content", "sources", "kind", "key", "importance", "meta")
_MEMORY_FIELDS += ("id", "expires_at", "valid_from", "valid_to")


def _plain(parent: Any) -> Any:
    return list(parent) if isinstance(parent, (list, tuple)) else parent


def _pick(row: Mapping[str, Any], keys: Sequence[str]) -> dict[str, Any]:
    return {k: row[k] for k in keys if row.get(k) is not None}


def _explanation(d: Mapping[str, Any]) -> Explanation:
    return Explanation(
        d["memory_id"],
        d["at"],
        d["visible"],
        d["reason"],
        tuple(SourceStatus(s["event_id"], s["state"]) for s in d["sources"]),
        tuple(d["hidden_by"]),
        d.get("hidden_by_time"),
    )


def _hit(d: Mapping[str, Any]) -> Hit:
    e = d.get("explanation")
    explanation = None
    if e is not None:
        explanation = HitExplanation(
            _explanation(e["visibility"]),
            e["scoring"],
            e["keyword_rank"],
            e["vector_rank"],
            e["relevance"],
        )
    return Hit(Memory.from_dict(d["memory"]), d["score"], d["via"], dict(d["parts"]), explanation)


__all__ = ["BranchmemError", "RemoteStore"]
