"""Naive readings of the import fixtures: each export's own current path, walked
straight from the raw JSON, for the importers' results to be checked against."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

DATA = Path(__file__).parents[1] / "data" / "importers"


def load(name: str) -> Any:
    return json.loads((DATA / name).read_text(encoding="utf-8"))


def chatgpt_kept(node: dict[str, Any]) -> bool:
    """A node with a message, other than a hidden system message with no text."""
    msg = node["message"]
    if msg is None:
        return False
    hidden = (msg.get("metadata") or {}).get("is_visually_hidden_from_conversation")
    parts = (msg.get("content") or {}).get("parts") or []
    return not (msg["author"]["role"] == "system" and hidden and parts in ([], [""]))


def chatgpt_path(conv: dict[str, Any]) -> list[str]:
    """From ``current_node`` up the ``parent`` links, leaving out nodes without a message."""
    out, node = [], conv["current_node"]
    while node is not None:
        if chatgpt_kept(conv["mapping"][node]):
            out.append(node)
        node = conv["mapping"][node]["parent"]
    return out[::-1]


def claude_path(conv: dict[str, Any]) -> list[str]:
    parent = {m["uuid"]: m["parent_message_uuid"] for m in conv["chat_messages"]}
    out, node = [], conv["current_leaf_message_uuid"]
    while node != "00000000-0000-4000-8000-000000000000":
        out.append(node)
        node = parent[node]
    return out[::-1]


def openwebui_path(chat: dict[str, Any]) -> list[str]:
    messages = chat["chat"]["history"]["messages"]
    out, node = [], chat["chat"]["history"]["currentId"]
    while node is not None:
        out.append(node)
        node = messages[node]["parentId"]
    return out[::-1]


def librechat_messages(export: dict[str, Any]) -> list[dict[str, Any]]:
    out, todo = [], list(export["messages"])
    while todo:
        m = todo.pop()
        out.append(m)
        todo += m.get("children", [])
    return out


def librechat_path(export: dict[str, Any]) -> list[str]:
    """The most recently created leaf, up the ``parentMessageId`` links."""
    messages = librechat_messages(export)
    parent = {m["messageId"]: m["parentMessageId"] for m in messages}
    leaves = [m for m in messages if m["messageId"] not in parent.values()]
    node = max(leaves, key=lambda m: m["createdAt"])["messageId"]
    out = []
    while node != "00000000-0000-0000-0000-000000000000":
        out.append(node)
        node = parent[node]
    return out[::-1]


def sillytavern_lines(path: Path) -> list[dict[str, Any]]:
    lines = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]
    return [x for x in lines if "mes" in x]


def sillytavern_current_texts(path: Path) -> list[str]:
    """Each message's chosen swipe (its ``mes``), in order."""
    return [m["mes"] for m in sillytavern_lines(path)]
