"""Redaction of imported exports, every format: what an importer keeps in
``meta`` (non-text content kept whole, attachment names, author names) is
redacted with the content, embedded and through `RemoteStore` against a
redacting server; a re-import finds nothing changed."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from branchmem import Redactor, Store
from helpers.redact_held import Held, assert_absent, assert_present, held, stored_text

OpenStore = Callable[..., Store]


def chatgpt(h: Held) -> list[dict[str, Any]]:
    def node(nid: str, parent: str | None, role: str, content: dict[str, Any]) -> dict[str, Any]:
        meta = {"attachments": [{"name": f"scan {h.id_card}.png"}]}
        author = {"role": role, "name": h.email}
        msg = {"author": author, "content": content, "metadata": meta, "create_time": 1.0}
        return {"parent": parent, "message": msg}

    parts = [{"content_type": "image_asset_pointer", "asset_pointer": f"file-{h.ipv4}"}, h.text]
    context = {"content_type": "user_editable_context", "user_profile": h.text,
               "user_instructions": f"mail {h.email}"}  # fmt: skip
    mapping = {
        "a": node("a", None, "user", {"content_type": "multimodal_text", "parts": parts}),
        "b": node("b", "a", "assistant", {"content_type": "code", "text": f"call({h.phone!r})"}),
        "c": node("c", "b", "user", context),
    }
    return [{"conversation_id": "c1", "title": h.email, "current_node": "c", "mapping": mapping}]


def claude(h: Held) -> dict[str, Any]:
    def msg(uuid: str, parent: str, sender: str) -> dict[str, Any]:
        content = [
            {"type": "tool_use", "name": "lookup", "input": {"phone": h.phone, h.email: h.card}},
            {"type": "text", "text": h.text},
        ]
        files = [{"file_name": f"{h.id_card}.txt", "extracted_content": h.text}]
        return {"uuid": uuid, "text": h.text, "content": content, "sender": sender,
                "attachments": files, "files": files, "parent_message_uuid": parent}  # fmt: skip

    root = "00000000-0000-4000-8000-000000000000"
    return {"uuid": "c1", "name": h.email, "current_leaf_message_uuid": "m2",
            "chat_messages": [msg("m1", root, "human"), msg("m2", "m1", "assistant")]}  # fmt: skip


def openwebui(h: Held) -> dict[str, Any]:
    def msg(mid: str, parent: str | None, kids: list[str], role: str) -> dict[str, Any]:
        return {"id": mid, "parentId": parent, "childrenIds": kids, "role": role,
                "content": h.text, "model": h.email, "files": [{"name": f"{h.phone}.pdf"}],
                "timestamp": 1}  # fmt: skip

    history = {"messages": {"s1": msg("s1", None, ["s2"], "user"),
                            "s2": msg("s2", "s1", [], "assistant")}, "currentId": "s2"}  # fmt: skip
    return {"id": "c1", "title": h.email, "chat": {"history": history}}


def librechat(h: Held) -> dict[str, Any]:
    def msg(mid: str, parent: str, user: bool) -> dict[str, Any]:
        files = [{"filename": f"{h.card}.pdf"}]
        return {"messageId": mid, "parentMessageId": parent, "isCreatedByUser": user,
                "sender": h.email, "text": h.text, "content": [{"type": "text", "text": h.text}],
                "files": files, "createdAt": "2024-05-01T10:00:00Z"}  # fmt: skip

    root = "00000000-0000-0000-0000-000000000000"
    return {"conversationId": "c1", "title": h.email,
            "messages": [msg("l1", root, True), msg("l2", "l1", False)]}  # fmt: skip


def sillytavern(h: Held) -> list[dict[str, Any]]:
    header = {"user_name": h.email, "character_name": "Seraphina", "chat_metadata": {}}
    first = {"name": h.email, "is_user": True, "send_date": "May 1, 2024", "mes": h.text}
    second = {"name": "Seraphina", "is_user": False, "mes": h.phone,
              "swipes": [h.phone, h.text], "swipe_id": 1}  # fmt: skip
    return [header, first, second]


FORMATS: dict[str, Callable[[Held], Any]] = {
    "chatgpt": chatgpt,
    "claude": claude,
    "openwebui": openwebui,
    "librechat": librechat,
    "sillytavern": sillytavern,
}


def write_export(tmp_path: Path, fmt: str, h: Held) -> Path:
    data = FORMATS[fmt](h)
    if fmt == "sillytavern":
        folder = tmp_path / "chats"
        folder.mkdir()
        path = folder / "Seraphina - 2024-05-01@10h00m00s.jsonl"
        path.write_text("".join(json.dumps(x) + "\n" for x in data), encoding="utf-8")
        return folder
    path = tmp_path / f"{fmt}.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_an_imported_export_leaves_no_held_identifier_in_the_store(
    open_store: OpenStore, tmp_path: Path, fmt: str
) -> None:
    h = held(10)
    path = write_export(tmp_path, fmt, h)
    plain = open_store()
    report = plain.import_export(path, format=fmt)
    assert report.conversations and not report.skipped, report
    assert_present(stored_text(plain), h)  # the export does carry them into the store
    store = open_store(redactor=Redactor())
    first = store.import_export(path, format=fmt)
    assert [c.added for c in first.conversations] == [c.added for c in report.conversations]
    assert_absent(stored_text(store), h)
    again = store.import_export(path, format=fmt)
    assert [(c.added, c.conflicts) for c in again.conversations] == [(0, ())]


def test_remote_import_against_a_redacting_server_stores_no_held_identifier(
    open_store: OpenStore, tmp_path: Path
) -> None:
    pytest.importorskip("fastapi")
    from branchmem.client import RemoteStore
    from helpers.server_fixtures import make_served

    h = held(11)
    served = make_served(store=open_store(redactor=Redactor()))
    key = served.key["owner"]
    remote = RemoteStore("http://testserver", api_key=key, http_client=served.client)
    report = remote.import_export(write_export(tmp_path, "chatgpt", h), format="chatgpt")
    assert [c.added for c in report.conversations] == [3]
    assert "multimodal_text" in stored_text(served.store)  # the meta is stored, redacted
    assert_absent(stored_text(served.store), h)
    served.keys.close()
