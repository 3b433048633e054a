"""Open WebUI: one chat or an array of ``{id, title, chat: {history: {messages:
{id: {parentId, childrenIds, role, content}}, currentId}}}``. Message keys
become event ids; ``history.currentId`` is the current leaf.
"""

from __future__ import annotations

from typing import Any

from .model import Conversation
from .tree import Broken, Node, as_text, build, compact, conversation_id, obj, role_of, text_id

NAME = "openwebui"


def _chat(item: Any) -> dict[str, Any] | None:
    if not isinstance(item, dict):
        return None
    chat = obj(item, "chat") or item
    return chat if isinstance(chat.get("history"), dict) else None


def looks_like(item: Any) -> bool:
    chat = _chat(item)
    return chat is not None and isinstance(chat["history"].get("messages"), dict)


def convert(item: Any, position: int) -> Conversation:
    chat = _chat(item)
    if chat is None or not isinstance(chat["history"].get("messages"), dict):
        raise Broken("it has no 'chat.history.messages'")
    assert isinstance(item, dict)
    history = chat["history"]
    notes: list[str] = []
    conv_id = conversation_id(item.get("id") or chat.get("id"), NAME, position, "id", notes)
    nodes = []
    children: dict[str, list[Any]] = {}
    for key, m in history["messages"].items():
        mid = text_id(key, "message id")
        if not isinstance(m, dict):
            raise Broken(f"message {mid!r} is not a JSON object")
        p = m.get("parentId")
        if isinstance(m.get("childrenIds"), list):
            children[mid] = m["childrenIds"]
        nodes.append(
            Node(
                mid,
                None if p is None else text_id(p, f"parentId of {mid!r}"),
                role_of(m.get("role")),
                as_text(m.get("content")),
                compact(
                    {
                        "source": NAME,
                        "created_at": m.get("timestamp"),
                        "model": m.get("model"),
                        "attachments": [f.get("name") for f in m["files"] if isinstance(f, dict)]
                        if isinstance(m.get("files"), list)
                        else None,
                    }
                ),
            )
        )
    current = history.get("currentId")
    return build(
        conv_id,
        item.get("title") or chat.get("title"),
        NAME,
        nodes,
        None if current is None else text_id(current, "history.currentId"),
        children=children,
        notes=notes,
    )
