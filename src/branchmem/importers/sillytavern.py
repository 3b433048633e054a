"""SillyTavern chat files (``.jsonl``): a header line, then one message a line.

Messages carry no ids, so ids are derived from the chat (its file name) and
position: ``st:<chat>:<n>`` for message ``n`` (its first swipe), and
``st:<chat>:<n>.s<k>`` for swipe ``k``. Swipes become sibling events; the
chosen one (``swipe_id``) is on the current path. A branch file (its header
names ``chat_metadata.main_chat``) shares its main chat's events for the
messages it copied, when the main chat is imported in the same run or is
stored already.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..model import Event
from .model import Conversation
from .tree import Broken, Node, as_text, build, compact, text_id

NAME = "sillytavern"


@dataclass(frozen=True)
class Chat:
    """One parsed chat file."""

    name: str
    header: dict[str, Any]
    messages: list[dict[str, Any]]

    @property
    def main(self) -> str | None:
        meta = self.header.get("chat_metadata")
        main = meta.get("main_chat") if isinstance(meta, dict) else None
        return main if isinstance(main, str) and main else None


def is_message(line: Any) -> bool:
    return isinstance(line, dict) and "mes" in line and ("is_user" in line or "name" in line)


def is_header(line: Any) -> bool:
    return isinstance(line, dict) and (
        "chat_metadata" in line or ("user_name" in line and "character_name" in line)
    )


def looks_like(first_line: Any) -> bool:
    return is_header(first_line) or is_message(first_line)


def parse(path: Path) -> Chat:
    """Read one chat file; `Broken` names a line that is not JSON."""
    header: dict[str, Any] = {}
    messages: list[dict[str, Any]] = []
    with open(path, encoding="utf-8-sig") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise Broken(f"line {n} is not JSON ({exc.msg})") from None
            except RecursionError:
                raise Broken(f"line {n} nests objects and lists too deeply to read") from None
            if n == 1 and is_header(obj):
                header = obj
            elif is_message(obj):
                messages.append(obj)
            else:
                raise Broken(f"line {n} is neither the header nor a message")
    return Chat(path.stem, header, messages)


def _swipes(m: dict[str, Any]) -> list[str]:
    sw = m.get("swipes")
    if isinstance(sw, list) and sw:
        return [as_text(s) for s in sw]
    return [as_text(m.get("mes"))]


def _same(a: dict[str, Any], b: dict[str, Any]) -> bool:
    keys = ("name", "is_user", "is_system", "send_date")
    return all(a.get(k) == b.get(k) for k in keys) and _swipes(a) == _swipes(b)


def event_id(chat: str, n: int, swipe: int = 0) -> str:
    return f"st:{chat}:{n}" if swipe == 0 else f"st:{chat}:{n}.s{swipe}"


Known = Callable[[Event], bool]
"""Is this event stored already, unchanged? (how a branch file finds its main chat's
events when the main chat was imported before, in another run)"""


def convert(
    chat: Chat, done: dict[str, tuple[Chat, list[str]]], known: Known | None = None
) -> tuple[Conversation, list[str]]:
    """The chat as a conversation, and the chat key used for each message's ids.

    ``done`` holds the chats already converted in this run (by name, with their
    keys), so a branch file can reuse its main chat's ids for the copied prefix;
    without the main chat in ``done``, ``known`` finds them in a store.
    """
    conv_id = text_id(chat.name, "chat name")
    keys = [conv_id] * len(chat.messages)
    notes = []
    main = chat.main
    if main is not None:
        shared = 0
        if main in done:
            main_chat, main_keys = done[main]
            for a, b in zip(chat.messages, main_chat.messages, strict=False):
                if not _same(a, b):
                    break
                keys[shared] = main_keys[shared]
                shared += 1
            notes.append(f"a branch of {main!r}: shares its first {shared} messages")
        else:
            main_id = text_id(main, "main_chat")
            parent: str | None = None
            for n, m in enumerate(chat.messages):
                first = _nodes(m, n, main_id, parent)[0]
                role = first.role or "assistant"
                ev = Event(first.id, _up(parent), role, first.content, meta=first.meta)
                if known is None or not known(ev):
                    break
                keys[n] = main_id
                parent = event_id(main_id, n, _chosen(m))
                shared += 1
            if shared:
                notes.append(
                    f"a branch of {main!r}: shares its first {shared} messages, imported before"
                )
            else:
                notes.append(
                    f"a branch of {main!r}, which is neither in this import nor stored; "
                    "imported on its own (import the main chat first, or both in one run)"
                )
    nodes: list[Node] = []
    tip: str | None = None
    for n, m in enumerate(chat.messages):
        nodes += _nodes(m, n, keys[n], tip)
        tip = event_id(keys[n], n, _chosen(m))
    conv = build(
        conv_id,
        chat.header.get("character_name") or chat.name,
        NAME,
        nodes,
        tip,
        notes=notes,
        main=main,
    )
    return conv, keys


def _up(parent: str | None) -> tuple[str, ...]:
    return () if parent is None else (parent,)


def _chosen(m: dict[str, Any]) -> int:
    chosen = m.get("swipe_id", 0)
    ok = isinstance(chosen, int) and 0 <= chosen < len(_swipes(m))
    return chosen if ok else 0


def _nodes(m: dict[str, Any], n: int, key: str, parent: str | None) -> list[Node]:
    """Message ``n``'s events: one per swipe, all under ``parent``."""
    role = "user" if m.get("is_user") else "system" if m.get("is_system") else "assistant"
    swipes = _swipes(m)
    out = []
    for k, text in enumerate(swipes):
        meta = {
            "source": NAME,
            "name": m.get("name"),
            "created_at": _swipe_date(m, k) if "swipes" in m else m.get("send_date"),
            "swipe": k if len(swipes) > 1 else None,
            "hidden": True if m.get("is_system") else None,
        }
        out.append(Node(event_id(key, n, k), parent, role, text, compact(meta)))
    return out


def _swipe_date(m: dict[str, Any], k: int) -> Any:
    info = m.get("swipe_info")
    if isinstance(info, list) and k < len(info) and isinstance(info[k], dict):
        return info[k].get("send_date")
    return None
