"""Checking a batch of events a column at a time: the common shape of an import.

A batch of plain dicts, each with an id, at most one parent (``parent``),
and optionally a role, text content, a namespace and meta, is checked field
by field across the batch: each check is one pass of a built-in over a
column (or over the column joined into one string) instead of a few Python
statements per event. Anything else, or any value that fails a check, gives
None, and the caller checks item by item (`validate.events_from`), which
raises the precise error. Tested against `validate.event_from`.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import repeat
from typing import Any

from .errors import InvalidInput
from .model import ROLES, Event, make_event, make_events
from .validate import (
    _EVENT_KEYS,
    MAX_CONTENT_BYTES,
    MAX_ID_LEN,
    check_meta,
    check_namespace,
    check_parents,
    event_from,
)
from .validate_json import _SURROGATE

_ROLES = frozenset(ROLES)
_get = dict.get
_has = dict.__contains__
_NONE = type(None)


@dataclass(slots=True)
class EventColumns:
    """The checked fields of a batch, one list per field (``parents`` holds
    None, the single parent's id, or a tuple of several)."""

    ids: list[str]
    parents: list[str | tuple[str, ...] | None]
    roles: list[str]
    contents: list[str]
    namespaces: list[str]
    metas: list[dict[str, Any] | None]

    def events(self, now: float) -> list[Event]:
        """The `Event` of each item."""
        ids = self.ids
        seen = dict(zip(ids, ids, strict=True))  # a parent in the batch: one string object
        get = seen.get
        parents = [
            () if p is None else (get(p, p),) if isinstance(p, str) else p for p in self.parents
        ]
        cols = (self.roles, self.contents, self.namespaces, self.metas)
        return make_events(ids, parents, *cols, now)


def _column(items: list[dict[str, Any]], key: str, default: Any = None) -> list[Any]:
    return list(map(_get, items, repeat(key), repeat(default)))


def _ids_ok(ids: list[Any]) -> bool:
    """Is every value an id `validate.check_id` accepts?"""
    if not ids:
        return True
    if set(map(type, ids)) != {str}:
        return False
    lengths = list(map(len, ids))
    if min(lengths) == 0 or max(lengths) > MAX_ID_LEN:
        return False
    joined = "".join(ids)
    if not joined.isprintable():
        return False
    # A printable id of whitespace alone is made of ASCII spaces.
    return " " not in joined or not any(map(str.isspace, ids))


def _text_ok(texts: list[Any]) -> bool:
    """Is every value content `validate.check_content` accepts (settled by
    length: a text near the limit is looked at item by item)?"""
    return (
        set(map(type, texts)) == {str}
        and max(map(len, texts)) <= _SHORT
        and _storable_text("".join(texts))
    )


_SHORT = MAX_CONTENT_BYTES // 4
"""Characters that are within the content limit whatever they are (4 bytes at most each)."""


def _storable_text(text: str) -> bool:
    """Can a text column hold ``text`` (no NUL, no lone surrogate)?"""
    return "\x00" not in text and (text.isascii() or not _SURROGATE(text))


def event_columns(items: list[Any]) -> EventColumns | None:
    """The checked columns of ``items``, or None when an item is not of the
    common shape or a value fails a check."""
    if not items or set(map(type, items)) != {dict}:
        return None
    try:
        return _columns(items)
    except Exception:  # a value no check expects (unhashable, comparing oddly)
        return None


def _columns(items: list[dict[str, Any]]) -> EventColumns | None:
    if not all(map(_EVENT_KEYS.issuperset, items)):
        return None
    ids = _column(items, "id")
    if any(map(_has, items, repeat("parents"))):
        parents = [d["parents"] if "parents" in d else d.get("parent") for d in items]
    else:
        parents = _column(items, "parent")
    roles = _column(items, "role", "user")
    contents = _column(items, "content", "")
    namespaces = _column(items, "namespace", "default")
    metas = _column(items, "meta")
    if not _ids_ok(ids) or not _text_ok(contents):
        return None
    if set(map(type, roles)) != {str} or not _ROLES.issuperset(roles):
        return None
    # Counted by type, which compares by identity (a value's own == may not).
    kinds = list(map(type, parents))
    try:
        if kinds.count(str) + kinds.count(_NONE) != len(parents):
            parents = [_merge(i, p) for i, p in zip(ids, parents, strict=True)]
        if not _ids_ok([p for p in parents if type(p) is str]):
            return None
        for ns in set(namespaces).difference(["default"]):
            check_namespace(ns)
        if list(map(type, metas)).count(_NONE) != len(metas):
            metas = [None if m is None else check_meta(m) for m in metas]
    except InvalidInput:
        return None
    return EventColumns(ids, parents, roles, contents, namespaces, metas)


def batch_refs(items: list[Any]) -> tuple[str, list[str], list[str]] | None:
    """What a batch of plain dicts names, before any check: its one namespace,
    its ids and its single parents, so that lookups can go ahead of the checks
    (only strings the store can hold are kept: an invalid id is looked up in
    vain, then refused by the checks); None for a batch of anything else, or of
    several namespaces or an invalid one."""
    if set(map(type, items)) != {dict}:
        return None
    try:
        namespaces = set(_column(items, "namespace", "default"))
        ns = check_namespace(namespaces.pop()) if len(namespaces) == 1 else None
    except (TypeError, InvalidInput):  # unhashable; not an id
        return None
    if ns is None:
        return None
    return ns, _storable(_column(items, "id")), _storable(_column(items, "parent"))


def _storable(values: list[Any]) -> list[str]:
    """The strings among ``values`` that a text column can hold (no NUL, no
    lone surrogate); None and empty strings left out."""
    given = list(filter(None, values))
    if set(map(type, given)) <= {str} and _storable_text("".join(given)):
        return given
    return [v for v in given if type(v) is str and _storable_text(v)]


def _merge(event_id: str, parent: Any) -> str | tuple[str, ...] | None:
    """A parent value other than one id, checked: a list of one id is that id."""
    if parent is None or type(parent) is str:
        return parent  # (checked with the rest)
    checked = check_parents(event_id, parent)
    return checked[0] if len(checked) == 1 else checked or None


def events_from(items: list[Any], now: float) -> list[Event]:
    """`validate.event_from` for each item: a batch of the common shape is
    checked a column at a time (`event_columns`), any other item by item."""
    cols = event_columns(items)
    if cols is not None:
        return cols.events(now)
    return _one_by_one(items, now)


def _one_by_one(items: list[Any], now: float) -> list[Event]:
    """The commonest shape of item (a dict with a valid id, at most one parent,
    a known role, text content, the default namespace and no meta) is checked
    in this loop; anything else goes through `event_from`."""
    keys_ok = _EVENT_KEYS.issuperset
    roles, max_len, make, slow = _ROLES, MAX_ID_LEN, make_event, event_from
    short = _SHORT
    out: list[Event] = []
    append = out.append
    seen: dict[str, str] = {}  # a parent earlier in the batch: its own id string, kept once
    for item in items:
        if type(item) is not dict or not keys_ok(item):
            append(slow(item, now))
            continue
        get = item.get
        eid = get("id")
        parent = item["parents"] if "parents" in item else get("parent")
        role = get("role", "user")
        content = get("content", "")
        if (
            type(eid) is not str
            or not 0 < len(eid) <= max_len
            or not eid.isprintable()
            or eid.isspace()
            or type(role) is not str
            or role not in roles
            or type(content) is not str
            or len(content) > short
            or (not content.isascii() and _SURROGATE(content))
            or "\x00" in content
            or get("namespace", "default") != "default"
            or get("meta") is not None
        ):
            append(slow(item, now))
            continue
        if parent is None:
            parents: tuple[str, ...] = ()
        elif (
            type(parent) is str
            and 0 < len(parent) <= max_len
            and parent.isprintable()
            and not parent.isspace()
        ):
            parents = (seen.get(parent, parent),)
        else:
            append(slow(item, now))
            continue
        seen[eid] = eid
        append(make(eid, parents, role, content, "default", None, now))
    return out
