"""Grant patterns: names match literally, ``*`` is the one wildcard, a backslash
escapes; ``?``, ``[`` and ``]`` are refused in a new grant (standard library only)."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from functools import cache
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from branchmem import InvalidInput, NotFound
from branchmem.cli import main
from branchmem.server.auth import Grant, KeyStore, Principal, keys_path
from branchmem.server.errors import UnknownNamespace
from branchmem.server.patterns import escape, matches, split, tokens

NAMES = st.text(alphabet="ab/*?[]:\\", max_size=8)


def naive(pattern: str, name: str) -> bool:
    """The reference: a wildcard eats any number of characters, tried one by one."""
    toks = tokens(pattern)

    @cache
    def at(i: int, j: int) -> bool:
        if i == len(toks):
            return j == len(name)
        if toks[i] is None:
            return at(i + 1, j) or (j < len(name) and at(i, j + 1))
        return j < len(name) and name[j] == toks[i] and at(i + 1, j + 1)

    return at(0, 0)


@given(NAMES, NAMES)
def test_matching_agrees_with_the_naive_reference(pattern: str, name: str) -> None:
    assert matches(pattern, name) == naive(pattern, name)


@given(NAMES, NAMES)
def test_an_escaped_name_matches_itself_only(name: str, other: str) -> None:
    assert matches(escape(name), other) == (other == name)
    text = f"{escape(name)}:read" if name else "x:read"
    grant = Grant.parse(text)  # any name, escaped, is a valid new grant
    assert str(grant) == text and split(text) == [grant.namespace, "read"]


@pytest.mark.parametrize(
    ("pattern", "yes", "no"),
    [
        ("user/*", ["user/1", "user/1/a"], ["user", "userx", "user1"]),
        ("*", ["a", "user[1]", "x/y"], []),
        ("user[1]", ["user[1]"], ["user1"]),  # a grant stored before the rule: literal
        (r"user\[1\]", ["user[1]"], ["user1", "user2"]),
        (r"team\*", ["team*"], ["team", "teamx"]),
        ("a?", ["a?"], ["ab"]),
        (r"a\:b", ["a:b"], ["a\\:b"]),
    ],
)
def test_what_a_pattern_matches(pattern: str, yes: list[str], no: list[str]) -> None:
    for name in yes:
        assert matches(pattern, name), name
    for name in no:
        assert not matches(pattern, name), name


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("user[1]:admin", r"write \[ for a literal ["),
        ("user]:read", r"write \] for a literal ]"),
        ("user?:read", r"write \? for a literal ?"),
        ("team:write:branch=task/?", r"write \? for a literal ?"),
        ("a\\b:read", "escapes one of"),
        ("ab\\:read", "NAMESPACE:ROLE"),  # the escaped ':' leaves no role
    ],
)
def test_new_grants_refuse_what_is_not_a_wildcard(text: str, why: str) -> None:
    with pytest.raises(InvalidInput) as exc:
        Grant.parse(text)
    assert why in str(exc.value)


def test_a_namespace_with_a_colon_or_a_star_can_be_granted() -> None:
    g = Grant.parse(r"a\:b\*:write:branch=x\:y/*")
    assert (g.namespace, g.role, g.branch) == (r"a\:b\*", "write", r"x\:y/*")
    who = Principal("p", (g,))
    who.authorize("a:b*", "write", "x:y/1")
    for ns in ("a:bc", "a"):
        with pytest.raises(UnknownNamespace):
            who.authorize(ns, "read")


def test_a_stored_grant_with_brackets_matches_literally(tmp_path: Path) -> None:
    """A key made before the rule, whose grant ``user[1]:admin`` read as a glob,
    now reaches the namespace ``user[1]`` only."""
    keys = KeyStore(str(tmp_path / "k"))
    info, key = keys.create("old", ["x:read"])
    old = json.dumps(["user[1]:admin"])
    with closing(sqlite3.connect(tmp_path / "k")) as db, db:
        db.execute("UPDATE keys SET grants = ? WHERE id = ?", (old, info.id))
    who = keys.authenticate(key)
    assert who is not None and [str(g) for g in who.grants] == ["user[1]:admin"]
    who.authorize("user[1]", "admin")
    with pytest.raises(UnknownNamespace):
        who.authorize("user1", "read")
    assert [str(g) for g in keys.list()[0].grants] == ["user[1]:admin"]


def test_grants_say_what_they_match() -> None:
    said = {t: Grant.parse(t).describe() for t in ("al:write", "user/*:read", "*:admin")}
    assert said == {
        "al:write": "read and write namespace 'al' only",
        "user/*:read": "read namespaces matching user/* ('*': any characters, '/' included)",
        "*:admin": "read, write and administer every namespace",
    }
    narrowed = Grant.parse(r"team:write:branch=task\*").describe()
    assert narrowed == "read namespace 'team' only; write there only on branch 'task*'"


def test_keys_create_prints_what_each_grant_matches_and_refuses_globs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "mem.db")
    grants = ["--grant", "al:write", "--grant", "user/*:read"]
    assert main(["keys", "create", "--db", db, "--principal", "al", *grants]) == 0
    out = capsys.readouterr().out
    assert "  al:write: read and write namespace 'al' only\n" in out
    assert "  user/*:read: read namespaces matching user/*" in out
    bad = ["keys", "create", "--db", db, "--principal", "x", "--grant", "user[1]:admin"]
    assert main(bad) == 1
    err = capsys.readouterr().err
    assert "'[' is not a wildcard" in err and r"\[" in err
    assert [k.principal for k in KeyStore(keys_path(db)).list()] == ["al"]


def test_keys_delete_removes_every_key_of_a_principal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "mem.db")
    keys = KeyStore(keys_path(db))
    made = [keys.create(p, [f"{p}:write"]) for p in ("al", "al", "bo")]
    keys.revoke(made[1][0].id)
    assert main(["keys", "delete", "--db", db, "--principal", "al"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("deleted 2 key(s) of al: ")
    assert made[0][0].id in out and made[1][0].id in out
    assert [k.principal for k in keys.list()] == ["bo"]
    assert keys.authenticate(made[0][1]) is None
    assert keys.authenticate(made[2][1]) is not None
    assert main(["keys", "delete", "--db", db, "--principal", "al"]) == 1
    assert "no key of principal 'al'" in capsys.readouterr().err
    with pytest.raises(NotFound):
        keys.delete("nobody")


def test_the_inspector_reads_grants_as_the_server_does() -> None:
    """app.js matches a grant's namespace the same way (it decides whether the
    page offers writes); run under Node where it is installed."""
    import shutil
    import subprocess

    from branchmem.ui import STATIC_DIR

    node = shutil.which("node")
    if node is None:
        pytest.skip("needs node to run the inspector's script")
    js = (STATIC_DIR / "app.js").read_text(encoding="utf-8")
    start, end = js.index("function grantTokens"), js.index("function roleOf")
    cases = [
        (p, n)
        for p in ["user/*", "*", r"user\[1\]", "user[1]", r"a\:b*", r"t\*", "a.b", "x\\"]
        for n in ["user/1", "user", "user[1]", "user1", "a:bc", "t*", "tx", "a.b", "axb", "x\\"]
    ]
    grants = [r"a\:b:write", "t:read:branch=x/*", r"n\\:admin"]
    script = js[start:end] + (
        f"const cases = {json.dumps(cases)};\n"
        "const out = cases.map(([p, n]) => grantMatch(p, n));\n"
        f"const grants = {json.dumps(grants)}.map(splitGrant);\n"
        "const names = cases.map(([p]) => literalName(p));\n"
        "console.log(JSON.stringify([out, grants, names]));\n"
    )
    got = json.loads(
        subprocess.run([node, "-e", script], capture_output=True, text=True, check=True).stdout
    )
    assert got[0] == [matches(p, n) for p, n in cases]
    assert got[1] == [split(g) for g in grants]
    literal = [None if None in tokens(p) else "".join(t or "" for t in tokens(p)) for p, _ in cases]
    assert got[2] == literal
