"""ChatGPT ``conversations.json``: ``[{mapping: {id: {message, parent, children}},
current_node, conversation_id, title}]``.

Node ids become event ids. A node with ``message: null`` (the root, or
``client-created-root``) is structural: skipped, its children hang from the
nearest message above; so is the hidden empty ``system`` message most
conversations start with. The first user message and its edits then become
roots: the edits name the first in ``meta["version_of"]``. Content that is
not plain text (images, code, execution output, browsing, ``thoughts``)
becomes its text or a short placeholder. The hidden
``user_editable_context`` node (the user's custom instructions) becomes a
``system`` event labelled as the profile it is (``meta["kind"] =
"profile"``); a reply that did not finish keeps its ``status`` and
``finish`` (``interrupted``) in ``meta``.
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
    obj,
    role_of,
    text_id,
)

NAME = "chatgpt"


def looks_like(item: Any) -> bool:
    return isinstance(item, dict) and isinstance(item.get("mapping"), dict)


def convert(item: Any, position: int) -> Conversation:
    if not isinstance(item, dict):
        raise Broken(f"a conversation is a JSON object, got {type(item).__name__}")
    mapping = item.get("mapping")
    if not isinstance(mapping, dict) or not mapping:
        raise Broken("it has no 'mapping' of messages")
    notes: list[str] = []
    raw_id = item.get("conversation_id") or item.get("id")
    conv_id = conversation_id(raw_id, NAME, position, "conversation_id", notes)
    nodes = []
    children: dict[str, list[Any]] = {}
    for key, node in mapping.items():
        nid = text_id(key, "node id")
        if not isinstance(node, dict):
            raise Broken(f"node {nid!r} is not a JSON object")
        parent = node.get("parent")
        kids = node.get("children")
        if isinstance(kids, list):
            children[nid] = kids
        nodes.append(_node(nid, None if parent is None else text_id(parent, "parent id"), node))
    current = item.get("current_node")
    return build(
        conv_id,
        item.get("title"),
        NAME,
        nodes,
        None if current is None else text_id(current, "current_node"),
        children=children,
        notes=notes,
    )


def _node(nid: str, parent: str | None, node: dict[str, Any]) -> Node:
    msg = node.get("message")
    if not isinstance(msg, dict):
        return Node(nid, parent, None)
    author, metadata, content = obj(msg, "author"), obj(msg, "metadata"), obj(msg, "content")
    attachments = metadata.get("attachments")
    meta = compact(
        {
            "source": NAME,
            "created_at": msg.get("create_time"),
            "model": metadata.get("model_slug"),
            "attachments": [a.get("name") for a in attachments if isinstance(a, dict)]
            if isinstance(attachments, list)
            else None,
            "author_role": author.get("role"),
            "author_name": author.get("name"),
            "content_type": content.get("content_type"),
            # what the text stands for, kept whole so the message can be written back
            "content": content if content.get("content_type") != "text" else None,
            "recipient": msg.get("recipient") if msg.get("recipient") != "all" else None,
            "hidden": True if metadata.get("is_visually_hidden_from_conversation") else None,
            # a reply cut off (stopped, or the connection lost) says so
            "status": msg.get("status") if msg.get("status") != "finished_successfully" else None,
            "finish": _finish(metadata),
        }
    )
    if (
        author.get("role") == "system"
        and metadata.get("is_visually_hidden_from_conversation")
        and not text_of(content).strip()
    ):
        return Node(nid, parent, None)  # the hidden empty system message: no turn
    if content.get("content_type") == "user_editable_context":
        # The custom instructions: a note about the user for the model, not a turn.
        meta = {**(meta or {}), "kind": "profile"}
        return Node(nid, parent, "system", text_of(content), meta)
    return Node(nid, parent, role_of(author.get("role")), text_of(content), meta)


def _finish(metadata: dict[str, Any]) -> str | None:
    """How the reply ended (``interrupted``, ``max_tokens``), unless normally."""
    details = metadata.get("finish_details")
    kind = details.get("type") if isinstance(details, dict) else None
    return None if kind in (None, "stop") else str(kind)


def text_of(content: dict[str, Any]) -> str:
    """The text of a ChatGPT message's ``content``, or a short placeholder."""
    ct = content.get("content_type")
    parts = content.get("parts")
    if isinstance(parts, list):
        return join_parts(parts, _part)
    if ct == "thoughts" and isinstance(content.get("thoughts"), list):
        return "\n".join(
            "\n".join(as_text(t.get(k)) for k in ("summary", "content") if t.get(k))
            for t in content["thoughts"]
            if isinstance(t, dict)
        )
    if ct == "user_editable_context":
        labels = {
            "user_profile": "The user's profile (custom instructions)",
            "user_instructions": "How the user wants answers (custom instructions)",
        }
        return "\n".join(f"{labels[k]}: {as_text(content[k])}" for k in labels if content.get(k))
    if ct == "tether_quote":
        return "\n".join(as_text(content[k]) for k in ("title", "text") if content.get(k))
    for key in ("text", "result", "content", "model_set_context", "summary"):
        if isinstance(content.get(key), str):
            return str(content[key])
    return f"[{ct or 'content'}]"


def _part(part: dict[str, Any]) -> str:
    if isinstance(part.get("text"), str):
        return str(part["text"])
    kind = str(part.get("content_type") or "attachment")
    return "[image]" if "image" in kind else f"[{kind}]"
