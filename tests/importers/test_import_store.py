"""Importing into a store: idempotent, incremental, conflicts reported, errors clear."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from branchmem import InvalidInput, Redactor, Store
from branchmem.cli import main
from branchmem.importers import UnknownFormat
from helpers.chatgpt_shape import conversation
from helpers.import_expect import DATA

V1 = {"r": None, "u1": "r", "a1": "u1", "u2": "a1", "a2": "u2", "u2b": "a1", "a2b": "u2b"}


def write(tmp_path: Path, name: str, data: Any) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


def snapshot(store: Store, ns: str = "default") -> tuple[Any, ...]:
    return (
        [(b.name, b.head) for b in store.branches(namespace=ns, count=False)],
        [(e.op, e.ids) for e in store.audit(namespace=ns)],
    )


def test_reimport_adds_nothing(store: Store, tmp_path: Path) -> None:
    path = write(tmp_path, "c.json", [conversation("c1", V1, "a2b", structural=["r"])])
    first = store.import_export(path)
    again = store.import_export(path)
    assert (first.conversations[0].added, again.conversations[0].added) == (6, 0)
    assert again.conversations[0].conflicts == ()
    assert [m.to_head for m in store.history("conv/c1")] == ["a2b"]


def test_newer_export_adds_only_new_messages_and_moves_the_branch(
    store: Store, tmp_path: Path
) -> None:
    store.import_export(write(tmp_path, "v1.json", [conversation("c1", V1, "a2b")]))
    v2 = {**V1, "u3": "a2", "a3": "u3"}  # the user went back to the first branch
    report = store.import_export(write(tmp_path, "v2.json", [conversation("c1", v2, "a3")]))
    line = report.conversations[0]
    assert (line.events, line.added, line.current) == (9, 2, "a3")
    assert [e.id for e in store.path("conv/c1")] == ["r", "u1", "a1", "u2", "a2", "u3", "a3"]
    assert [(m.from_head, m.to_head) for m in store.history("conv/c1")][-1] == ("a2b", "a3")


def test_changed_content_is_a_conflict_never_an_overwrite(store: Store, tmp_path: Path) -> None:
    store.import_export(write(tmp_path, "v1.json", [conversation("c1", V1, "a2b")]))
    v2 = {**V1, "u3": "a2b"}
    texts = {"a1": "rewritten"}
    export = [conversation("c1", v2, "u3", texts=texts)]
    report = store.import_export(write(tmp_path, "v2.json", export))
    line = report.conversations[0]
    assert [(c.id, c.fields) for c in line.conflicts] == [("a1", ("content",))]
    assert line.added == 1
    assert store.get_event("a1").content == "text a1"
    assert store.branch_head("conv/c1") == "u3"


def test_unknown_format_is_one_clear_error_and_leaves_the_store_alone(
    store: Store, tmp_path: Path
) -> None:
    store.import_export(DATA / "openwebui.json")
    before = snapshot(store)
    for data in ([{"hello": 1}], {"not": "an export"}, "text"):
        path = write(tmp_path, "x.json", data)
        with pytest.raises(UnknownFormat) as err:
            store.import_export(path)
        for name in ("chatgpt", "claude", "openwebui", "librechat", "sillytavern"):
            assert name in str(err.value)
    with pytest.raises(InvalidInput, match="one of"):
        store.import_export(DATA / "chatgpt.json", format="whatsapp")
    with pytest.raises(InvalidInput, match="not a file"):
        store.import_export(tmp_path / "missing.json")
    bad = tmp_path / "cut.json"
    bad.write_text('[{"mapping": {}}, {"mapping": ', encoding="utf-8")
    with pytest.raises(InvalidInput, match="not valid JSON"):
        store.import_export(bad)
    assert snapshot(store) == before


def test_a_file_cut_off_keeps_what_came_before_and_says_so(store: Store, tmp_path: Path) -> None:
    whole = json.dumps([conversation("c1", V1, "a2b"), conversation("c2", {"x": None}, "x")])
    cut = tmp_path / "cut.json"
    cut.write_text(whole[: whole.index('"c2"')], encoding="utf-8")
    with pytest.raises(InvalidInput, match="1 conversations before that point were imported"):
        store.import_export(cut)
    assert store.branch_head("conv/c1") == "a2b"
    again = store.import_export(write(tmp_path, "whole.json", json.loads(whole)))
    assert [c.added for c in again.conversations] == [0, 1]


def test_a_forced_format_that_does_not_fit_skips_each_conversation(store: Store) -> None:
    report = store.import_export(DATA / "claude_bulk.json", format="chatgpt")
    assert report.conversations == ()
    assert all("mapping" in s.reason for s in report.skipped)


def test_a_child_before_its_parent_and_keys_in_any_order(store: Store, tmp_path: Path) -> None:
    order = ["a2b", "u2b", "a2", "u2", "a1", "u1", "r"]
    path = write(tmp_path, "c.json", [conversation("c1", V1, "a2", order=order)])
    store.import_export(path)
    assert [e.id for e in store.path("conv/c1")] == ["r", "u1", "a1", "u2", "a2"]


def test_current_node_that_is_not_in_the_mapping_falls_back_with_a_note(
    store: Store, tmp_path: Path
) -> None:
    report = store.import_export(
        write(tmp_path, "c.json", [conversation("c1", V1, "a2b") | {"current_node": "gone"}])
    )
    line = report.conversations[0]
    assert line.current == "a2b" and "gone" in line.notes[0]


def test_nul_characters_are_dropped_with_a_note_and_reimport_finds_no_conflict(
    store: Store, tmp_path: Path
) -> None:
    path = write(tmp_path, "c.json", [conversation("c1", V1, "a2", texts={"u2": "a\x00b"})])
    line = store.import_export(path).conversations[0]
    assert line.added == 7 and "NUL" in line.notes[0]
    assert store.get_event("u2").content == "ab"  # the same on every backend
    again = store.import_export(path).conversations[0]
    assert (again.added, again.conflicts) == (0, ())
    with pytest.raises(InvalidInput, match="NUL"):  # the store itself refuses, never stores
        store.add_event("x", content="a\x00b")


def test_empty_array(store: Store, tmp_path: Path) -> None:
    report = store.import_export(write(tmp_path, "c.json", []))
    assert report.to_dict() == {"format": None, "conversations": [], "skipped": []}


def test_cli_json_shape(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = str(tmp_path / "mem.db")
    code = main(
        ["import", str(DATA / "chatgpt.json"), "--db", db, "--namespace", "alice", "--json"]
    )
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {"format", "conversations", "skipped"}
    assert out["format"] == "chatgpt"
    for c in out["conversations"]:
        assert {"id", "title", "branch", "events", "added", "current"} <= set(c)
        assert c["branch"] == f"conv/{c['id']}"
    for s in out["skipped"]:
        assert set(s) == {"id", "reason"}
    with Store(db) as store:
        line = out["conversations"][0]
        assert store.branch_head(line["branch"], namespace="alice") == line["current"]


def test_cli_summary_and_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = str(tmp_path / "mem.db")
    assert main(["import", str(DATA / "openwebui.json"), "--db", db]) == 0
    out = capsys.readouterr().out
    assert out.startswith("openwebui: 1 conversation, 4 events added, 0 conflicts, 1 skipped")
    n = len(Store().import_export(DATA / "chatgpt.json").conversations)
    assert n > 1
    assert main(["import", str(DATA / "chatgpt.json"), "--db", db]) == 0
    assert capsys.readouterr().out.startswith(f"chatgpt: {n} conversations, ")
    assert main(["import", str(DATA / "librechat_flat.json"), "--db", db]) == 0
    assert "note: conv/lc-conv-flat: LibreChat records no current" in capsys.readouterr().out
    path = write(tmp_path, "x.json", {"what": 1})
    assert main(["import", str(path), "--db", db]) == 1
    assert "formats tried" in capsys.readouterr().err


def test_a_branch_name_taken_by_an_event_skips_the_conversation_unwritten(
    store: Store, tmp_path: Path
) -> None:
    store.add_event("conv/c1")
    export = [conversation("c1", V1, "a2b"), conversation("c2", {"x": None}, "x")]
    report = store.import_export(write(tmp_path, "c.json", export))
    assert [c.id for c in report.conversations] == ["c2"]
    assert report.skipped[0].id == "c1" and "already names an event" in report.skipped[0].reason
    with pytest.raises(KeyError):
        store.get_event("u1")


def test_progress_reaches_the_file_size(store: Store) -> None:
    seen: list[tuple[int, int]] = []
    store.import_export(
        DATA / "chatgpt.json", progress=lambda done, total: seen.append((done, total))
    )
    size = (DATA / "chatgpt.json").stat().st_size
    assert seen[-1] == (size, size)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)


def test_cli_progress_bar_on_a_terminal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from branchmem.cli import imports as cli_import

    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    monkeypatch.setattr(cli_import, "BAR_MIN", 0)
    assert main(["import", str(DATA / "chatgpt.json"), "--db", str(tmp_path / "m.db")]) == 0
    err = capsys.readouterr().err
    assert err.startswith("\rimporting [") and "100.0%" in err and err.endswith("\n")


def test_reimport_into_a_redacting_store_finds_no_conflict(tmp_path: Path) -> None:
    texts = {"u1": "我的手机号是13812345678，下个月搬去成都。"}
    path = write(tmp_path, "c.json", [conversation("c1", V1, "a2b", texts=texts)])
    store = Store(redactor=Redactor())
    store.import_export(path)
    assert "13812345678" not in store.get_event("u1").content
    again = store.import_export(path).conversations[0]
    assert (again.added, again.conflicts) == (0, ())
    changed = {"u1": "我的手机号是13812345678，下个月搬去杭州。"}
    path2 = write(tmp_path, "c2.json", [conversation("c1", V1, "a2b", texts=changed)])
    assert [c.id for c in store.import_export(path2).conversations[0].conflicts] == ["u1"]


def test_after_extract_conv_branch_sees_only_its_own_memories(store: Store, tmp_path: Path) -> None:
    """The issue's end: import, extract on both branches, read at conv/<id>."""
    parents = {"r": None, "u1": "r", "a1": "u1", "u1b": "r", "a1b": "u1b"}
    texts = {"u1": "我下个月搬去成都。", "u1b": "我下个月搬去杭州。"}
    roles = {"r": "system", "u1": "user", "a1": "assistant", "u1b": "user", "a1b": "assistant"}
    export = [conversation("c1", parents, "a1b", texts=texts, structural=["r"], roles=roles)]
    store.import_export(write(tmp_path, "c.json", export))
    for leaf in ("a1", "conv/c1"):  # the abandoned edit too: its memories exist
        store.extract(at=leaf)
    seen = " ".join(m.content for m in store.memories(at="conv/c1"))
    assert "杭州" in seen and "成都" not in seen
    assert "成都" in " ".join(m.content for m in store.memories(at="a1"))
