"""An Agents SDK item as a branchmem event: the role and the searchable text
it is stored with (the item itself rides whole in the event's meta)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

ITEM = "agents_item"
"""The event meta key that holds the item as the SDK gave it."""
ROOT = "agents_session"
"""The event meta key of a session's root (it names the session id)."""

_ROLES = {"user": "user", "assistant": "assistant", "system": "system", "developer": "system"}


def role_of(item: Mapping[str, Any]) -> str:
    """The event role of an item: its own role where it has one, ``tool`` for
    a tool's output, ``assistant`` for what the model produced (a tool call,
    reasoning)."""
    role = _ROLES.get(str(item.get("role", "")))
    if role is not None:
        return role
    kind = str(item.get("type", ""))
    return "tool" if kind.endswith("_output") else "assistant"


def text_of(item: Mapping[str, Any]) -> str:
    """The text of an item, for search and for `Store.context`'s messages: a
    message's content (its text parts joined), a tool call's name and
    arguments, a tool's output."""
    content = item.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text") or p.get("refusal") for p in content if isinstance(p, Mapping)]
        return "\n".join(str(p) for p in parts if p)
    if "output" in item:
        out = item["output"]
        return out if isinstance(out, str) else ""
    if "arguments" in item:
        return f"{item.get('name', '')}({item['arguments']})"
    return ""
