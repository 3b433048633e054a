"""Bad input at the command line: one `error:` line and exit status 1, never a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from branchbench.cli import main as bench_main
from branchmem import Store
from branchmem.cli import main
from helpers.chatgpt_shape import conversation


@pytest.fixture
def db(tmp_path: Path) -> str:
    path = tmp_path / "s.db"
    with Store(path) as store:
        store.add_event("e1", content="我对花生过敏")
        store.add_memory("用户对花生过敏", sources=["e1"])
    return str(path)


def _fails(argv: list[str], capsys: pytest.CaptureFixture[str], *, bench: bool = False) -> str:
    # branchbench answers a bad folder or file with status 2
    assert (bench_main if bench else main)(argv) == (2 if bench else 1)
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err


def test_a_folder_as_db_is_called_a_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    err = _fails(["search", "x", "--db", str(tmp_path), "--at", "e1"], capsys)
    assert "folder" in err and "does not exist" not in err


def test_a_folder_as_log_is_an_error(
    db: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    err = _fails(["search", "花生", "--db", db, "--at", "e1", "--log", str(tmp_path)], capsys)
    assert "query log" in err


def test_a_query_that_is_not_utf8(db: str, capsys: pytest.CaptureFixture[str]) -> None:
    # what Python makes of a non-UTF-8 argument on a UTF-8 system
    err = _fails(["search", "caf\udce9", "--db", db, "--at", "e1"], capsys)
    assert "UTF-8" in err


def test_an_input_file_that_is_not_utf8(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "set.jsonl"
    f.write_bytes(b'{"query": "caf\xe9"}\n')
    err = _fails(["eval", "recall", str(f)], capsys)
    assert "UTF-8" in err


def test_meta_that_is_broken_json(db: str, capsys: pytest.CaptureFixture[str]) -> None:
    err = _fails(["search", "花生", "--db", db, "--at", "e1", "--meta", "tags=[1,"], capsys)
    assert "not valid JSON" in err


def test_bench_run_on_a_missing_folder_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "nope"
    err = _fails(["run", "--scenarios", str(missing), "--out", str(tmp_path / "o")], capsys,
                 bench=True)  # fmt: skip
    assert "does not exist" in err and "MANIFEST" not in err


def test_bench_freeze_names_the_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert bench_main(["freeze", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "<folder>" not in out and str(tmp_path) in out


def test_an_import_that_skips_every_item_fails_and_leaves_no_store_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = Path(__file__).parents[1] / "data" / "importers"
    new = tmp_path / "new.db"
    # An Open WebUI export read as ChatGPT: every chat is skipped.
    args = ["import", str(data / "openwebui.json"), "--format", "chatgpt", "--db", str(new)]
    assert main(args) == 1
    err = capsys.readouterr().err
    assert "nothing was imported" in err and "--format" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == []
    assert main([*args, "--json"]) == 1
    assert not new.exists()
    # Into an existing store, the store stays (with what it held) and the exit is 1.
    with Store(new) as store:
        store.add_event("e1", content="kept")
    assert main(args) == 1
    with Store(new) as store:
        assert store.get_event("e1").content == "kept"
    # The same file in its own format imports.
    assert main(["import", str(data / "openwebui.json"), "--db", str(new)]) == 0


@pytest.mark.parametrize(
    "content",
    [b"{bad", b"[{bad", b"not json at all", b'{"neither": "a known format"}', b"\xff\xfe"],
)
def test_a_bad_export_leaves_no_store_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes
) -> None:
    bad = tmp_path / "export.json"
    bad.write_bytes(content)
    new = tmp_path / "new.db"
    _fails(["import", str(bad), "--db", str(new)], capsys)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["export.json"]


def test_a_missing_export_or_bad_namespace_leaves_no_store_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = tmp_path / "conversations.json"
    conv = conversation("c1", {"m1": None}, "m1")
    good.write_text(json.dumps([conv]), encoding="utf-8")
    new = tmp_path / "new.db"
    _fails(["import", str(tmp_path / "missing.json"), "--db", str(new)], capsys)
    _fails(["import", str(good), "--db", str(new), "--namespace", ""], capsys)
    assert not new.exists()
    assert main(["import", str(good), "--db", str(new)]) == 0  # a good one makes it
    assert new.exists()


@pytest.mark.parametrize("json_flag", [[], ["--json"]])
def test_an_empty_export_exits_1_and_leaves_no_store_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], json_flag: list[str]
) -> None:
    empty = tmp_path / "e.json"
    empty.write_text("[]\n", encoding="utf-8")
    assert main(["import", str(empty), "--db", str(tmp_path / "t.db"), *json_flag]) == 1
    assert "no conversations" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["e.json"]


@pytest.mark.parametrize(
    "argv",
    [
        ["--principal", "alice", "--grant", "bogus"],
        ["--principal", "alice", "--grant", "alice:write", "--grant", "x:owner"],
        ["--principal", "alice"],  # no grant at all
        ["--principal", "a:b", "--grant", "alice:write"],
    ],
)
def test_a_bad_key_leaves_no_keys_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    db = tmp_path / "s.db"
    _fails(["keys", "create", "--db", str(db), *argv], capsys)
    assert list(tmp_path.iterdir()) == []
    good = ["--principal", "alice", "--grant", "a:read"]
    assert main(["keys", "create", "--db", str(db), *good]) == 0
    assert (tmp_path / "s.db.keys").exists()
