"""`RemoteStore` methods for events and records: writes and the gate's reads.

Each is `Store`'s method of the same name over the HTTP API (see
`branchmem.client`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .client_transport import Transport
from .importers.model import ImportReport
from .model import Event, Explanation, Memory, SourceStatus
from .validate import MAX_MESSAGE_BYTES


class RemoteRecordOps(Transport):
    """`RemoteStore` methods for events and records (mixed into `RemoteStore`)."""

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
        rows = []
        for e in events:
            item = e.to_dict() if isinstance(e, Event) else dict(e)
            ns = item.pop("namespace", None)
            item.pop("created_at", None)
            if "parents" in item:
                item["parent"] = _plain(item.pop("parents"))
            rows.append((ns, item))
        return [Event.from_dict(d) for d in self._post_per_namespace("events", rows)]

    def get_event(self, event_id: str, namespace: str | None = None) -> Event:
        """`Store.get_event`."""
        return Event.from_dict(self._send("GET", namespace, "events", event_id))

    def path(self, at: str | None, namespace: str | None = None) -> list[Event]:
        """`Store.path`."""
        return [Event.from_dict(d) for d in self._all("events", namespace, "path", at=at)]

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
        from .importers import import_export

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

    def events(
        self, *, namespace: str | None = None, offset: int = 0, limit: int = 1000
    ) -> list[Event]:
        """`Store.events`."""
        params = {"offset": offset, "limit": limit}
        body = self._send("GET", namespace, "events", params=params)
        return [Event.from_dict(d) for d in body["events"]]

    def records(
        self, *, namespace: str | None = None, offset: int = 0, limit: int = 1000
    ) -> list[Memory]:
        """`Store.records` (through ``inspect`` without an anchor)."""
        params = {"offset": offset, "limit": limit}
        body = self._send("GET", namespace, "inspect", params=params)
        return [Memory.from_dict(d["memory"]) for d in body["memories"]]

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
        dicts = [m.to_dict() if isinstance(m, Memory) else dict(m) for m in items]
        rows = [(d.get("namespace"), _pick(d, _MEMORY_FIELDS)) for d in dicts]
        return [Memory.from_dict(d) for d in self._post_per_namespace("memories", rows)]

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
        return explanation_from(
            self._send("GET", namespace, "memories", memory_id, "explain", params=params)
        )


_MEMORY_FIELDS: tuple[str, ...] = ("content", "sources", "kind", "key", "importance", "meta")
_MEMORY_FIELDS += ("id", "expires_at", "valid_from", "valid_to")


def _plain(parent: Any) -> Any:
    return list(parent) if isinstance(parent, (list, tuple)) else parent


def _pick(row: Mapping[str, Any], keys: Sequence[str]) -> dict[str, Any]:
    return {k: row[k] for k in keys if row.get(k) is not None}


def explanation_from(d: Mapping[str, Any]) -> Explanation:
    return Explanation(
        d["memory_id"],
        d["at"],
        d["visible"],
        d["reason"],
        tuple(SourceStatus(s["event_id"], s["state"]) for s in d["sources"]),
        tuple(d["hidden_by"]),
        d.get("hidden_by_time"),
    )
