"""Each format's fixture imports with the export's own current path at ``conv/<id>``,
abandoned branches included, on every backend."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from branchmem import Store
from branchmem.importers import branch_name, read_export
from helpers.import_expect import (
    DATA,
    chatgpt_kept,
    chatgpt_path,
    claude_path,
    librechat_messages,
    librechat_path,
    load,
    openwebui_path,
    sillytavern_current_texts,
    sillytavern_lines,
)


def ids_at(store: Store, at: str) -> list[str]:
    return [e.id for e in store.path(at)]


def test_chatgpt(store: Store) -> None:
    report = store.import_export(DATA / "chatgpt.json")
    raw = load("chatgpt.json")
    assert report.format == "chatgpt"
    good = [c for c in raw if c.get("conversation_id") in {r.id for r in report.conversations}]
    assert len(good) == 2
    for conv in good:
        cid = conv["conversation_id"]
        assert ids_at(store, f"conv/{cid}") == chatgpt_path(conv)
        # every message comes in, abandoned branches too; structural nodes do not
        kept = {k for k, n in conv["mapping"].items() if chatgpt_kept(n)}
        for k in kept:
            assert store.get_event(k).id == k
        line = next(r for r in report.conversations if r.id == cid)
        assert (line.events, line.added, line.current) == (
            len(kept),
            len(kept),
            chatgpt_path(conv)[-1],
        )
    # structural root and the hidden empty system message skipped: the first
    # message and its edit are roots, the edit names the first as its version
    assert "sys" not in {e.id for e in store.events()}
    assert store.get_event("u1").parents == store.get_event("u1b").parents == ()
    named = {x: (store.get_event(x).meta or {}).get("version_of") for x in ("u1", "u1b")}
    first, edit = ("u1", "u1b") if named["u1b"] else ("u1b", "u1")
    assert (named[first], named[edit]) == (None, first)
    assert {str(store.versions("u1")), str(store.versions("u1b"))} == {"1/2", "2/2"}
    assert all(str(store.versions(r.id)) == "1/1" for r in store.children(None) if r.id[0] != "u")
    # non-text content: a placeholder or its text, never a crash
    assert store.get_event("u1b").content == "[image]\n我下个月搬去杭州。"
    assert store.get_event("u1b").meta["attachments"] == ["apartment.png"]
    raw_u1b = raw[0]["mapping"]["u1b"]["message"]["content"]
    assert store.get_event("u1b").meta["content"] == raw_u1b  # kept whole, to write back
    assert "content" not in store.get_event("a2b").meta  # plain text: the text is enough
    assert "moving to Hangzhou" in store.get_event("a2a").content
    ctx = store.get_event("t-ctx")  # the custom instructions: a labelled profile note
    assert ctx.content == (
        "The user's profile (custom instructions): I am a data analyst.\n"
        "How the user wants answers (custom instructions): Answer briefly."
    )
    assert ctx.role == "system" and ctx.meta is not None and ctx.meta["kind"] == "profile"
    assert store.get_event("t-code").content == "print(2+2)"
    assert store.get_event("t-exec").role == "tool"
    skipped = {s.id: s.reason for s in report.skipped}
    assert "missing-node" in skipped["6630a1b2-0000-4000-8000-000000000003"]
    assert "mapping" in skipped["6630a1b2-0000-4000-8000-000000000004"]
    assert "cycle" in skipped["6630a1b2-0000-4000-8000-000000000005"]
    nameless = next(r for r in report.conversations if r.title == "no id")
    assert nameless.id == "chatgpt-5" and "no conversation_id" in nameless.notes[0]
    assert store.branch_head("conv/chatgpt-5") == "noid-1"


def test_gate_after_import(store: Store) -> None:
    """A memory from the abandoned edit is hidden at conv/<id>; one from the current path shows."""
    store.import_export(DATA / "chatgpt.json")
    at = "conv/6630a1b2-0000-4000-8000-000000000001"
    old = store.add_memory("用户下个月搬去成都", sources=["u1"])
    new = store.add_memory("用户下个月搬去杭州", sources=["u1b"])
    assert [m.id for m in store.memories(at=at)] == [new.id]
    assert store.visible(old.id, at="a1")


def test_claude_web_json(store: Store) -> None:
    raw = load("claude_chat.json")
    report = store.import_export(DATA / "claude_chat.json")
    assert report.format == "claude" and not report.skipped
    assert ids_at(store, f"conv/{raw['uuid']}") == claude_path(raw)
    assert {e["uuid"] for e in raw["chat_messages"]} == {
        e for e in ("m1", "m2", "m3", "m4a", "m4b") if store.get_event(e)
    }
    assert store.get_event("m1").parents == store.get_event("m2").parents == ()
    assert store.get_event("m1").role == "user"
    assert store.get_event("m1").meta["attachments"] == ["menu.txt"]
    assert store.get_event("m3").content.endswith("Noted: no peanuts.")
    assert "[tool_use web_search]" in store.get_event("m4a").content
    m4a = next(m for m in raw["chat_messages"] if m["uuid"] == "m4a")
    assert store.get_event("m4a").meta["content"] == m4a["content"]
    assert "content" not in store.get_event("m4b").meta


def test_claude_bulk_is_a_chain(store: Store) -> None:
    raw = load("claude_bulk.json")
    report = store.import_export(DATA / "claude_bulk.json")
    first = raw[0]
    assert ids_at(store, f"conv/{first['uuid']}") == [m["uuid"] for m in first["chat_messages"]]
    assert "no parent links" in report.conversations[0].notes[0]
    assert [s.id for s in report.skipped] == [raw[1]["uuid"]]  # an empty conversation


@pytest.mark.parametrize("name", ["openwebui.json", "openwebui_single.json"])
def test_openwebui(store: Store, name: str) -> None:
    raw = load(name)
    chats = raw if isinstance(raw, list) else [raw]
    report = store.import_export(DATA / name, format="openwebui", namespace="alice")
    assert report.format == "openwebui"
    done = {c.id for c in report.conversations}
    for chat in chats:
        if chat["id"] in done:
            assert ids_at_ns(store, f"conv/{chat['id']}", "alice") == openwebui_path(chat)
        else:
            assert chat["id"] in {s.id for s in report.skipped}
    assert store.branches() == []  # another namespace is untouched


def ids_at_ns(store: Store, at: str, ns: str) -> list[str]:
    return [e.id for e in store.path(at, namespace=ns)]


def test_openwebui_keeps_abandoned_regeneration(store: Store) -> None:
    store.import_export(DATA / "openwebui.json")
    assert store.get_event("r2a").parents == store.get_event("r2b").parents == ("r1",)
    assert store.get_event("r3").parents == ("r2a",)
    assert store.get_event("r1").meta["attachments"] == ["pantry.txt"]


@pytest.mark.parametrize("name", ["librechat_flat.json", "librechat_nested.json"])
def test_librechat(store: Store, name: str) -> None:
    raw = load(name)
    report = store.import_export(DATA / name)
    assert report.format == "librechat"
    (line,) = report.conversations
    assert ids_at(store, f"conv/{raw['conversationId']}") == librechat_path(raw)
    assert "no current message" in line.notes[0]
    for m in librechat_messages(raw):
        e = store.get_event(m["messageId"])
        assert e.role == ("user" if m["isCreatedByUser"] else "assistant")
    assert line.events == len(librechat_messages(raw))


def test_librechat_content_parts(store: Store) -> None:
    store.import_export(DATA / "librechat_flat.json")
    text = store.get_event("l3a").content
    assert "User now says Hangzhou." in text and "[tool_call weather]" in text
    assert text.endswith("Hangzhou has West Lake.")
    assert store.get_event("l1").meta["attachments"] == ["lease.pdf"]
    raw = next(m for m in load("librechat_flat.json")["messages"] if m["messageId"] == "l3a")
    assert store.get_event("l3a").meta["content"] == raw["content"]


def test_sillytavern_swipes_and_branch_file(store: Store) -> None:
    folder = DATA / "sillytavern"
    main_file, branch_file = (
        folder / "Seraphina - 2024-05-01@10h00m00s.jsonl",
        folder / "Branch #1 - 2024-05-01@11h00m00s.jsonl",
    )
    report = store.import_export(folder)
    assert report.format == "sillytavern"
    by_id = {c.id: c for c in report.conversations}
    main, branch = by_id[main_file.stem], by_id[branch_file.stem]
    for line, path in ((main, main_file), (branch, branch_file)):
        assert [e.content for e in store.path(line.branch)] == sillytavern_current_texts(path)
    # the three swipes are siblings; the chosen one (swipe_id 1) is on the path
    swiped = sillytavern_lines(main_file)[2]
    sibs = [e for e in store.path(main.branch)][2]
    parent = sibs.parents
    siblings = [
        store.get_event(f"st:{main_file.stem}:2" + ("" if k == 0 else f".s{k}"))
        for k in range(len(swiped["swipes"]))
    ]
    assert [s.content for s in siblings] == swiped["swipes"]
    assert all(s.parents == parent for s in siblings)
    assert sibs.content == swiped["swipes"][swiped["swipe_id"]]
    # the branch file shares the copied prefix and forks after it
    main_path, branch_path = ids_at(store, main.branch), ids_at(store, branch.branch)
    assert branch_path[:3] == main_path[:3] and branch_path[3] != main_path[3]
    assert (branch.events, branch.added) == (6, 1)  # only the message after the copy is new
    assert store.get_event(main_path[-1]).role == "system"  # the hidden system note


def test_sillytavern_branch_file_alone_stands_alone(store: Store) -> None:
    path = DATA / "sillytavern" / "Branch #1 - 2024-05-01@11h00m00s.jsonl"
    report = store.import_export(path)
    (line,) = report.conversations
    assert "neither in this import nor stored" in line.notes[0]
    assert [e.content for e in store.path(line.branch)] == sillytavern_current_texts(path)


def test_sillytavern_branch_file_finds_its_main_chat_imported_before(store: Store) -> None:
    folder = DATA / "sillytavern"
    main_file = folder / "Seraphina - 2024-05-01@10h00m00s.jsonl"
    branch_file = folder / "Branch #1 - 2024-05-01@11h00m00s.jsonl"
    main = store.import_export(main_file).conversations[0]
    branch = store.import_export(branch_file).conversations[0]
    assert (branch.events, branch.added, branch.conflicts) == (6, 1, ())
    assert "shares its first 3 messages, imported before" in branch.notes[0]
    assert ids_at(store, branch.branch)[:3] == ids_at(store, main.branch)[:3]
    texts = [e.content for e in store.path(branch.branch)]
    assert texts == sillytavern_current_texts(branch_file)
    # the same result as importing both in one run
    both = Store()
    together = {c.id: c for c in both.import_export(folder).conversations}
    assert ids_at(both, together[branch.id].branch) == ids_at(store, branch.branch)


def test_sillytavern_broken_line_is_skipped(store: Store) -> None:
    report = store.import_export(DATA / "sillytavern_broken.jsonl")
    assert report.conversations == ()
    assert "line 2" in report.skipped[0].reason


def test_read_export_without_a_store() -> None:
    convs = list(read_export(DATA / "chatgpt.json"))
    first = convs[0]
    assert first.branch == branch_name(first.id) == f"conv/{first.id}"
    assert first.path() == chatgpt_path(load("chatgpt.json")[0])
    assert not first.events[0].parents  # parents first
    seen: set[str] = set()
    for e in first.events:
        assert all(p in seen for p in e.parents)
        seen.add(e.id)
    assert type(first).from_dict(first.to_dict()) == first


def test_branch_names_replace_what_a_branch_name_may_not_hold() -> None:
    assert branch_name("Seraphina - 2024/05/01") == "conv/Seraphina_-_2024_05_01"
    long_a, long_b = "a" * 300, "a" * 299 + "b"
    assert len(branch_name(long_a)) == 200 and branch_name(long_a) != branch_name(long_b)


def test_every_fixture_on_every_backend_is_idempotent(
    make_store: Callable[[], Store], tmp_path: Path
) -> None:
    store = make_store()
    names = [p for p in sorted(DATA.iterdir()) if p.suffix in (".json", ".jsonl")]
    names.append(DATA / "sillytavern")
    for path in names:
        first = store.import_export(path)
        again = store.import_export(path)
        assert [c.added for c in again.conversations] == [0] * len(again.conversations)
        assert [c.conflicts for c in again.conversations] == [()] * len(again.conversations)
        assert [c.current for c in again.conversations] == [c.current for c in first.conversations]


def test_guide_import_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    guide = (Path(__file__).parents[2] / "docs" / "importers.md").read_text(encoding="utf-8")
    code = guide.split("```python\n", 1)[1].split("```", 1)[0]
    (tmp_path / "conversations.json").write_bytes((DATA / "chatgpt.json").read_bytes())
    monkeypatch.chdir(tmp_path)
    scope: dict[str, object] = {}
    exec(compile(code, "docs/importers.md", "exec"), scope)
    store = scope["store"]
    assert isinstance(store, Store)
    assert (
        store.branch_head("conv/6630a1b2-0000-4000-8000-000000000001", namespace="alice") == "a2b"
    )
    store.close()
