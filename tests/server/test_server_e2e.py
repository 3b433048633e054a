"""The real thing: `branchmem serve` as a process on a free loopback port, MCP
over streamable HTTP at /mcp with the same keys, and `branchmem mcp` over stdio,
each driven by the official clients."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("uvicorn")
pytest.importorskip("mcp")

import httpx
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from branchmem import Store
from branchmem.client import RemoteStore
from branchmem.server.errors import UnknownNamespace

SERVE = [sys.executable, "-m", "branchmem", "serve"]
STDIO_OPTS = ["--embedder", "hashing", "--principal", "desk", "--redact", "mask"]


def _cli(*args: str) -> str:
    out = subprocess.run(
        [sys.executable, "-m", "branchmem", *args], capture_output=True, text=True, check=True
    )
    return out.stdout


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    db = str(tmp_path_factory.mktemp("serve") / "mem.db")
    alice = _cli("keys", "create", "--db", db, "--principal", "alice", "--grant", "alice:write")
    bob = _cli("keys", "create", "--db", db, "--principal", "bob", "--grant", "bob:write")
    port = _free_port()
    log = Path(db).with_suffix(".log")  # a file, not a pipe: a full pipe would stall the server
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [*SERVE, "--db", db, "--port", str(port), "--embedder", "hashing"],
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"server did not start: {log.read_text()}")
            time.sleep(0.2)
        yield {
            "url": url,
            "db": db,
            "alice": alice.strip().splitlines()[-1],
            "bob": bob.strip().splitlines()[-1],
        }
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_keys_are_stored_only_as_hashes(server: dict[str, Any]) -> None:
    path = Path(server["db"] + ".keys")
    assert os.stat(path).st_mode & 0o777 == 0o600
    secret = server["alice"].split("_", 2)[2]
    assert secret.encode() not in path.read_bytes()
    listed = _cli("keys", "list", "--db", server["db"])
    assert "alice" in listed and secret not in listed


def test_remote_store_over_a_real_socket(server: dict[str, Any]) -> None:
    with RemoteStore(server["url"], api_key=server["alice"], namespace="alice") as store:
        store.add_event("e1", parent=None, role="user", content="你好")
        store.add_event("e2", parent="e1", content="我下个月搬去成都。")
        fact = store.add_memory("用户下个月搬去成都", sources=["e2"])
        store.add_event("e2b", parent="e1", content="我下个月搬去杭州。")
        assert store.memories(at="e2") == [fact]
        assert store.memories(at="e2b") == []
        with pytest.raises(UnknownNamespace):
            store.memories(at="e1", namespace="bob")
    spec = httpx.get(f"{server['url']}/openapi.json").json()
    assert "/v1/namespaces/{namespace}/search" in spec["paths"]


def _tool(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content
    return dict(result.structured_content)


def test_mcp_over_http_uses_the_same_keys(server: dict[str, Any]) -> None:
    from mcp.client.streamable_http import streamable_http_client

    httpx2 = pytest.importorskip("httpx2")

    async def run(key: str) -> tuple[list[str], Any, Any]:
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"})
        transport = streamable_http_client(f"{server['url']}/mcp", http_client=http)
        async with http, Client(transport) as client:
            names = [t.name for t in (await client.list_tools()).tools]
            # No namespace: the key's only one (bob), not "default".
            added = await client.call_tool("add_event", {"id": "m1", "content": "我对花生过敏"})
            other = await client.call_tool("memories", {"at": "e1", "namespace": "alice"})
            return names, added, other

    names, added, other = asyncio.run(run(server["bob"]))
    assert {"add_event", "remember", "recall", "memories", "explain"} <= set(names)
    assert {"branches", "create_branch", "context"} <= set(names)
    assert _tool(added)["namespace"] == "bob"
    assert other.is_error and "UnknownNamespace" in other.content[0].text
    with RemoteStore(server["url"], api_key=server["bob"], namespace="bob") as store:
        assert store.get_event("m1").content == "我对花生过敏"
    with Store(server["db"], create=False) as store:
        assert [(a.op, a.actor) for a in store.audit("bob")] == [("add_events", "bob")]
    _, refused, _ = asyncio.run(run("bm_000000000000_not-a-key"))
    assert refused.is_error and '"type": "Unauthorized"' in refused.content[0].text


def test_mcp_over_stdio(tmp_path: Path) -> None:
    db = str(tmp_path / "mcp.db")
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "branchmem", "mcp", "--db", db, "--namespace", "alice", *STDIO_OPTS],
    )

    async def run() -> list[Any]:
        async with Client(params) as client:
            out = [
                await client.call_tool(
                    "add_event", {"id": "e1", "content": "我对花生过敏。手机13812345678"}
                ),
                await client.call_tool("add_event", {"id": "e2", "parent": "e1"}),
                await client.call_tool("add_event", {"id": "e2b", "parent": "e1"}),
                await client.call_tool(
                    "remember", {"content": "用户对花生过敏", "sources": ["e2"], "key": "allergy"}
                ),
                await client.call_tool("recall", {"query": "花生", "at": "e2"}),
                await client.call_tool("memories", {"at": "e2b"}),
                await client.call_tool("create_branch", {"name": "main", "at": "e2"}),
                await client.call_tool("branches", {}),
            ]
            fact_id = out[3].structured_content["id"]
            out.append(await client.call_tool("explain", {"memory_id": fact_id, "at": "e2b"}))
            out.append(await client.call_tool("memories", {"at": "nope"}))
            return out

    *ok, bad = asyncio.run(run())
    out = [_tool(r) for r in ok]
    assert out[0]["content"] == "我对花生过敏。手机138****5678"  # --redact mask
    fact = out[3]
    assert [h["memory"]["id"] for h in out[4]["hits"]] == [fact["id"]]
    assert out[5]["memories"] == []
    assert [b["name"] for b in out[7]["branches"]] == ["main"]
    assert out[8]["visible"] is False and "not on the path" in out[8]["reason"]
    assert bad.is_error and '"type": "UnknownAnchor"' in bad.content[0].text
    with Store(db) as store:
        assert {a.actor for a in store.audit("alice")} == {"desk"}
