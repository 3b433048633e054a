"""Redaction through the shells: the HTTP routes and the MCP tools of a server
whose store redacts (``branchmem serve --redact mask``) store no held
identifier, in content, meta or a search's filters; an id holding one is a 422
and writes nothing."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("mcp")

from mcp import Client

from branchmem import Redactor, Store
from branchmem.server.auth import Grant, Principal
from branchmem.server.mcp_tools import build_mcp
from helpers.raw_state import stored_state
from helpers.redact_held import assert_absent, held, meta_of, stored_text
from helpers.server_fixtures import NS, assert_error, make_served

OpenStore = Callable[..., Store]


def test_http_writes_store_no_held_identifier(open_store: OpenStore) -> None:
    h = held(20)
    served = make_served(store=open_store(redactor=Redactor()))
    c, auth, base = served.client, served.h("owner"), f"{NS}/default"
    meta = meta_of(h)

    def post(path: str, body: dict[str, Any]) -> Any:
        r = c.post(f"{base}/{path}", json=body, headers=auth)
        assert r.status_code == 200, r.text
        return r.json()

    post("events", {"events": [{"id": "e1", "content": h.text, "meta": meta},
                               {"id": "e2", "parent": "e1", "meta": meta}]})  # fmt: skip
    post("branches", {"name": "main", "at": "e2"})
    post("events", {"events": [{"id": "e3", "branch": "main", "content": h.text, "meta": meta}]})
    m = post("memories", {"memories": [{"content": h.text, "sources": ["e1"], "meta": meta}]})
    post("memories", {"memories": [{"content": h.text, "branch": "main", "meta": meta}]})
    post(f"memories/{m['memories'][0]['id']}/supersede",
         {"content": h.text, "sources": ["e2"], "meta": meta})  # fmt: skip
    hits = post("search", {"query": h.text, "at": "main", "meta": {"note": h.text}})
    assert hits["hits"]
    assert_absent(stored_text(served.store), h)
    assert_absent(c.get(f"{base}/events/e1", headers=auth).text, h, "a read")
    before = stored_state(served.store)
    r = c.post(f"{base}/events", json={"events": [{"id": f"u-{h.phone}"}]}, headers=auth)
    assert h.phone not in assert_error(r, 422, "InvalidInput")["message"]
    assert stored_state(served.store) == before
    served.keys.close()


def test_mcp_tools_store_no_held_identifier(open_store: OpenStore) -> None:
    h = held(21)
    served = make_served(store=open_store(redactor=Redactor()))
    state = served.client.app.state.served  # type: ignore[attr-defined]
    mcp = build_mcp(state, principal=Principal("desk", (Grant("default", "admin"),)))

    c, k = h.text, f"contact:{h.email}"

    async def run() -> list[Any]:
        async with Client(mcp) as client:
            return [
                await client.call_tool("add_event", {"id": "e1", "content": h.text}),
                await client.call_tool("add_event", {"id": "e2", "parent": "e1"}),
                await client.call_tool("create_branch", {"name": "main", "at": "e2"}),
                await client.call_tool("add_event", {"id": "e3", "branch": "main", "content": c}),
                await client.call_tool("remember", {"content": h.text, "sources": ["e1"]}),
                await client.call_tool("remember", {"content": h.text, "branch": "main"}),
                await client.call_tool("recall", {"query": h.text, "at": "main"}),
                await client.call_tool("remember", {"content": "x", "sources": ["e1"], "key": k}),
            ]

    *ok, refused = asyncio.run(run())
    assert not any(r.is_error for r in ok), [r.content for r in ok if r.is_error]
    assert refused.is_error and "InvalidInput" in refused.content[0].text
    assert h.email not in refused.content[0].text
    assert_absent(stored_text(served.store), h)
    served.keys.close()
