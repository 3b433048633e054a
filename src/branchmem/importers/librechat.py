"""LibreChat: ``{conversationId, title, messages: [{messageId, parentMessageId,
text, isCreatedByUser}]}``, flat, or nested through ``children`` when
``recursive`` is true. LibreChat records no current leaf: the most recently
created leaf is used, and the report says so.
"""

from __future__ import annotations

from typing import Any

from .model import Conversation
from .tree import Broken, Node, as_text, build, compact, conversation_id, join_parts, text_id

NAME = "librechat"
ROOT = "00000000-0000-0000-0000-000000000000"


def looks_like(item: Any) -> bool:
    return (
        isinstance(item, dict)
        and isinstance(item.get("messages"), list)
        and (
            "conversationId" in item
            or any(isinstance(m, dict) and "messageId" in m for m in item["messages"][:1])
        )
    )


def convert(item: Any, position: int) -> Conversation:
    if not isinstance(item, dict) or not isinstance(item.get("messages"), list):
        raise Broken("it has no 'messages' list")
    notes: list[str] = []
    conv_id = conversation_id(item.get("conversationId"), NAME, position, "conversationId", notes)
    flat: list[tuple[dict[str, Any], str | None]] = []
    stack: list[tuple[Any, str | None]] = [(m, None) for m in reversed(item["messages"])]
    while stack:  # nested exports: a message's children follow it
        m, outer = stack.pop()
        if not isinstance(m, dict):
            raise Broken("a message is not a JSON object")
        flat.append((m, outer))
        kids = m.get("children")
        if isinstance(kids, list):
            mid = m.get("messageId")
            stack.extend((k, mid) for k in reversed(kids))
    nodes = []
    times: dict[str, tuple[str, int]] = {}
    for i, (m, outer) in enumerate(flat):
        mid = text_id(m.get("messageId"), f"messageId of message {i}")
        p = m.get("parentMessageId", outer)
        parent = None if p in (None, ROOT) else text_id(p, f"parentMessageId of {mid!r}")
        times[mid] = (str(m.get("createdAt") or ""), i)
        nodes.append(Node(mid, parent, _role(m), _text(m), _meta(m)))
    has_child = {n.parent for n in nodes}
    leaves = [n.id for n in nodes if n.id not in has_child]
    current = max(leaves, key=times.__getitem__) if leaves else None
    if current is not None:
        undated = sum(1 for leaf in leaves if not times[leaf][0])
        if undated * 2 > len(leaves):
            # Without createdAt the "most recent" is only the last in the file.
            notes.append(
                f"LibreChat records no current message, and {undated} of {len(leaves)} "
                f"leaves have no createdAt: the leaf {current!r} was used, the last in "
                "file order (not necessarily the one shown last)"
            )
        else:
            notes.append(
                f"LibreChat records no current message; the most recently created leaf "
                f"{current!r} was used"
            )
    return build(conv_id, item.get("title"), NAME, nodes, current, notes=notes)


def _role(m: dict[str, Any]) -> str:
    if m.get("isCreatedByUser"):
        return "user"
    return "system" if str(m.get("sender", "")).lower() == "system" else "assistant"


def _text(m: dict[str, Any]) -> str:
    return join_parts(m.get("content"), _part) or as_text(m.get("text"))


def _part(c: dict[str, Any]) -> str:
    kind = c.get("type")
    value = c.get(kind) if isinstance(kind, str) else None
    if kind == "text":
        return as_text(value.get("value") if isinstance(value, dict) else value)
    if kind == "think":
        return as_text(value)
    if kind == "tool_call" and isinstance(value, dict):
        return f"[tool_call {value.get('name', '')}]"
    return f"[{kind or 'content'}]"


def _meta(m: dict[str, Any]) -> dict[str, Any] | None:
    files = m.get("files")
    return compact(
        {
            "source": NAME,
            "created_at": m.get("createdAt"),
            "model": m.get("model"),
            "sender": m.get("sender"),
            "endpoint": m.get("endpoint"),
            "content": m.get("content") if isinstance(m.get("content"), list) else None,
            "attachments": [
                f.get("filename") or f.get("name") for f in files if isinstance(f, dict)
            ]
            if isinstance(files, list)
            else None,
        }
    )
