"""The relation graph through the shells: ``POST .../edges``, ``GET .../graph``,
the MCP tool ``graph_neighbors`` and `RemoteStore`, grant-checked like the
neighbouring routes."""

from __future__ import annotations

import asyncio
import json

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("mcp")

from mcp import Client

from branchmem.client import RemoteStore
from branchmem.server.auth import Grant, Principal
from branchmem.server.mcp_tools import build_mcp
from helpers.server_fixtures import NS, assert_error, make_served, seed


def test_http_edges_and_graph() -> None:
    served = make_served()
    seed(served.store, "alice")
    c, auth = served.client, served.h("alice")
    base = f"{NS}/alice"
    edge = {"subject": "Alice", "predicate": "owns", "object": "auth-service", "sources": ["e2"]}
    r = c.post(f"{base}/edges", json=edge, headers=auth)
    assert r.status_code == 200, r.text
    c.post(f"{base}/edges", json={"subject": "auth-service", "predicate": "uses",
                                  "object": "jwt", "sources": ["e2"]}, headers=auth)  # fmt: skip
    g = c.get(f"{base}/graph", params={"at": "e2", "entity": "Alice", "hops": 2}, headers=auth)
    assert g.status_code == 200, g.text
    body = g.json()
    assert sorted(p["text"] for p in body["paths"]) == [
        "Alice -owns-> auth-service",
        "Alice -owns-> auth-service -uses-> jwt",
    ]
    assert len(body["edges"]) == 2
    # On the edited branch the edges are hidden: Alice names nothing there.
    assert_error(c.get(f"{base}/graph", params={"at": "e2b", "entity": "Alice"}, headers=auth),
                 404, "UnknownEntity")  # fmt: skip
    whole = c.get(f"{base}/graph", params={"at": "e2b"}, headers=auth).json()
    assert whole["edges"] == []
    assert_error(c.get(f"{base}/graph", params={"at": "e2", "entity": "Alice", "hops": 99},
                       headers=auth), 422)  # fmt: skip
    # Grants: a reader reads, may not write; another tenant sees nothing.
    rd = served.h("reader")
    assert c.get(f"{base}/graph", params={"at": "e2"}, headers=rd).status_code == 200
    r = c.post(f"{base}/edges", json={"subject": "a", "predicate": "b", "object": "c",
                                      "sources": ["e1"]}, headers=rd)  # fmt: skip
    assert_error(r, 403)
    assert c.get(f"{base}/graph", params={"at": "e2"}, headers=served.h("bob")).status_code == 404
    # Edges are records: listed with kind=edge, searched with hops.
    listed = c.get(f"{base}/memories", params={"at": "e2", "kind": "edge"}, headers=auth).json()
    assert len(listed["memories"]) == 2
    hits = c.post(f"{base}/search", json={"query": "Alice", "at": "e2", "hops": 2}, headers=auth)
    assert hits.status_code == 200, hits.text
    served.keys.close()


def test_remote_store_and_mcp() -> None:
    served = make_served()
    seed(served.store, "default")
    remote = RemoteStore(
        "http://testserver", api_key=served.key["owner"], http_client=served.client
    )
    e = remote.add_edge("Alice", "owns", "auth-service", sources=["e2"])
    assert e.subject == "Alice" and e.sources == ("e2",)
    assert remote.graph_neighbors("Alice", at="e2")["edges"][0]["id"] == e.id
    assert remote.graph_neighbors(None, at="e2b")["edges"] == []
    state = served.client.app.state.served  # type: ignore[attr-defined]
    mcp = build_mcp(state, principal=Principal("desk", (Grant("default", "admin"),)))

    async def run() -> list[object]:
        async with Client(mcp) as client:
            return [
                await client.call_tool("graph_neighbors", {"entity": "auth-service", "at": "e2"}),
                await client.call_tool("graph_neighbors", {"entity": "auth-service", "at": "e2b"}),
            ]

    ok, hidden = asyncio.run(run())
    assert not ok.is_error  # type: ignore[attr-defined]
    got = json.loads(ok.content[0].text)  # type: ignore[attr-defined]
    assert [x["subject"] for x in got["edges"]] == ["Alice"]
    assert hidden.is_error and "UnknownEntity" in hidden.content[0].text  # type: ignore[attr-defined]
    served.keys.close()
