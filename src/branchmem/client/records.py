"""Events and records over the HTTP API: writes and the gate's reads.

Plain functions of a `Connection`, one per `Store` method of the same name;
`branchmem.client.RemoteStore` calls them. ``namespace=None`` is the
connection's own.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..model import Event, Explanation, Memory
from ..validate import check_anchors, check_int
from . import decode
from .connection import Connection


def add_event(
    c: Connection,
    namespace: str | None,
    id: str,
    *,
    parent: str | Sequence[str] | None,
    role: str,
    content: str,
    meta: dict[str, Any] | None,
    branch: str | None,
    expected_head: str | None,
) -> Event:
    body = {"id": id, "parent": _plain(parent), "role": role, "content": content}
    body |= {"meta": meta, "branch": branch, "expected_head": expected_head}
    return Event.from_dict(c.send("POST", namespace, "events", json=body)["events"][0])


def add_events(c: Connection, events: Iterable[Event | Mapping[str, Any]]) -> list[Event]:
    """One request per namespace named in the items."""
    rows = []
    for e in events:
        item = e.to_dict() if isinstance(e, Event) else dict(e)
        ns = item.pop("namespace", None)
        item.pop("created_at", None)
        if "parents" in item:
            item["parent"] = _plain(item.pop("parents"))
        rows.append((ns, item))
    return [Event.from_dict(d) for d in c.post_per_namespace("events", rows)]


def get_event(c: Connection, namespace: str | None, event_id: str) -> Event:
    return Event.from_dict(c.send("GET", namespace, "events", event_id))


def path(c: Connection, namespace: str | None, at: str | None, last: int | None) -> list[Event]:
    if last is not None:
        check_int(last, "last")
    events = [Event.from_dict(d) for d in c.all("events", namespace, "path", at=at)]
    return events if last is None else events[-last:] if last else []


def events(c: Connection, namespace: str | None, offset: int, limit: int) -> list[Event]:
    body = c.send("GET", namespace, "events", params={"offset": offset, "limit": limit})
    return [Event.from_dict(d) for d in body["events"]]


def records(c: Connection, namespace: str | None, offset: int, limit: int) -> list[Memory]:
    """Through ``inspect`` without an anchor."""
    body = c.send("GET", namespace, "inspect", params={"offset": offset, "limit": limit})
    return [Memory.from_dict(d["memory"]) for d in body["memories"]]


def add_memory(c: Connection, namespace: str | None, body: dict[str, Any]) -> Memory:
    """``body``: the record's fields, with ``sources`` or (to remember) ``branch``."""
    return Memory.from_dict(c.send("POST", namespace, "memories", json=body)["memories"][0])


def add_memories(c: Connection, items: Iterable[Memory | Mapping[str, Any]]) -> list[Memory]:
    """One request per namespace named in the items."""
    dicts = [m.to_dict() if isinstance(m, Memory) else dict(m) for m in items]
    rows = [(d.get("namespace"), _pick(d, _MEMORY_FIELDS)) for d in dicts]
    return [Memory.from_dict(d) for d in c.post_per_namespace("memories", rows)]


def retract(
    c: Connection, namespace: str | None, memory_id: str, sources: Sequence[str], id: str | None
) -> Memory:
    body = {"sources": list(sources), "id": id}
    return Memory.from_dict(c.send("POST", namespace, "memories", memory_id, "retract", json=body))


def supersede(c: Connection, namespace: str | None, memory_id: str, body: dict[str, Any]) -> Memory:
    """``body``: the new record's content, sources and fields."""
    d = c.send("POST", namespace, "memories", memory_id, "supersede", json=body)
    return Memory.from_dict(d)


def memories(
    c: Connection,
    namespace: str | None,
    at: str | Sequence[str] | None,
    *,
    kind: str | None,
    now: float | None,
    as_of: float | None,
    include_archived: bool,
) -> list[Memory]:
    """``at=None`` is ``[]``, asked of no one."""
    if at is None:
        return []
    params = {"at": [at] if isinstance(at, str) else check_anchors(at), "kind": kind, "now": now}
    params |= {"as_of": as_of, "include_archived": include_archived}
    return [Memory.from_dict(d) for d in c.all("memories", namespace, "memories", **params)]


def get_memory(c: Connection, namespace: str | None, memory_id: str) -> Memory:
    return Memory.from_dict(c.send("GET", namespace, "memories", memory_id))


def visible(c: Connection, namespace: str | None, memory_id: str, at: str | None) -> bool:
    d = c.send("GET", namespace, "memories", memory_id, "visible", params={"at": at})
    return bool(d["visible"])


def explain(
    c: Connection, namespace: str | None, memory_id: str, at: str | None, now: float | None
) -> Explanation:
    params = {"at": at, "now": now}
    d = c.send("GET", namespace, "memories", memory_id, "explain", params=params)
    return decode.explanation(d)


_MEMORY_FIELDS: tuple[str, ...] = ("content", "sources", "kind", "key", "importance", "meta")
_MEMORY_FIELDS += ("id", "expires_at", "valid_from", "valid_to")


def _plain(parent: Any) -> Any:
    return list(parent) if isinstance(parent, (list, tuple)) else parent


def _pick(row: Mapping[str, Any], keys: Sequence[str]) -> dict[str, Any]:
    return {k: row[k] for k in keys if row.get(k) is not None}
