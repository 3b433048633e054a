"""Keys, grants and principals (standard library only), and the CLI's key commands."""

from __future__ import annotations

from pathlib import Path

import pytest

from branchmem import InvalidInput, NotFound
from branchmem.cli import main
from branchmem.server.auth import Grant, KeyStore, Principal, keys_path
from branchmem.server.errors import Forbidden, UnknownNamespace, from_payload, to_payload


@pytest.mark.parametrize(
    "text", ["alice", "alice:owner", ":read", "a:write:task/*", "a:write:branch=", "a:b:c:d", ""]
)
def test_bad_grants_say_what_to_pass(text: str) -> None:
    with pytest.raises(InvalidInput, match="NAMESPACE:ROLE"):
        Grant.parse(text)


def test_grants_round_trip() -> None:
    for text in ("alice:write", "shared:read", "team:write:branch=task/*", "*:admin"):
        assert str(Grant.parse(text)) == text


def test_roles_are_ordered_and_branches_narrow_writes() -> None:
    who = Principal("p", (Grant.parse("a:read"), Grant.parse("t:write:branch=task/*")))
    who.authorize("a", "read")
    with pytest.raises(Forbidden):
        who.authorize("a", "write")
    who.authorize("t", "read")
    who.authorize("t", "write", "task/x")
    for branch in ("main", None):
        with pytest.raises(Forbidden, match="task/"):
            who.authorize("t", "write", branch)
    with pytest.raises(Forbidden):
        who.authorize("t", "admin", "task/x")
    for ns in ("b", "tt", "task"):
        with pytest.raises(UnknownNamespace):
            who.authorize(ns, "read")
    Principal("root", (Grant.parse("*:admin"),)).authorize("anything", "admin", None)


def test_keystore(tmp_path: Path) -> None:
    keys = KeyStore(str(tmp_path / "k"))
    info, key = keys.create("alice", ["alice:write"])
    assert key.startswith(f"bm_{info.id}_")
    assert keys.authenticate(key) == Principal("alice", (Grant("alice", "write"),))
    for bad in ("", "bm_x", key + "x", key.replace(info.id, "0" * 12), "nope"):
        assert keys.authenticate(bad) is None
    keys.revoke(info.id)
    assert keys.authenticate(key) is None
    assert keys.list()[0].revoked_at is not None
    with pytest.raises(NotFound):
        keys.revoke("nope")
    with pytest.raises(InvalidInput):
        keys.create("alice", [])
    with pytest.raises(InvalidInput):
        keys.create("", ["a:read"])


def test_error_payload_round_trip() -> None:
    exc = UnknownNamespace("bob")
    back = from_payload(to_payload(exc), 404)
    assert type(back) is UnknownNamespace and str(back) == str(exc)
    assert back.namespace == "bob"  # type: ignore[attr-defined]
    unknown = from_payload({"error": {"type": "Nope", "message": "m", "detail": {}}}, 404)
    assert type(unknown) is NotFound
    assert "without an error body" in str(from_payload(None, 502))


def test_keys_commands(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = str(tmp_path / "mem.db")
    assert main(["keys", "create", "--db", db, "--principal", "al", "--grant", "al:write"]) == 0
    key = capsys.readouterr().out.strip().splitlines()[-1]
    assert KeyStore(keys_path(db)).authenticate(key) is not None
    assert main(["keys", "list", "--db", db]) == 0
    kid = capsys.readouterr().out.split("\t")[0]
    assert main(["keys", "revoke", "--db", db, kid]) == 0
    assert main(["keys", "revoke", "--db", db, "nope"]) == 1
    assert main(["keys", "create", "--db", db, "--principal", "al", "--grant", "al"]) == 1
    assert "NAMESPACE:ROLE" in capsys.readouterr().err


def test_no_auth_only_on_loopback(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("uvicorn")
    db = str(tmp_path / "mem.db")
    assert main(["serve", "--db", db, "--no-auth", "--host", "0.0.0.0"]) == 1
    assert "loopback" in capsys.readouterr().err
