"""Events and records over the HTTP API: writes and the gate's reads.

Plans (`wire.Plan`), one per `Store` method of the same name, that
`RemoteStore` and `AsyncRemoteStore` run (`surface`). ``namespace=None`` is the
connection's own.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..model import Event, Explanation, Memory
from ..validate import check_anchors, check_int
from . import decode
from .wire import Plan, call, pages, per_namespace


def add_event(
    namespace: str | None,
    id: str,
    *,
    parent: str | Sequence[str] | None,
    role: str,
    content: str,
    meta: dict[str, Any] | None,
    branch: str | None,
    expected_head: str | None,
) -> Plan[Event]:
    body: dict[str, Any] = {"id": id, "parent": _plain(parent), "role": role}
    body["content"] = content
    body |= {"meta": meta, "branch": branch, "expected_head": expected_head}
    return Event.from_dict((yield from call("POST", namespace, "events", json=body))["events"][0])


def add_events(events: Iterable[Event | Mapping[str, Any]]) -> Plan[list[Event]]:
    """One request per namespace named in the items."""
    rows = []
    for e in events:
        item = e.to_dict() if isinstance(e, Event) else dict(e)
        ns = item.pop("namespace", None)
        item.pop("created_at", None)
        if "parents" in item:
            item["parent"] = _plain(item.pop("parents"))
        rows.append((ns, item))
    return [Event.from_dict(d) for d in (yield from per_namespace("events", rows))]


def get_event(namespace: str | None, event_id: str) -> Plan[Event]:
    return Event.from_dict((yield from call("GET", namespace, "events", event_id)))


def path(namespace: str | None, at: str | None, last: int | None) -> Plan[list[Event]]:
    if last is not None:
        check_int(last, "last")
    events = [Event.from_dict(d) for d in (yield from pages("events", namespace, "path", at=at))]
    return events if last is None else events[-last:] if last else []


def events(namespace: str | None, offset: int, limit: int) -> Plan[list[Event]]:
    body = yield from call("GET", namespace, "events", params={"offset": offset, "limit": limit})
    return [Event.from_dict(d) for d in body["events"]]


def records(namespace: str | None, offset: int, limit: int) -> Plan[list[Memory]]:
    """Through ``inspect`` without an anchor."""
    body = yield from call("GET", namespace, "inspect", params={"offset": offset, "limit": limit})
    return [Memory.from_dict(d["memory"]) for d in body["memories"]]


def add_memory(namespace: str | None, body: dict[str, Any]) -> Plan[Memory]:
    """``body``: the record's fields, with ``sources`` or (to remember) ``branch``."""
    return Memory.from_dict(
        (yield from call("POST", namespace, "memories", json=body))["memories"][0]
    )


def add_memories(items: Iterable[Memory | Mapping[str, Any]]) -> Plan[list[Memory]]:
    """One request per namespace named in the items."""
    dicts = [m.to_dict() if isinstance(m, Memory) else dict(m) for m in items]
    rows = [(d.get("namespace"), _pick(d, _MEMORY_FIELDS)) for d in dicts]
    return [Memory.from_dict(d) for d in (yield from per_namespace("memories", rows))]


def retract(
    namespace: str | None, memory_id: str, sources: Sequence[str], id: str | None
) -> Plan[Memory]:
    body = {"sources": list(sources), "id": id}
    return Memory.from_dict(
        (yield from call("POST", namespace, "memories", memory_id, "retract", json=body))
    )


def supersede(namespace: str | None, memory_id: str, body: dict[str, Any]) -> Plan[Memory]:
    """``body``: the new record's content, sources and fields."""
    d = yield from call("POST", namespace, "memories", memory_id, "supersede", json=body)
    return Memory.from_dict(d)


def memories(
    namespace: str | None,
    at: str | Sequence[str] | None,
    *,
    kind: str | None,
    now: float | None,
    as_of: float | None,
    include_archived: bool,
) -> Plan[list[Memory]]:
    """``at=None`` is ``[]``, asked of no one."""
    if at is None:
        return []
    params = {"at": [at] if isinstance(at, str) else check_anchors(at), "kind": kind, "now": now}
    params |= {"as_of": as_of, "include_archived": include_archived}
    return [
        Memory.from_dict(d) for d in (yield from pages("memories", namespace, "memories", **params))
    ]


def get_memory(namespace: str | None, memory_id: str) -> Plan[Memory]:
    return Memory.from_dict((yield from call("GET", namespace, "memories", memory_id)))


def visible(namespace: str | None, memory_id: str, at: str | None) -> Plan[bool]:
    d = yield from call("GET", namespace, "memories", memory_id, "visible", params={"at": at})
    return bool(d["visible"])


def explain(
    namespace: str | None, memory_id: str, at: str | None, now: float | None
) -> Plan[Explanation]:
    params = {"at": at, "now": now}
    d = yield from call("GET", namespace, "memories", memory_id, "explain", params=params)
    return decode.explanation(d)


_MEMORY_FIELDS: tuple[str, ...] = ("content", "sources", "kind", "key", "importance", "meta")
_MEMORY_FIELDS += ("id", "expires_at", "valid_from", "valid_to")


def _plain(parent: Any) -> Any:
    return list(parent) if isinstance(parent, (list, tuple)) else parent


def _pick(row: Mapping[str, Any], keys: Sequence[str]) -> dict[str, Any]:
    return {k: row[k] for k in keys if row.get(k) is not None}
