"""The MCP branch and tree tools through the official `mcp` client: in
process (grant checks, structured output), over streamable HTTP against a
real `branchmem serve`, and over stdio against `branchmem mcp`."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

from mcp import Client
from mcp.client.stdio import StdioServerParameters

from branchmem import Store
from branchmem.server.auth import Grant, Principal
from branchmem.server.mcp_tools import build_mcp
from helpers.server_fixtures import make_served

BRANCH_TOOLS = {"create_branch", "merge", "snapshot", "rollback", "diff", "conflicts", "resolve"}
TREE_TOOLS = {"children", "siblings", "versions"}


def _ok(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content
    return dict(result.structured_content)


def _err(result: Any) -> dict[str, Any]:
    assert result.is_error
    text = result.content[0].text
    return dict(json.loads(text[text.index("{") :])["error"])


def _seed(store: Store) -> None:
    store.add_events(
        [
            {"id": "e1", "namespace": "alice"},
            {"id": "e2", "parent": "e1", "namespace": "alice"},
            {"id": "e2b", "parent": "e1", "namespace": "alice"},
        ]
    )
    store.add_memory("住在成都", sources=["e2"], key="city", namespace="alice")
    store.add_memory("住在杭州", sources=["e2b"], key="city", namespace="alice")
    store.create_branch("main", at="e2", namespace="alice")
    store.create_branch("task/a", at="e2b", namespace="alice")


@pytest.fixture
def writer() -> Any:
    served = make_served()
    _seed(served.store)
    return served


def _server(served: Any, grants: list[str]) -> Any:
    from fastapi.testclient import TestClient

    app = served.client.app if isinstance(served.client, TestClient) else None
    assert app is not None
    who = Principal("tester", tuple(Grant.parse(g) for g in grants))
    return build_mcp(app.state.served, namespace="alice", principal=who)


def test_branch_tools_in_process(writer: Any) -> None:
    server = _server(writer, ["alice:write"])

    async def run() -> dict[str, Any]:
        async with Client(server) as c:
            names = {t.name for t in (await c.list_tools()).tools}
            out = {"names": names}
            out["snap"] = await c.call_tool("snapshot", {"branch": "main", "name": "v1"})
            out["merge"] = await c.call_tool(
                "merge", {"source": "task/a", "into": "main", "strategy": "keep_both"}
            )
            out["conflicts"] = await c.call_tool("conflicts", {"at": "main"})
            out["diff"] = await c.call_tool("diff", {"a": "e2", "b": "e2b"})
            out["versions"] = await c.call_tool("versions", {"event_id": "e2b"})
            out["children"] = await c.call_tool("children", {"event_id": "e1", "limit": 1})
            out["roots"] = await c.call_tool("children", {})
            out["siblings"] = await c.call_tool("siblings", {"event_id": "e2"})
            conflict = out["conflicts"].structured_content["conflicts"][0]
            keep = conflict["members"][0]
            out["resolve"] = await c.call_tool(
                "resolve", {"conflict_id": conflict["id"], "keep": keep, "branch": "main"}
            )
            out["rollback"] = await c.call_tool("rollback", {"branch": "main", "to": "v1"})
            out["bad_strategy"] = await c.call_tool(
                "merge", {"source": "task/a", "into": "main", "strategy": "newest"}
            )
            return out

    out = asyncio.run(run())
    assert out["names"] >= BRANCH_TOOLS | TREE_TOOLS
    assert _ok(out["snap"])["event"] == "e2"
    merged = _ok(out["merge"])
    assert merged["conflicts"] == 1 and merged["strategy"] == "keep_both"
    assert len(_ok(out["conflicts"])["conflicts"]) == 1
    d = _ok(out["diff"])
    assert d["fork_point"] == "e1"
    assert [m["content"] for m in d["only_a"]] == ["住在成都"]
    assert [m["content"] for m in d["only_b"]] == ["住在杭州"]
    assert _ok(out["versions"]) == {
        "id": "e2b", "position": 2, "count": 2, "previous": "e2", "next": None,
    }  # fmt: skip
    kids = _ok(out["children"])
    assert [e["id"] for e in kids["events"]] == ["e2"] and kids["cursor"]
    assert [e["id"] for e in _ok(out["roots"])["events"]] == ["e1"]
    assert [e["id"] for e in _ok(out["siblings"])["events"]] == ["e2", "e2b"]
    assert _ok(out["resolve"])["id"]
    assert _ok(out["rollback"])["head"] == "e2"
    assert out["bad_strategy"].is_error
    store = writer.store
    assert store.branch_head("main", namespace="alice") == "e2"
    assert [a.actor for a in store.audit("alice")][-1] == "tester"


def test_each_tool_checks_the_grants(writer: Any) -> None:
    # Writes only on task/*: reads pass, writes on main are refused, as on HTTP.
    server = _server(writer, ["alice:write:branch=task/*"])
    reader = _server(writer, ["alice:read"])
    stranger = _server(writer, ["bob:write"])

    async def calls(srv: Any) -> dict[str, Any]:
        async with Client(srv) as c:
            return {
                "merge_main": await c.call_tool("merge", {"source": "e2b", "into": "main"}),
                "snap_main": await c.call_tool("snapshot", {"branch": "main", "name": "s"}),
                "rollback_main": await c.call_tool("rollback", {"branch": "main", "to": "e1"}),
                "snap_task": await c.call_tool("snapshot", {"branch": "task/a", "name": "t"}),
                "diff": await c.call_tool("diff", {"a": "e2", "b": "e2b"}),
                "versions": await c.call_tool("versions", {"event_id": "e2"}),
                "conflicts": await c.call_tool("conflicts", {"at": "main"}),
            }

    narrow = asyncio.run(calls(server))
    for name in ("merge_main", "snap_main", "rollback_main"):
        assert _err(narrow[name])["type"] == "Forbidden", name
    for name in ("snap_task", "diff", "versions", "conflicts"):
        _ok(narrow[name])
    read_only = asyncio.run(calls(reader))
    assert _err(read_only["snap_task"])["type"] == "Forbidden"
    _ok(read_only["diff"])
    other = asyncio.run(calls(stranger))
    for name, result in other.items():
        err = _err(result)
        assert err["type"] == "UnknownNamespace", name
        # No headers (as over stdio): no keys to list; it names whom it acts as.
        assert "keys list" not in err["message"] and "'tester'" in err["message"]


def test_branch_tools_over_stdio(tmp_path: Path) -> None:
    db = str(tmp_path / "mcp.db")
    with Store(db) as s:
        _seed(s)
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "branchmem", "mcp", "--db", db, "--namespace", "alice",
              "--embedder", "hashing", "--principal", "desk"],
        env=dict(os.environ),  # this checkout's PYTHONPATH too, as the tests run
    )  # fmt: skip

    async def run() -> list[Any]:
        async with Client(params) as c:
            return [
                await c.call_tool("snapshot", {"branch": "main", "name": "v1"}),
                await c.call_tool("merge", {"source": "task/a", "into": "main"}),
                await c.call_tool("diff", {"a": "e2", "b": "main"}),
                await c.call_tool("versions", {"event_id": "e2"}),
                await c.call_tool("memories", {"at": "e1", "namespace": "bob"}),
            ]

    snap, merged, d, v, other = asyncio.run(run())
    assert _ok(snap)["name"] == "v1"
    assert _ok(merged)["into"] == "main"
    assert [m["content"] for m in _ok(d)["only_b"]] == ["住在杭州"] and _ok(d)["only_a"] == []
    assert _ok(v)["count"] == 2
    err = _err(other)
    assert err["type"] == "UnknownNamespace" and "keys list" not in err["message"]


def test_branch_tools_over_http(tmp_path: Path) -> None:

    httpx2 = pytest.importorskip("httpx2")
    pytest.importorskip("uvicorn")
    from mcp.client.streamable_http import streamable_http_client
    from test_server_e2e import _cli

    from helpers.serve_proc import serving

    db = str(tmp_path / "mem.db")
    with Store(db) as s:
        _seed(s)
    task = _cli("keys", "create", "--db", db, "--principal", "t", "--grant",
                "alice:write:branch=task/*").strip().splitlines()[-1]  # fmt: skip
    with serving(["--db", db, "--embedder", "hashing"], tmp_path) as (url,):

        async def run() -> list[Any]:
            http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {task}"})
            transport = streamable_http_client(f"{url}/mcp", http_client=http)
            async with http, Client(transport) as c:
                return [
                    await c.call_tool(
                        "merge", {"source": "e2", "into": "main", "namespace": "alice"}
                    ),
                    await c.call_tool(
                        "merge", {"source": "main", "into": "task/a", "namespace": "alice"}
                    ),
                    await c.call_tool("diff", {"a": "main", "b": "task/a", "namespace": "alice"}),
                    await c.call_tool("siblings", {"event_id": "e2b", "namespace": "alice"}),
                ]

        refused, merged, d, sib = asyncio.run(run())
    assert _err(refused)["type"] == "Forbidden"
    assert _ok(merged)["into"] == "task/a"
    assert [m["content"] for m in _ok(d)["only_b"]] == ["住在杭州"] and _ok(d)["only_a"] == []
    assert [e["id"] for e in _ok(sib)["events"]] == ["e2", "e2b"]


def test_tools_are_described_without_source_indentation(writer: Any) -> None:
    import inspect

    from branchmem import __version__

    server = _server(writer, ["alice:write"])

    async def run() -> tuple[Any, list[Any]]:
        async with Client(server) as c:
            return c.server_info, (await c.list_tools()).tools

    info, tools = asyncio.run(run())
    assert info.version == __version__
    assert len(tools) > len(BRANCH_TOOLS | TREE_TOOLS)
    for t in tools:
        assert t.description and t.description == inspect.cleandoc(t.description), t.name
        assert "\n    " not in t.description, t.name
