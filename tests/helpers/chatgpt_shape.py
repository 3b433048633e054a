"""Build conversations in the shape of ChatGPT's ``conversations.json``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def message(mid: str, role: str, text: str) -> dict[str, Any]:
    return {
        "id": mid,
        "author": {"role": role, "name": None, "metadata": {}},
        "create_time": None,
        "content": {"content_type": "text", "parts": [text]},
        "status": "finished_successfully",
        "weight": 1.0,
        "metadata": {},
        "recipient": "all",
    }


def conversation(
    conv_id: str,
    parents: dict[str, str | None],
    current: str,
    *,
    texts: dict[str, str] | None = None,
    structural: Sequence[str] = (),
    order: Sequence[str] | None = None,
    roles: dict[str, str] | None = None,
) -> dict[str, Any]:
    """A ChatGPT conversation whose nodes have ``parents``; nodes in ``structural``
    carry ``message: null``; mapping keys in ``order`` (default: as given); roles
    from ``roles`` (default: user and assistant by turns, in ``parents``' order)."""
    texts = texts or {}
    children: dict[str, list[str]] = {n: [] for n in parents}
    for n, p in parents.items():
        if p is not None:
            children[p].append(n)
    roles = roles or {n: "user" if i % 2 == 0 else "assistant" for i, n in enumerate(parents)}
    mapping = {}
    for n in order if order is not None else list(parents):
        role = roles[n]
        mapping[n] = {
            "id": n,
            "message": None if n in structural else message(n, role, texts.get(n, f"text {n}")),
            "parent": parents[n],
            "children": children[n],
        }
    return {
        "title": f"title {conv_id}",
        "create_time": 1714550000.0,
        "mapping": mapping,
        "current_node": current,
        "conversation_id": conv_id,
        "id": conv_id,
    }
