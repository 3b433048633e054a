"""One tenant never stalls another, on a real `branchmem serve` process: a first
search over many records not embedded yet (the embedder is an endpoint that
takes half a second an answer) must not hold another namespace's reads."""

from __future__ import annotations

import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("uvicorn")

import httpx
from test_server_e2e import SERVE, _cli, _free_port

from helpers.search_helpers import embeddings_server

RECORDS = 1_500  # at 64 a batch and 0.5 s an answer: 12 s to embed them all


def _start(db: str, *extra: str) -> tuple[subprocess.Popen[bytes], str, Path]:
    port = _free_port()
    log = Path(db).with_suffix(".log")
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [*SERVE, "--db", db, "--port", str(port), *extra], stdout=out, stderr=out
        )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                return proc, url, log
        except httpx.HTTPError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise RuntimeError(f"server did not start: {log.read_text()}")
        time.sleep(0.2)


@pytest.fixture
def slow_server(tmp_path: Path) -> Iterator[dict[str, Any]]:
    db = str(tmp_path / "mem.db")
    keys = {
        who: _cli("keys", "create", "--db", db, "--principal", who, "--grant", f"{who}:write")
        .strip()
        .splitlines()[-1]
        for who in ("alice", "bob")
    }
    with embeddings_server(dim=32, delay=0.5) as fake:
        proc, url, log = _start(db, "--embedder", f"openai:slow@{fake.url}")
        try:
            yield {"url": url, "fake": fake, "log": log, **keys}
        finally:
            proc.terminate()
            proc.wait(timeout=30)


def test_a_slow_first_search_holds_no_other_namespace(slow_server: dict[str, Any]) -> None:
    url, fake = slow_server["url"], slow_server["fake"]
    alice = httpx.Client(
        base_url=f"{url}/v1/namespaces/alice",
        headers={"Authorization": f"Bearer {slow_server['alice']}"},
        timeout=120,
    )
    bob = httpx.Client(
        base_url=f"{url}/v1/namespaces/bob",
        headers={"Authorization": f"Bearer {slow_server['bob']}"},
        timeout=120,
    )
    with alice, bob:
        bob.post("/events", json={"id": "b1", "content": "你好"}).raise_for_status()
        bob.post("/memories", json={"content": "用户喜欢猫", "sources": ["b1"]}).raise_for_status()
        alice.post("/events", json={"id": "a1", "content": "开始"}).raise_for_status()
        for start in range(0, RECORDS, 750):
            batch = [
                {"content": f"用户的第{i}条事实：喜欢城市{i % 17}", "sources": ["a1"]}
                for i in range(start, start + 750)
            ]
            alice.post("/memories", json={"memories": batch}).raise_for_status()
        asked = len(fake.requests)
        found: dict[str, Any] = {}

        def search() -> None:
            t = time.perf_counter()
            r = alice.post(
                "/search", json={"query": "喜欢城市3", "at": "a1", "k": 5, "explain": True}
            )
            found["seconds"], found["response"] = time.perf_counter() - t, r

        searcher = threading.Thread(target=search)
        searcher.start()
        deadline = time.monotonic() + 30
        while len(fake.requests) == asked and time.monotonic() < deadline:
            time.sleep(0.02)  # until the embedder is being asked for vectors
        waits = []
        for _ in range(5):
            t = time.perf_counter()
            r = bob.get("/memories", params={"at": "b1"})
            waits.append(time.perf_counter() - t)
            assert r.status_code == 200, r.text
            assert [m["content"] for m in r.json()["memories"]] == ["用户喜欢猫"]
        searcher.join(120)
    assert max(waits) < 2.0, waits  # before: each waited for the whole of alice's search
    r = found["response"]
    assert r.status_code == 200, r.text
    hits = r.json()["hits"]
    assert len(hits) == 5
    # A search embeds a bounded number of records itself: far fewer than all of them.
    assert found["seconds"] < 10.0, found["seconds"]
    # A vector-only search cannot rank the rest by keyword: 503, with when to retry.
    with httpx.Client(base_url=f"{url}/v1/namespaces/alice", timeout=60) as again:
        r = again.post(
            "/search",
            json={"query": "喜欢城市3", "at": "a1", "mode": "vector"},
            headers={"Authorization": f"Bearer {slow_server['alice']}"},
        )
    assert r.status_code == 503, r.text
    assert r.json()["error"]["type"] == "EmbeddingPending"
    assert int(r.headers["Retry-After"]) >= 1
