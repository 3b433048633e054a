"""`branchmem serve`, `mcp` and `keys` on what a new user tries first: a
PostgreSQL URL as `--db`, a keys file that cannot be made, a missing extra.
One `error:` line and exit status 1, never a traceback."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from branchmem.cli import main

URL = "postgresql://app@db.invalid:5432/memory"  # never connected to: keys need no store
GOOD = ["--principal", "alice", "--grant", "alice:write"]


def _fails(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.startswith("branchmem: error: ")
    return err


@pytest.mark.parametrize("action", [["create", *GOOD], ["list"], ["revoke", "abc"]])
def test_keys_of_a_url_store_ask_for_a_keys_file(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    action: list[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    err = _fails(["keys", action[0], "--db", URL, *action[1:]], capsys)
    assert "--keys FILE" in err and "app@db" not in err  # the URL may hold a password
    assert list(tmp_path.iterdir()) == []


def test_keys_of_a_url_store_live_in_the_named_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    keys = tmp_path / "alice.keys"
    assert main(["keys", "create", "--db", URL, "--keys", str(keys), *GOOD]) == 0
    key_id = capsys.readouterr().out.splitlines()[-1].split("_")[1]
    assert keys.stat().st_mode & 0o777 == 0o600
    assert main(["keys", "list", "--db", URL, "--keys", str(keys)]) == 0
    assert capsys.readouterr().out.startswith(f"{key_id}\talice\tactive")
    assert main(["keys", "revoke", "--db", URL, "--keys", str(keys), key_id]) == 0
    assert main(["keys", "list", "--db", str(tmp_path / "s.db"), "--keys", str(keys)]) == 0
    assert "\trevoked\t" in capsys.readouterr().out


def test_a_keys_file_that_cannot_be_made_is_one_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "no" / "such" / "folder" / "s.db"
    err = _fails(["keys", "create", "--db", str(missing), *GOOD], capsys)
    assert "keys file" in err


@pytest.mark.parametrize("command", [["serve"], ["mcp"]])
def test_serving_without_the_server_extra_names_it(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    command: list[str],
) -> None:
    monkeypatch.setitem(sys.modules, "uvicorn", None)  # as if not installed
    db = tmp_path / "s.db"
    err = _fails([*command, "--db", str(db)], capsys)
    assert "branchmem[server]" in err
    assert list(tmp_path.iterdir()) == []  # nothing made before the check


def test_serve_does_not_print_a_urls_password(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import uvicorn

    from branchmem import Store
    from branchmem.cli import serve as cli_serve

    served: list[object] = []
    monkeypatch.setattr(cli_serve, "_open", lambda args: Store())  # no server needed
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: served.append(app))
    keys = str(tmp_path / "k.keys")
    url = "postgresql://app:s3cret-pw@db.invalid:5432/memory"
    assert main(["serve", "--db", url, "--keys", keys, "--port", "0"]) == 0
    err = capsys.readouterr().err
    assert served and "serving postgresql://app:***@db.invalid" in err and "s3cret" not in err


def test_serve_says_when_it_made_the_store(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import uvicorn

    from branchmem import Store

    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: None)  # no socket
    keys = str(tmp_path / "k.keys")
    typo = tmp_path / "mem.bd"
    assert main(["serve", "--db", str(typo), "--keys", keys, "--port", "0"]) == 0
    err = capsys.readouterr().err
    assert typo.exists() and err.count("made a new, empty one") == 1  # once, not per worker
    assert f"no store at {str(typo)!r}" in err and "check --db" in err
    there = tmp_path / "mem.db"
    Store(there).close()
    assert main(["serve", "--db", str(there), "--keys", keys, "--port", "0"]) == 0
    assert "made a new" not in capsys.readouterr().err


@pytest.mark.parametrize("port", ["99999", "-1", "taken"])
def test_serve_refuses_a_bad_or_taken_port_before_saying_serving(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], port: str
) -> None:
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        if port == "taken":
            port = str(busy.getsockname()[1])
        keys = str(tmp_path / "k.keys")
        err = _fails(
            ["serve", "--db", str(tmp_path / "m.db"), "--keys", keys, "--port", port], capsys
        )
    assert "serving" not in err and err.count("\n") == 1 and "--port" in err
    assert list(tmp_path.iterdir()) == []  # nothing made before the check
