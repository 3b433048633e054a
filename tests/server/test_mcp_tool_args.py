"""What a model reads of the MCP tools and gets back: every argument described,
roles, kinds and strategies as their allowed values, the caller's only
namespace as the default (and, for a caller with several, an error naming
them), the conflicts tool's memories, the per-item limits in the same words as
HTTP, and one plain line on the stdio server's stderr for a failed call."""

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
from mcp.client.stdio import StdioServerParameters, stdio_client

from branchmem import Store
from branchmem.server.auth import Grant, Principal
from branchmem.server.mcp_tools import build_mcp
from branchmem.validate import MAX_CONTENT_BYTES, MAX_PARENTS, MAX_SOURCES
from helpers.server_fixtures import NS, make_served, seed


def _server(grants: list[str], namespace: str | None = None) -> tuple[Any, Any]:
    served = make_served()
    seed(served.store, "alice")
    seed(served.store, "bob")
    who = Principal("tester", tuple(Grant.parse(g) for g in grants))
    app = served.client.app.state.served  # type: ignore[attr-defined]
    return served, build_mcp(app, namespace=namespace, principal=who)


def _calls(server: Any, *calls: tuple[str, dict[str, Any]]) -> list[Any]:
    async def run() -> list[Any]:
        async with Client(server) as c:
            return [await c.call_tool(name, args) for name, args in calls]

    return asyncio.run(run())


def _error(result: Any) -> dict[str, Any]:
    assert result.is_error
    text = result.content[0].text
    return dict(json.loads(text[text.index("{") :])["error"])


def test_every_argument_is_described_and_enums_are_listed() -> None:
    _, server = _server(["alice:write"])

    async def run() -> list[Any]:
        async with Client(server) as c:
            return list((await c.list_tools()).tools)

    tools = {t.name: t for t in asyncio.run(run())}
    for t in tools.values():
        for name, prop in t.input_schema["properties"].items():
            assert prop.get("description"), f"{t.name}({name}) has no description"
    props = tools["add_event"].input_schema["properties"]
    assert props["role"]["enum"] == ["user", "assistant", "tool", "system", "note"]
    kinds = tools["remember"].input_schema["properties"]["kind"]["enum"]
    assert kinds == ["episodic", "semantic", "procedural", "working"]
    assert tools["merge"].input_schema["properties"]["strategy"]["enum"] == [
        "append", "overwrite", "keep_both",
    ]  # fmt: skip
    assert "flag" not in (tools["conflicts"].description or "")
    assert "keep_both" in (tools["conflicts"].description or "")


def test_a_caller_with_one_namespace_needs_not_name_it() -> None:
    served, server = _server(["alice:write"])
    added, listed, bad_role = _calls(
        server,
        ("add_event", {"id": "n1", "parent": "e1", "content": "hi"}),
        ("memories", {"at": "e2"}),
        ("add_event", {"id": "n2", "role": "robot"}),
    )
    assert not added.is_error and added.structured_content["namespace"] == "alice"
    assert served.store.get_event("n1", namespace="alice").content == "hi"
    assert [m["id"] for m in listed.structured_content["memories"]] == ["m-cd"]
    assert bad_role.is_error and "robot" in bad_role.content[0].text


def test_a_caller_with_several_namespaces_is_told_to_name_one() -> None:
    _, server = _server(["alice:write", "bob:read"])
    unnamed, named = _calls(
        server, ("memories", {"at": "e2"}), ("memories", {"at": "e2", "namespace": "bob"})
    )
    err = _error(unnamed)
    assert err["type"] == "InvalidInput"
    assert "namespace=" in err["message"] and "alice" in err["message"] and "bob" in err["message"]
    assert not named.is_error


def test_an_open_server_and_a_stdio_namespace_keep_their_default() -> None:
    _, server = _server(["*:admin"])
    (added,) = _calls(server, ("add_event", {"id": "d1"}))
    assert added.structured_content["namespace"] == "default"
    _, server = _server(["alice:write", "bob:write"], namespace="bob")
    (added,) = _calls(server, ("add_event", {"id": "d2"}))
    assert added.structured_content["namespace"] == "bob"


def test_conflicts_show_the_memories_they_hold() -> None:
    served, server = _server(["alice:write"])
    s = served.store
    s.add_event("e3", parent="e2b", namespace="alice")
    s.add_memory("用户搬去杭州", sources=["e3"], key="city", id="m-hz", namespace="alice")
    s.create_branch("edit", at="e3", namespace="alice")
    s.set_branch("main", "e2", namespace="alice")
    (merged, found) = _calls(
        server,
        ("merge", {"source": "edit", "into": "main", "strategy": "keep_both"}),
        ("conflicts", {"at": "main"}),
    )
    assert merged.structured_content["conflicts"] == 1
    (c,) = found.structured_content["conflicts"]
    shown = {m["id"]: m["content"] for m in c["memories"]}
    assert shown == {"m-cd": "用户搬去成都", "m-hz": "用户搬去杭州"}
    assert sorted(c["members"]) == sorted(shown)


def test_item_limits_answer_as_over_http() -> None:
    served, server = _server(["alice:write"])
    h = served.h("alice")
    parents = [f"p{i}" for i in range(MAX_PARENTS + 1)]
    sources = [f"s{i}" for i in range(MAX_SOURCES + 1)]
    big = "a" * (MAX_CONTENT_BYTES + 1)
    cases = [
        ("add_event", {"id": "x", "parent": parents}, "events", {"id": "x", "parent": parents}),
        ("remember", {"content": "f", "sources": sources}, "memories",
         {"content": "f", "sources": sources}),
        ("add_event", {"id": "y", "content": big}, "events", {"id": "y", "content": big}),
        ("remember", {"content": big, "sources": ["e1"]}, "memories",
         {"content": big, "sources": ["e1"]}),
    ]  # fmt: skip
    results = _calls(server, *[(tool, args) for tool, args, _, _ in cases])
    for (tool, _, route, body), result in zip(cases, results, strict=True):
        r = served.client.post(f"{NS}/alice/{route}", json=body, headers=h)
        assert r.status_code == 422, r.text
        over_http = r.json()["error"]
        over_mcp = _error(result)
        assert over_mcp["type"] == over_http["type"] == "InvalidInput", tool
        assert over_mcp["message"] == over_http["message"], tool
        assert "MAX_" in over_mcp["message"]


def test_stdio_logs_one_plain_line_per_failed_call(tmp_path: Path) -> None:
    db = str(tmp_path / "mcp.db")
    with Store(db) as s:
        s.add_event("e1", namespace="alice")
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "branchmem", "mcp", "--db", db, "--namespace", "alice",
              "--embedder", "hashing"],
        env=dict(os.environ),  # this checkout's PYTHONPATH too, as the tests run
    )  # fmt: skip
    log = tmp_path / "stderr.txt"

    async def run() -> list[Any]:
        with log.open("w") as errlog:
            async with Client(stdio_client(params, errlog=errlog)) as c:
                return [
                    await c.call_tool("memories", {"at": "nowhere"}),
                    await c.call_tool("memories", {"at": "e1"}),
                ]

    bad, good = asyncio.run(run())
    assert bad.is_error and not good.is_error
    lines = [x for x in log.read_text().splitlines() if x.strip()]
    failed = [x for x in lines if "nowhere" in x]
    assert len(failed) == 1, lines
    assert failed[0].startswith("branchmem mcp: UnknownAnchor: ")
    assert not any("INFO" in x or "Traceback" in x or "│" in x for x in lines), lines
