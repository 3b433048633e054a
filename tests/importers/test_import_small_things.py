"""What a new user hit importing: cut files name the byte, line and column;
UTF-16 files are read; custom instructions are a labelled profile note; an
interrupted reply keeps its status; LibreChat's guessed leaf says how."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from branchmem import InvalidInput, Store
from helpers.chatgpt_shape import conversation, message


def _convs(n: int) -> list[dict[str, object]]:
    texts = {"a": "你好\n世界" * 5}
    return [conversation(f"c{i}", {"a": None, "b": "a"}, "b", texts=texts) for i in range(n)]


def test_a_cut_array_names_the_byte_line_and_column(tmp_path: Path) -> None:
    data = json.dumps(_convs(20), ensure_ascii=False, indent=1).encode()
    cut = tmp_path / "cut.json"
    cut.write_bytes(data[:3000])
    with Store() as s, pytest.raises(InvalidInput) as err:
        s.import_export(cut)
    msg = str(err.value)
    at = int(msg.split("at byte ")[1].split(" ")[0])
    line = int(msg.split("(line ")[1].split(",")[0])
    col = int(msg.split("column ")[1].split(")")[0])
    assert 2500 < at <= 3000, msg
    # The byte, line and column name the same place in the file.
    head = data[:at].decode()
    assert line == head.count("\n") + 1
    assert col == len(head) - head.rfind("\n")


def test_a_cut_object_names_the_byte_too(tmp_path: Path) -> None:
    data = ("\ufeff" + json.dumps(_convs(1)[0], ensure_ascii=False)).encode()
    cut = tmp_path / "one.json"
    cut.write_bytes(data[:200])
    with Store() as s, pytest.raises(InvalidInput, match=r"at byte \d+ \(line 1, column \d+\)"):
        s.import_export(cut)


@pytest.mark.parametrize("codec", ["utf-16", "utf-16-be", "utf-8-sig"])
def test_files_with_a_byte_order_mark_are_read(tmp_path: Path, codec: str) -> None:
    text = json.dumps(_convs(2), ensure_ascii=False)
    raw = text.encode(codec)
    if codec == "utf-16-be":
        raw = b"\xfe\xff" + raw
    path = tmp_path / "conversations.json"
    path.write_bytes(raw)
    with Store() as s:
        report = s.import_export(path)
        assert report.format == "chatgpt" and len(report.conversations) == 2
        assert s.get_event("a").content.startswith("你好")


def test_custom_instructions_and_an_interrupted_reply(tmp_path: Path) -> None:
    conv = conversation("c1", {"ctx": None, "u": "ctx", "r": "u"}, "r", roles={
        "ctx": "user", "u": "user", "r": "assistant",
    })  # fmt: skip
    ctx = message("ctx", "user", "")
    ctx["content"] = {
        "content_type": "user_editable_context",
        "user_profile": "我是数据分析师",
        "user_instructions": "回答简短",
    }
    ctx["metadata"] = {"is_visually_hidden_from_conversation": True}
    conv["mapping"]["ctx"]["message"] = ctx  # type: ignore[index]
    reply = conv["mapping"]["r"]["message"]  # type: ignore[index]
    reply["status"] = "in_progress"
    reply["metadata"] = {"finish_details": {"type": "interrupted"}}
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps([conv], ensure_ascii=False), encoding="utf-8")
    with Store() as s:
        s.import_export(path)
        r = s.get_event("r")
        assert r.meta is not None
        assert (r.meta["status"], r.meta["finish"]) == ("in_progress", "interrupted")
        assert "status" not in (s.get_event("u").meta or {})
        messages = s.context(at="r").messages
        assert messages[0]["role"] == "system"
        assert messages[0]["content"].startswith("The user's profile (custom instructions)")
        assert all(m["role"] != "user" or "我是数据分析师" not in m["content"] for m in messages)


def test_librechat_without_dates_says_the_leaf_is_file_order(tmp_path: Path) -> None:
    msgs = [
        {"messageId": "m1", "parentMessageId": None, "text": "hi", "isCreatedByUser": True},
        {"messageId": "m2", "parentMessageId": "m1", "text": "a", "isCreatedByUser": False},
        {"messageId": "m3", "parentMessageId": "m1", "text": "b", "isCreatedByUser": False},
    ]
    path = tmp_path / "chat.json"
    path.write_text(json.dumps({"conversationId": "lc", "messages": msgs}), encoding="utf-8")
    with Store() as s:
        report = s.import_export(path, format="librechat")
    notes = [n for c in report.conversations for n in c.notes]
    assert any("file order" in n and "'m3'" in n for n in notes), notes
