"""From an export's messages to a `Conversation`: one builder for every format.

Each format module turns its messages into `Node`s (id, parent, role, text,
meta); `build` checks the tree (duplicate ids, dangling parents, cycles),
drops structural nodes while keeping connectivity, and orders events parents
first. A problem raises `Broken`, whose reason the import report carries.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import InvalidInput
from ..model import Event
from ..tree_types import VERSION_OF
from ..validate import check_id
from .model import Conversation


class Broken(Exception):
    """This conversation cannot be imported; the message says why."""


@dataclass
class Node:
    """One message of an export. ``role=None`` marks a structural node (no message)."""

    id: str
    parent: str | None
    role: str | None
    content: str = ""
    meta: dict[str, Any] | None = None


ROLE_MAP = {
    "user": "user",
    "human": "user",
    "assistant": "assistant",
    "system": "system",
    "tool": "tool",
    "function": "tool",
}


def role_of(raw: Any) -> str:
    """An export's author role as one of ``user``, ``assistant``, ``system``, ``tool``."""
    return ROLE_MAP.get(str(raw).lower(), "assistant") if raw is not None else "assistant"


def text_id(value: Any, what: str) -> str:
    """An id from an export (a string, or a number written as one); `Broken` otherwise."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        value = str(value)
    try:
        return check_id(value, what)
    except InvalidInput as exc:
        raise Broken(str(exc)) from None


def conversation_id(raw: Any, fmt: str, position: int, what: str, notes: list[str]) -> str:
    """The export's conversation id, or ``<format>-<position>`` (noted) when it has none."""
    if raw is None or raw == "":
        raw = f"{fmt}-{position}"
        notes.append(f"the conversation has no {what}; {raw!r} (its position in the file) is used")
    return text_id(raw, what)


def build(
    conv_id: str,
    title: Any,
    fmt: str,
    nodes: Iterable[Node],
    current: str | None,
    *,
    children: Mapping[str, Iterable[Any]] | None = None,
    notes: Iterable[str] = (),
    main: str | None = None,
) -> Conversation:
    """Check the tree and build the `Conversation` (see the module docstring).

    ``children`` (parent id -> child ids), where a format lists them, fills in a
    parent that a node itself leaves out. ``current=None`` means the export
    names no current leaf: the last leaf in message order is used.
    """
    notes = list(notes)
    by_id: dict[str, Node] = {}
    for n in nodes:
        if n.id in by_id:
            raise Broken(f"message id {n.id!r} appears twice")
        by_id[n.id] = n
    if children:
        for p, kids in children.items():
            for k in kids:
                node = by_id.get(k) if isinstance(k, str) else None
                if node is not None and node.parent is None and p in by_id and p != k:
                    node.parent = p
    for n in by_id.values():
        if n.parent is not None and n.parent not in by_id:
            raise Broken(
                f"message {n.id!r} names parent {n.parent!r}, which is not in the conversation"
            )
    _check_acyclic(by_id)
    kept_parent = _kept_parents(by_id)
    order = _parents_first(by_id, kept_parent)
    if not order:
        raise Broken("the conversation holds no message")
    leaf = _current(by_id, kept_parent, current, order, notes)
    nul = sum("\x00" in by_id[i].content for i in order)
    if nul:
        notes.append(
            f"{nul} message(s) held NUL characters ('\\x00'), which a store cannot hold; "
            "they were dropped from the text"
        )
    # Several roots in one conversation are versions of its first message (an
    # edit of it): each later root names the first in meta["version_of"].
    first = order[0]
    events = tuple(
        Event(
            n.id,
            parents=() if (up := kept_parent[n.id]) is None else (up,),
            role=n.role or "assistant",
            content=n.content.replace("\x00", "") if nul else n.content,
            meta={**(n.meta or {}), VERSION_OF: first} if up is None and n.id != first else n.meta,
        )
        for n in (by_id[i] for i in order)
    )
    title_s = title if isinstance(title, str) else None
    return Conversation(conv_id, title_s, fmt, events, leaf, tuple(notes), main)


def _check_acyclic(by_id: dict[str, Node]) -> None:
    done: set[str] = set()
    for start in by_id:
        trail: list[str] = []
        on_trail: set[str] = set()
        node: str | None = start
        while node is not None and node not in done:
            if node in on_trail:
                raise Broken(f"the parent links starting at {node!r} form a cycle")
            trail.append(node)
            on_trail.add(node)
            node = by_id[node].parent
        done.update(trail)


def _kept_parents(by_id: dict[str, Node]) -> dict[str, str | None]:
    """For every node, its nearest ancestor that is a message (None for a root)."""
    out: dict[str, str | None] = {}
    for start in by_id:
        trail = []
        p = by_id[start].parent
        while p is not None and by_id[p].role is None and p not in out:
            trail.append(p)
            p = by_id[p].parent
        found = out[p] if p is not None and by_id[p].role is None else p
        for t in trail:
            out[t] = found
        out[start] = found
    return out


def _parents_first(by_id: dict[str, Node], kept_parent: dict[str, str | None]) -> list[str]:
    kids: dict[str | None, list[str]] = {}
    for n in by_id.values():
        if n.role is not None:
            kids.setdefault(kept_parent[n.id], []).append(n.id)
    order: list[str] = []
    stack = list(reversed(kids.get(None, [])))
    while stack:
        x = stack.pop()
        order.append(x)
        stack.extend(reversed(kids.get(x, [])))
    return order


def _current(
    by_id: dict[str, Node],
    kept_parent: dict[str, str | None],
    current: str | None,
    order: list[str],
    notes: list[str],
) -> str:
    if current is not None and current in by_id:
        if by_id[current].role is not None:
            return current
        up = kept_parent[current]
        if up is not None:
            return up
    has_child = {kept_parent[i] for i in order}  # messages only: a structural child is dropped
    leaves = [i for i in order if i not in has_child]
    if current is not None:
        notes.append(
            f"the export's current message {current!r} is not a message of the "
            f"conversation; the last leaf {leaves[-1]!r} was used"
        )
    return leaves[-1]


def join_parts(content: Any, part: Callable[[dict[str, Any]], str]) -> str:
    """The text of a list of content parts, one a line: each object through ``part``,
    anything else as text; ``""`` when ``content`` is not a list."""
    if not isinstance(content, list):
        return ""
    texts = (part(c) if isinstance(c, dict) else as_text(c) for c in content)
    return "\n".join(t for t in texts if t)


def obj(data: dict[str, Any], key: str) -> dict[str, Any]:
    """``data[key]`` if it is a JSON object, else an empty dict."""
    value = data.get(key)
    return value if isinstance(value, dict) else {}


def compact(meta: dict[str, Any]) -> dict[str, Any] | None:
    """Meta without empty values (``None``, ``""``, ``[]``, ``{}``); None when empty."""
    out = {k: v for k, v in meta.items() if v not in (None, "", [], {})}
    return out or None


def as_text(value: Any) -> str:
    """A value that should be text: itself if a string, else compact JSON ('' for None)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    import json

    return json.dumps(value, ensure_ascii=False, sort_keys=True)
