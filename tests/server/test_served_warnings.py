"""A write naming parents or sources that are not in the tree is accepted and
says so at every door: HTTP answers with ``warnings`` beside what it stored, an
MCP tool's output (and so its text) carries them, and the server issues none
to its own `warnings` (each call gets its own)."""

from __future__ import annotations

import asyncio
import json
import warnings
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("fastapi")

from branchmem import BranchmemWarning
from helpers.server_fixtures import NS, Served, open_served


@pytest.fixture
def served() -> Iterator[Served]:
    yield from open_served()


def _post(served: Served, path: str, body: dict[str, Any]) -> dict[str, Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("error", BranchmemWarning)  # none reaches the server's own
        r = served.client.post(f"{NS}/alice/{path}", json=body, headers=served.h("alice"))
    assert r.status_code == 200, r.text
    return dict(r.json())


def test_http_events_and_memories_say_what_waits(served: Served) -> None:
    out = _post(served, "events", {"id": "c1", "parent": "nowhere", "content": "hi"})
    assert out["events"][0]["id"] == "c1"
    (w,) = out["warnings"]
    assert (w["warning"], w["ids"], w["unknown"]) == ("UnknownParents", ["c1"], ["nowhere"])
    assert "'nowhere'" in w["message"] and w["namespace"] == "alice"

    out = _post(served, "memories", {"content": "fact", "sources": ["e1", "ghost"], "id": "mg"})
    (w,) = out["warnings"]
    assert (w["warning"], w["ids"], w["unknown"]) == ("UnknownSources", ["mg"], ["ghost"])
    r = served.client.get(f"{NS}/alice/memories/mg/explain?at=e1", headers=served.h("alice"))
    assert "source 'ghost' has not arrived" in r.json()["reason"]


def test_http_known_ids_answer_an_empty_list(served: Served) -> None:
    assert _post(served, "events", {"id": "c2", "parent": "e2"})["warnings"] == []
    assert _post(served, "memories", {"content": "f", "sources": ["c2"]})["warnings"] == []


def test_http_retract_and_supersede_warn(served: Served) -> None:
    out = _post(served, "memories/m-cd/retract", {"sources": ["later"]})
    assert out["target"] == "m-cd" and out["warnings"][0]["unknown"] == ["later"]
    out = _post(served, "memories/m-old/supersede", {"content": "new", "sources": ["later2"]})
    assert out["content"] == "new" and out["warnings"][0]["unknown"] == ["later2"]


def test_mcp_tools_carry_the_warnings_in_their_text(served: Served) -> None:
    pytest.importorskip("mcp")
    from mcp import Client

    from branchmem.server.auth import Grant, Principal
    from branchmem.server.mcp_tools import build_mcp

    app = served.client.app.state.served  # type: ignore[attr-defined]
    who = Principal("tester", (Grant.parse("alice:write"),))
    server = build_mcp(app, namespace="alice", principal=who)

    async def run() -> tuple[Any, Any, Any]:
        async with Client(server) as c:
            ev = await c.call_tool("add_event", {"id": "m1", "parent": "lost"})
            mem = await c.call_tool("remember", {"content": "f", "sources": ["lost2"]})
            fine = await c.call_tool("add_event", {"id": "m2", "parent": "e1"})
            return ev, mem, fine

    ev, mem, fine = asyncio.run(run())
    for result, missing in ((ev, "'lost'"), (mem, "'lost2'")):
        assert not result.is_error
        (said,) = result.structured_content["warnings"]
        assert missing in said and "hidden" in said
        assert missing in json.loads(result.content[0].text)["warnings"][0]
    assert "warnings" not in fine.structured_content
