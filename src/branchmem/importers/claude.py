"""Claude: the web JSON of one conversation (``chat_messages[].parent_message_uuid``,
``current_leaf_message_uuid``), or the bulk export (an array of conversations
whose messages may carry no parent link: then they form a chain in file order).
"""

from __future__ import annotations

from typing import Any

from .model import Conversation
from .tree import (
    Broken,
    Node,
    as_text,
    build,
    compact,
    conversation_id,
    join_parts,
    role_of,
    text_id,
)

NAME = "claude"
ROOT = "00000000-0000-4000-8000-000000000000"


def looks_like(item: Any) -> bool:
    return isinstance(item, dict) and isinstance(item.get("chat_messages"), list)


def convert(item: Any, position: int) -> Conversation:
    if not isinstance(item, dict):
        raise Broken(f"a conversation is a JSON object, got {type(item).__name__}")
    msgs = item.get("chat_messages")
    if not isinstance(msgs, list):
        raise Broken("it has no 'chat_messages' list")
    notes: list[str] = []
    conv_id = conversation_id(item.get("uuid"), NAME, position, "uuid", notes)
    linked = any(isinstance(m, dict) and "parent_message_uuid" in m for m in msgs)
    if not linked and msgs:
        notes.append("the export has no parent links: messages are imported as one chain")
    nodes = []
    prev: str | None = None
    for i, m in enumerate(msgs):
        if not isinstance(m, dict):
            raise Broken(f"message {i} is not a JSON object")
        mid = text_id(m.get("uuid"), f"uuid of message {i}")
        if linked:
            p = m.get("parent_message_uuid")
            parent = None if p in (None, ROOT) else text_id(p, f"parent of {mid!r}")
        else:
            parent = prev
        nodes.append(Node(mid, parent, role_of(m.get("sender")), _text(m), _meta(m)))
        prev = mid
    current = item.get("current_leaf_message_uuid")
    return build(
        conv_id,
        item.get("name"),
        NAME,
        nodes,
        text_id(current, "current_leaf_message_uuid") if current is not None else prev,
        notes=notes,
    )


def _text(m: dict[str, Any]) -> str:
    return join_parts(m.get("content"), part_text) or as_text(m.get("text"))


def part_text(c: dict[str, Any]) -> str:
    """The text of one content block (text, thinking, tool use, tool result)."""
    kind = c.get("type")
    if kind in ("text", "thinking"):
        return as_text(c.get(kind))
    if kind == "tool_use":
        return f"[tool_use {c.get('name', '')}] {as_text(c.get('input'))}".strip()
    if kind == "tool_result":
        return f"[tool_result] {_result(c.get('content'))}".strip()
    return f"[{kind or 'content'}]"


def _result(value: Any) -> str:
    if isinstance(value, list):
        return "\n".join(
            as_text(v.get("text")) if isinstance(v, dict) else as_text(v) for v in value
        )
    return as_text(value)


def _names(files: Any) -> list[Any] | None:
    if not isinstance(files, list):
        return None
    return [f.get("file_name") for f in files if isinstance(f, dict)]


def _meta(m: dict[str, Any]) -> dict[str, Any] | None:
    return compact(
        {
            "source": NAME,
            "created_at": m.get("created_at"),
            "sender": m.get("sender"),
            "attachments": _names(m.get("attachments")),
            "files": _names(m.get("files")),
            "content": content if _has_parts(content := m.get("content")) else None,
        }
    )


def _has_parts(content: Any) -> bool:
    """Content that ``text`` does not hold alone (tool use, thinking, images)."""
    return isinstance(content, list) and any(
        not isinstance(c, dict) or c.get("type") != "text" for c in content
    )
