"""Imports at their edges: exports nested too deeply to parse, conversations
that reuse another's message ids, folders with links out and files that are
no chat, and messages over the size limit. Each is one clear error or a
skipped item with its reason, never a traceback or a wrong branch."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from branchmem import InvalidInput, Store, UnknownBranch
from branchmem.importers import read_export
from branchmem.validate import MAX_CONTENT_BYTES, MAX_DEPTH, MAX_MESSAGE_BYTES


def chatgpt(conv_id: str, messages: list[tuple[str, str]], **content: Any) -> dict[str, Any]:
    """A ChatGPT conversation: a chain of (id, text) messages, user and assistant."""
    mapping: dict[str, Any] = {}
    parent = None
    for i, (mid, text) in enumerate(messages):
        body: dict[str, Any] = {"content_type": "text", "parts": [text]}
        if content and i == 0:
            body = {"content_type": "code", "text": text, **content}
        mapping[mid] = {
            "parent": parent,
            "message": {
                "author": {"role": "user" if i % 2 == 0 else "assistant"},
                "content": body,
            },
        }
        parent = mid
    return {"conversation_id": conv_id, "current_node": parent, "mapping": mapping}


def write(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


# ----------------------------------------------------------- nested exports
def _deep(levels: int) -> str:
    return "[" * levels + "]" * levels


@pytest.mark.parametrize("top", ["array", "object"])
def test_an_export_nested_100000_deep_is_one_invalid_input(tmp_path: Path, top: str) -> None:
    conv = (
        '{"conversation_id": "c1", "current_node": "m1", "mapping": {"m1": {"parent": null, '
        '"message": {"author": {"role": "user"}, "content": {"content_type": "code", '
        f'"deep": {_deep(100_000)}}}}}}}}}'
    )
    path = tmp_path / "conversations.json"
    path.write_text(f"[{conv}]" if top == "array" else conv)
    with pytest.raises(InvalidInput, match="nests objects and lists too deeply to read"):
        Store().import_export(path)
    cli = subprocess.run(
        [sys.executable, "-m", "branchmem", "import", str(path), "--db", str(tmp_path / "m.db")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert cli.returncode == 1
    assert cli.stderr.count("\n") == 1 and "too deeply" in cli.stderr  # one line, no traceback
    assert not (tmp_path / "m.db").exists()


def test_a_sillytavern_line_nested_too_deep_skips_that_chat(tmp_path: Path) -> None:
    folder = tmp_path / "chats"
    folder.mkdir()
    header = {"user_name": "You", "character_name": "A", "chat_metadata": {}}
    message = {"name": "A", "is_user": False, "mes": "hi"}
    (folder / "good.jsonl").write_text(f"{json.dumps(header)}\n{json.dumps(message)}\n")
    deep = '{"name": "A", "is_user": false, "mes": "x", "extra": ' + _deep(100_000) + "}"
    (folder / "deep.jsonl").write_text(f"{json.dumps(header)}\n{deep}\n")
    report = Store().import_export(folder)
    assert [c.id for c in report.conversations] == ["good"]
    assert [(s.id, "too deeply" in s.reason) for s in report.skipped] == [("deep", True)]


def test_content_nested_over_the_meta_limit_skips_that_conversation(tmp_path: Path) -> None:
    deep: Any = []
    for _ in range(MAX_DEPTH + 5):
        deep = [deep]
    path = write(
        tmp_path / "c.json",
        [chatgpt("deep", [("d1", "x")], extra=deep), chatgpt("ok", [("o1", "你好")])],
    )
    store = Store()
    report = store.import_export(path)
    assert [c.id for c in report.conversations] == ["ok"]
    assert len(report.skipped) == 1 and report.skipped[0].id == "deep"
    assert f"more than {MAX_DEPTH} levels" in report.skipped[0].reason
    assert [e.id for e in store.events()] == ["o1"]


# ------------------------------------------------------ reused message ids
def test_a_conversation_reusing_another_conversations_ids_is_refused(tmp_path: Path) -> None:
    first = chatgpt("c1", [("m1", "我下个月搬去成都。"), ("m2", "成都很好。")])
    second = chatgpt("c2", [("m1", "我喜欢猫。"), ("m2", "猫很可爱。"), ("m3", "是的。")])
    path = write(tmp_path / "conversations.json", [first, second])
    store = Store()
    for _ in range(2):  # importing again changes nothing
        report = store.import_export(path)
        assert [c.id for c in report.conversations] == ["c1"]
        assert [s.id for s in report.skipped] == ["c2"]
        assert "reuses message ids" in report.skipped[0].reason
        assert "'m1'" in report.skipped[0].reason
        with pytest.raises(UnknownBranch):
            store.branch_head("conv/c2")
        assert [e.content for e in store.path("conv/c1")] == ["我下个月搬去成都。", "成都很好。"]
        assert sorted(e.id for e in store.events()) == ["m1", "m2"]  # no m3 under c1's m2


def test_a_conversation_sharing_identical_events_is_still_imported(tmp_path: Path) -> None:
    first = chatgpt("c1", [("m1", "你好"), ("m2", "第一")])
    second = chatgpt("c2", [("m1", "你好"), ("x2", "第二")])
    store = Store()
    report = store.import_export(write(tmp_path / "c.json", [first, second]))
    assert [c.id for c in report.conversations] == ["c1", "c2"] and report.skipped == ()
    assert [e.id for e in store.path("conv/c2")] == ["m1", "x2"]


def test_an_edited_reimport_of_the_same_conversation_still_reports_a_conflict(
    tmp_path: Path,
) -> None:
    store = Store()
    store.import_export(write(tmp_path / "a.json", [chatgpt("c1", [("m1", "原来")])]))
    report = store.import_export(write(tmp_path / "b.json", [chatgpt("c1", [("m1", "改过")])]))
    assert [c.id for c in report.conversations] == ["c1"]
    assert [x.id for x in report.conversations[0].conflicts] == ["m1"]


# ------------------------------------------------------ SillyTavern folders
def _chat(folder: Path, name: str, text: str) -> Path:
    header = {"user_name": "You", "character_name": "Seraphina", "chat_metadata": {}}
    message = {"name": "You", "is_user": True, "mes": text}
    path = folder / f"{name}.jsonl"
    path.write_text(f"{json.dumps(header)}\n{json.dumps(message, ensure_ascii=False)}\n")
    return path


def test_a_folder_import_skips_links_out_and_files_that_are_no_chat(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    secret = _chat(outside, "secret", "不该导入的秘密")
    folder = tmp_path / "chats"
    folder.mkdir()
    _chat(folder, "a", "你好")
    (folder / "link.jsonl").symlink_to(secret)
    (folder / "alias.jsonl").symlink_to(folder / "a.jsonl")  # a link inside is read
    (folder / "settings.json").write_text('{"theme": "dark"}')
    (folder / "notes.jsonl").write_text("just some notes\n")
    (folder / "old.jsonl").mkdir()
    (folder / "gone.jsonl").symlink_to(folder / "missing.jsonl")
    store = Store()
    report = store.import_export(folder)
    assert sorted(c.id for c in report.conversations) == ["a", "alias"]
    reasons = {Path(str(s.id)).name: s.reason for s in report.skipped}
    assert set(reasons) == {"link.jsonl", "settings.json", "notes.jsonl", "old.jsonl", "gone.jsonl"}
    assert reasons["old.jsonl"] == reasons["gone.jsonl"] == "not read: not a file"
    assert "outside the folder" in reasons["link.jsonl"]
    assert "no conversation of a known format" in reasons["settings.json"]
    assert all("不该导入" not in e.content for e in store.events())


def test_a_folder_with_nothing_to_import_says_why(tmp_path: Path) -> None:
    folder = tmp_path / "chats"
    folder.mkdir()
    (folder / "settings.json").write_text('{"theme": "dark"}')
    with pytest.raises(InvalidInput, match=r"no file to import was left: .*settings\.json"):
        read_export(folder)


def test_a_file_named_explicitly_is_still_refused_at_once(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text('{"theme": "dark"}')
    with pytest.raises(InvalidInput, match="no conversation of a known format"):
        read_export(path)


# ----------------------------------------------------------- message sizes
def test_a_message_over_the_size_limit_skips_its_conversation(tmp_path: Path) -> None:
    big = "用" * 400  # 400 characters, 1,200 bytes of UTF-8
    path = write(
        tmp_path / "c.json",
        [chatgpt("big", [("b1", "hi"), ("b2", big)]), chatgpt("small", [("s1", "你好")])],
    )
    store = Store()
    report = store.import_export(path, max_message_bytes=1_000)
    assert [c.id for c in report.conversations] == ["small"]
    assert len(report.skipped) == 1 and report.skipped[0].id == "big"
    reason = report.skipped[0].reason
    assert "'b2'" in reason and "1,200 bytes" in reason and "1,000" in reason
    assert [e.id for e in store.events()] == ["s1"]
    report = store.import_export(path)  # the default (1 MiB) takes it
    assert [c.id for c in report.conversations] == ["big", "small"]
    # The default is the content limit of every event, and no more can be asked.
    assert MAX_MESSAGE_BYTES == MAX_CONTENT_BYTES == 1 << 20
    with pytest.raises(InvalidInput, match="max_message_bytes"):
        store.import_export(path, max_message_bytes=MAX_CONTENT_BYTES + 1)


def test_the_size_limit_applies_to_sillytavern_and_the_cli(tmp_path: Path) -> None:
    folder = tmp_path / "chats"
    folder.mkdir()
    _chat(folder, "big", "x" * 2_000)
    _chat(folder, "small", "hi")
    db = tmp_path / "m.db"
    args = ["import", str(folder), "--db", str(db), "--json", "--max-message-bytes", "1000"]
    cli = subprocess.run(
        [sys.executable, "-m", "branchmem", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert cli.returncode == 0, cli.stderr
    out = json.loads(cli.stdout)
    assert [c["id"] for c in out["conversations"]] == ["small"]
    assert [s["id"] for s in out["skipped"]] == ["big"]
    assert "2,000 bytes" in out["skipped"][0]["reason"]
    with pytest.raises(
        InvalidInput, match="max_message_bytes must be a whole number from 1 to 1048576,"
    ):
        read_export(folder, max_message_bytes=0)
