"""Grants over HTTP and MCP: prune checks every branch it would delete, grants
match names literally, listing MCP tools needs no key but calling one does,
and a rollback honours ``expected_head``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from branchmem import InvalidInput, Store
from branchmem.server.auth import KeyStore
from helpers.server_fixtures import NS, Served, assert_error, open_served


@pytest.fixture
def served() -> Iterator[Served]:
    yield from open_served()


def _branches(s: Served) -> list[str]:
    return [b.name for b in s.store.branches(namespace="alice", count=False)]


def _prune(s: Served, key: str, prefix: str) -> Any:
    body = {"prefix": prefix, "older_than": 0, "now": 1e12}
    return s.client.post(f"{NS}/alice/prune", json=body, headers={"X-API-Key": key})


@pytest.mark.parametrize("prefix", ["task", "task/"])
def test_prune_with_a_narrowed_key_deletes_only_what_it_may_write(
    served: Served, prefix: str
) -> None:
    for name in ("task", "task/a", "task/x"):
        served.store.create_branch(name, at="e1", namespace="alice")
    r = _prune(served, served.key["tasks"], prefix)  # alice:write:branch=task/*
    assert r.status_code == 200, r.text
    assert r.json()["ids"] == ["task/a", "task/x"]
    assert _branches(served) == ["main", "task"]


def test_prune_refuses_the_whole_call_if_one_branch_is_not_granted(served: Served) -> None:
    for name in ("task/a1", "task/a2", "task/x"):
        served.store.create_branch(name, at="e1", namespace="alice")
    _, key = served.keys.create("narrow", ["alice:write:branch=task/a*"])
    before = _branches(served)
    err = assert_error(_prune(served, key, "task"), 403, "Forbidden")
    assert "'task/x'" in str(err["message"])
    assert _branches(served) == before
    # Only what the grant covers: a narrower prefix succeeds.
    served.store.delete_branch("task/x", namespace="alice")
    assert _prune(served, key, "task").json()["ids"] == ["task/a1", "task/a2"]
    assert_error(_prune(served, served.key["reader"], "task"), 403, "Forbidden")
    assert_error(_prune(served, served.key["bob"], "task"), 404, "UnknownNamespace")


def test_a_bracket_grant_is_refused_and_a_literal_one_reaches_one_namespace(
    served: Served,
) -> None:
    with pytest.raises(InvalidInput, match="not a wildcard"):
        served.keys.create("mallory", ["user[1]:admin"])
    for ns in ("user1", "user[1]"):
        served.store.add_event("e1", content=ns, namespace=ns)
    _, key = served.keys.create("p", [r"user\[1\]:read"])
    h = {"X-API-Key": key}
    r = served.client.get(f"{NS}/user[1]/events/e1", headers=h)
    assert r.status_code == 200 and r.json()["content"] == "user[1]"
    assert_error(served.client.get(f"{NS}/user1/events/e1", headers=h), 404, "UnknownNamespace")
    me = served.client.get("/v1/me", headers=h).json()
    assert me["grants"] == [r"user\[1\]:read"]


def test_rollback_honours_expected_head(served: Served) -> None:
    h = served.h("alice")
    served.store.set_branch("main", "e2", namespace="alice")
    body = {"branch": "main", "to": "v1", "expected_head": "e1"}
    err = assert_error(served.client.post(f"{NS}/alice/rollback", json=body, headers=h), 409)
    assert err["type"] == "BranchConflict" and err["detail"]["actual"] == "e2"
    assert served.store.branch_head("main", namespace="alice") == "e2"
    body["expected_head"] = "e2"
    r = served.client.post(f"{NS}/alice/rollback", json=body, headers=h)
    assert r.status_code == 200 and r.json()["head"] == "e1"


# --------------------------------------------------------------------- MCP
def _rpc(client: Any, method: str, params: dict[str, Any], key: str | None) -> dict[str, Any]:
    headers = {"Accept": "application/json, text/event-stream"}
    if key is not None:
        headers["Authorization"] = f"Bearer {key}"
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    r = client.post("/mcp", json=body, headers=headers)
    assert r.status_code == 200, r.text
    data = [line[5:] for line in r.text.splitlines() if line.startswith("data:")]
    return dict(json.loads(data[-1])["result"])


def test_mcp_lists_tools_without_a_key_but_calls_none() -> None:
    pytest.importorskip("mcp")
    from fastapi.testclient import TestClient

    from branchmem.server.app import create_app

    keys = KeyStore(None)
    _, key = keys.create("al", ["al:write"])
    with Store() as store:
        app = create_app(store, keys, embedder="hashing")
        with TestClient(app) as client:
            listed = _rpc(client, "tools/list", {}, None)
            assert {"add_event", "remember", "recall"} <= {t["name"] for t in listed["tools"]}
            call = {"name": "add_event", "arguments": {"id": "e1", "namespace": "al"}}
            refused = _rpc(client, "tools/call", call, None)
            assert refused["isError"] and '"type": "Unauthorized"' in refused["content"][0]["text"]
            assert store.events(namespace="al") == []
            done = _rpc(client, "tools/call", call, key)
            assert not done["isError"] and done["structuredContent"]["id"] == "e1"
    keys.close()
