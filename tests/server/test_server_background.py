"""The background work over HTTP and MCP: events queued for extraction, the
jobs listing, a read that waits, consolidation and the profile."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from helpers.server_fixtures import NS, assert_error, make_served

pytest.importorskip("mcp")

from mcp import Client

from branchmem.server.auth import Grant, Principal
from branchmem.server.mcp_tools import build_mcp


def test_events_queued_over_http_are_listed_then_extracted() -> None:
    s = make_served()
    h = s.h("alice")
    r = s.client.post(
        f"{NS}/alice/events?extract=true", json={"id": "e1", "content": "我对花生过敏。"}, headers=h
    )
    assert r.status_code == 200, r.text
    s.client.post(f"{NS}/alice/events", json={"id": "e2", "parent": "e1"}, headers=h)
    jobs = s.client.get(f"{NS}/alice/jobs", headers=h).json()["jobs"]
    assert [(j["tip"], j["state"]) for j in jobs] == [("e1", "queued")]
    assert_error(s.client.get(f"{NS}/bob/jobs", headers=h), 404)  # not granted
    worker = s.client.app.state.served  # type: ignore[attr-defined]
    assert worker.extraction is None  # serve --worker starts one; here a test does
    w = s.store.start_worker(poll=0.02)
    r = s.client.get(f"{NS}/alice/memories", params={"at": "e1", "wait": 10}, headers=h)
    assert w.close()
    assert [m["content"] for m in r.json()["memories"]] == ["用户对花生过敏"]
    assert s.client.get(f"{NS}/alice/jobs", headers=h).json()["jobs"] == []
    assert_error(
        s.client.get(f"{NS}/alice/memories", params={"at": "e1", "wait": 99}, headers=h), 422
    )


def test_consolidate_and_profile_over_http_and_mcp() -> None:
    s = make_served()
    s.store.add_events([{"id": "e1", "namespace": "alice"},
                        {"id": "e2", "parent": "e1", "namespace": "alice"}])  # fmt: skip
    s.store.add_memories(
        [{"content": "用户住在成都", "sources": ["e1"], "key": "city", "namespace": "alice"},
         {"content": "用户住在成都。", "sources": ["e2"], "key": "city", "namespace": "alice"}]
    )  # fmt: skip
    h = s.h("alice")
    assert s.client.get(f"{NS}/alice/profile", params={"at": "e2"}, headers=h).json()["facts"] == {}
    r = s.client.post(f"{NS}/alice/consolidate", json={"at": "e2"}, headers=h)
    assert r.status_code == 200, r.text
    done = r.json()
    assert done["merged"][0]["sources"] == ["e1", "e2"] and done["profile"] is not None
    again = s.client.post(f"{NS}/alice/consolidate", json={"at": "e2"}, headers=h).json()
    assert again["merged"] == [] and again["profile"] is None
    r = s.client.get(f"{NS}/alice/profile", params={"at": "e2"}, headers=h)
    assert r.json()["facts"] == {"city": "用户住在成都。"}
    assert_error(s.client.post(f"{NS}/alice/consolidate", json={"at": "e2"},
                               headers=s.h("reader")), 403)  # fmt: skip

    who = Principal("tester", (Grant.parse("alice:read"),))
    server = build_mcp(s.client.app.state.served, namespace="alice", principal=who)  # type: ignore[attr-defined]

    async def run() -> Any:
        async with Client(server) as c:
            return await c.call_tool("memory_profile", {"at": "e2"})

    out = asyncio.run(run())
    assert not out.is_error and out.structured_content["facts"] == {"city": "用户住在成都。"}


def test_a_served_store_with_a_worker_extracts_on_its_own_thread() -> None:
    from branchmem import Store
    from branchmem.server.served import Served
    from branchmem.server.service import Limits

    store = Store()
    served = Served(store, None, Limits(), "hashing", worker=True)
    try:
        assert served.extraction is not None and served.extraction.running()
        store.add_event("e1", content="我对花生过敏。", extract=True)
        assert [m.content for m in store.memories(at="e1", wait=10)] == ["用户对花生过敏"]
    finally:
        served.close()
    assert served.extraction is None


def test_the_worker_command_does_the_queued_jobs(tmp_path: Any, capsys: Any) -> None:
    from branchmem import Store
    from branchmem.cli import main

    db = str(tmp_path / "s.db")
    with Store(db) as store:
        store.add_event("e1", content="我对花生过敏。", extract=True)
    assert main(["worker", "--db", db, "--once"]) == 0
    assert capsys.readouterr().out.strip() == "1 done, 0 failed"
    with Store(db) as store:
        assert [m.content for m in store.memories(at="e1")] == ["用户对花生过敏"]


def test_remote_store_consolidates_and_reads_the_profile() -> None:
    from branchmem.client import RemoteStore
    from branchmem.errors import InvalidInput

    s = make_served()
    s.store.add_events([{"id": "e1", "namespace": "alice"}])
    s.store.add_event("e2", parent="e1", namespace="alice", content="我对花生过敏。", extract=True)
    s.store.add_memory("用户住在成都", sources=["e1"], key="city", namespace="alice")
    remote = RemoteStore("http://testserver", api_key=s.key["alice"], namespace="alice",
                         http_client=s.client)  # fmt: skip
    assert [(j.tip, j.state) for j in remote.pending()] == [("e2", "queued")]
    done = remote.consolidate("e2")
    assert done.profile is not None and done.profile.sources == ("e1",)
    assert remote.profile("e2").facts == {"city": "用户住在成都"}
    with pytest.raises(InvalidInput, match="branchmem serve --worker"):
        remote.start_worker()
