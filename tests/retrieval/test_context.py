"""Store.context on every backend: the path's last messages and the gated memories."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from branchmem import Store
from branchmem.cli import main
from branchmem.context import Context
from branchmem.errors import InvalidInput, UnknownAnchor


def chat(store: Store) -> None:
    store.add_events(
        [
            {"id": "e1", "content": "我在腾讯做产品经理。"},
            {"id": "e2", "parent": "e1", "role": "assistant", "content": "明白。"},
            {"id": "e3", "parent": "e2", "content": "我换工作了，现在在阿里巴巴上班。"},
            {"id": "x3", "parent": "e2", "content": "我对花生过敏。"},
        ]
    )
    for at in ("e1", "e3", "x3"):
        store.extract(at=at)


def test_messages_are_the_last_window_of_the_path(store: Store) -> None:
    chat(store)
    ctx = store.context(at="e3", window=2)
    assert ctx.messages == [
        {"role": "assistant", "content": "明白。"},
        {"role": "user", "content": "我换工作了，现在在阿里巴巴上班。"},
    ]
    assert len(store.context(at="e3", window=None).messages) == 3
    assert store.context(at="e3", window=0).messages == []


def test_memories_are_gated_and_ranked(store: Store) -> None:
    chat(store)
    ctx = store.context(at="e3", query="我在哪上班？", k=1, embedder="hashing")
    assert [m.content for m in ctx.memories] == ["用户在阿里巴巴工作"]
    every = store.context(at="e3", query="我在哪上班？", k=None, embedder="hashing")
    # k=None is no limit; the relevance cut-off still drops what hardly matches
    assert every.memories[0].content == "用户在阿里巴巴工作"
    assert {m.content for m in every.memories} <= {"用户在阿里巴巴工作", "用户的职业是产品经理"}
    other = store.context(at="x3", k=None)
    assert sorted(m.content for m in other.memories) == [
        "用户在腾讯工作",
        "用户对花生过敏",
        "用户的职业是产品经理",
    ]
    assert "阿里巴巴" not in other.text()


def test_without_a_query_importance_then_recency(store: Store) -> None:
    store.add_events([{"id": "e1"}, {"id": "e2", "parent": "e1"}])
    store.add_memory("old", sources=["e1"], importance=0.5)
    store.add_memory("new", sources=["e2"], importance=0.5)
    store.add_memory("key", sources=["e1"], importance=0.9)
    assert [m.content for m in store.context(at="e2", k=2).memories] == ["key", "new"]
    assert store.context(at="e2", k=0).memories == []


def test_text_labels_follow_the_language(store: Store) -> None:
    store.add_event("e1", content="I live in Lima.")
    store.extract(at="e1")
    assert store.context(at="e1").text() == (
        "Relevant memories:\n- User lives in Lima\n\nConversation:\nUser: I live in Lima."
    )
    assert Context(None, [], []).text() == ""


def test_scope_chain_and_no_anchor(store: Store) -> None:
    chat(store)
    store.add_event("u1", content="I'm vegetarian.")
    store.extract(at="u1")
    ctx = store.context(at=["e3", "u1"], k=None)
    assert ctx.at == ("e3", "u1")
    assert [m["content"] for m in ctx.messages][-1] == "我换工作了，现在在阿里巴巴上班。"
    assert {m.via for m in ctx.memories} == {"e3", "u1"}
    assert "User's diet: vegetarian" in ctx.text()
    nothing = store.context(at=None)
    assert nothing.messages == [] and nothing.memories == []


def test_bad_input(store: Store) -> None:
    store.add_event("e1")
    with pytest.raises(UnknownAnchor):
        store.context(at="nope")
    for bad in ({"window": -1}, {"k": -2}, {"k": 1.5}, {"window": True}, {"query": 3}):
        with pytest.raises(InvalidInput):
            store.context(at="e1", **bad)  # type: ignore[arg-type]


def test_cli_extract_and_context(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "m.db"
    with Store(db) as store:
        chat_events = [
            {"id": "e1", "content": "我在腾讯做产品经理。"},
            {"id": "e2", "parent": "e1", "content": "我换工作了，现在在阿里巴巴上班。"},
        ]
        store.add_events(chat_events)
    assert main(["extract", "--db", str(db), "--at", "e2"]) == 0
    out = capsys.readouterr().out
    assert "用户在阿里巴巴工作" in out and "3 written, 0 already there, 0 dropped" in out
    assert main(["extract", "--db", str(db), "--at", "e2", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["written"] == []
    assert (
        main(
            [
                "context",
                "--db",
                str(db),
                "--at",
                "e2",
                "--query",
                "在哪上班",
                "--embedder",
                "hashing",
                "-k",
                "1",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert out.startswith("相关记忆：\n- 用户在阿里巴巴工作\n") and "对话记录：" in out
    assert main(["context", "--db", str(db), "--at", "e1", "--json"]) == 0
    assert "阿里巴巴" not in capsys.readouterr().out
    assert main(["extract", "--db", str(db), "--at", "e9"]) == 1
    assert "names no event" in capsys.readouterr().err
    assert main(["extract", "--db", str(db), "--at", "e2", "--llm-model", "m"]) == 1
    assert "--llm-base-url" in capsys.readouterr().err
    assert main(["extract", "--db", str(tmp_path / "none.db"), "--at", "e1"]) == 1
    assert not (tmp_path / "none.db").exists()
