"""The served store's concurrency and limits, in-process: store calls in a pool
fair between namespaces (a slow call of one never holds another's), the
per-key limit (429), the query length (422), a vector search past its
embedding budget (503), all with Retry-After where they say when, in the one
error shape and in the OpenAPI document."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

pytest.importorskip("fastapi")

from fastapi.testclient import TestClient

from branchmem import Store
from branchmem.retrieval.background import background_for, keeps_vectors
from branchmem.server import service as svc
from branchmem.server.app import create_app
from branchmem.server.auth import KeyStore
from branchmem.server.pool import FairPool
from branchmem.server.service import Limits
from helpers.search_helpers import GatedEmbedder
from helpers.server_fixtures import NS, assert_error, seed


class App:
    def __init__(self, limits: Limits, embedder: Any = "hashing", workers: int = 4) -> None:
        self.store = Store()
        self.keys = KeyStore(None)
        self.key = {
            who: self.keys.create(who, [f"{who}:write"])[1] for who in ("alice", "bob", "carol")
        }
        self.app = create_app(
            self.store, self.keys, limits=limits, embedder=embedder, workers=workers
        )
        self.client = TestClient(self.app, raise_server_exceptions=False)
        seed(self.store, "alice")
        seed(self.store, "bob")

    def h(self, who: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.key[who]}"}

    def get(self, who: str, path: str, **kw: Any) -> Any:
        return self.client.get(f"{NS}/{who}/{path}", headers=self.h(who), **kw)

    def post(self, who: str, path: str, **kw: Any) -> Any:
        return self.client.post(f"{NS}/{who}/{path}", headers=self.h(who), **kw)

    def close(self) -> None:
        self.app.state.served.close()
        self.keys.close()
        self.store.close()


@pytest.fixture
def make_app() -> Iterator[Callable[..., App]]:
    made: list[App] = []

    def make(limits: Limits | None = None, **kw: Any) -> App:
        a = App(limits or Limits(), **kw)
        made.append(a)
        return a

    yield make
    for a in made:
        a.close()


@pytest.fixture
def held(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, threading.Event]]:
    """`GET memories` of namespace alice waits until ``release`` is set (a slow call)."""
    events = {"entered": threading.Event(), "release": threading.Event()}
    real = svc.memories

    def slow(ctx: Any, namespace: str, *args: Any, **kw: Any) -> Any:
        if namespace == "alice":
            events["entered"].set()
            assert events["release"].wait(30)
        return real(ctx, namespace, *args, **kw)

    monkeypatch.setattr(svc, "memories", slow)
    yield events
    events["release"].set()


def _in_thread(fn: Callable[[], Any]) -> tuple[threading.Thread, list[Any]]:
    out: list[Any] = []
    t = threading.Thread(target=lambda: out.append(fn()))
    t.start()
    return t, out


def test_a_slow_call_of_one_namespace_holds_no_other(
    make_app: Callable[..., App], held: dict[str, threading.Event]
) -> None:
    a = make_app(workers=2)  # one namespace runs at most one call at once
    slow = [_in_thread(lambda: a.get("alice", "memories", params={"at": "e2"})) for _ in range(3)]
    assert held["entered"].wait(10)
    t0 = time.perf_counter()
    r = a.get("bob", "memories", params={"at": "e2"})
    waited = time.perf_counter() - t0
    assert r.status_code == 200 and [m["id"] for m in r.json()["memories"]] == ["m-cd"]
    assert waited < 5, waited  # before: every call waited on the one lock
    assert all(t.is_alive() for t, _ in slow)
    held["release"].set()
    for t, out in slow:
        t.join(10)
        assert out[0].status_code == 200


def test_a_key_over_its_concurrent_requests_gets_429(
    make_app: Callable[..., App], held: dict[str, threading.Event]
) -> None:
    a = make_app(Limits(max_concurrent=1))
    t, out = _in_thread(lambda: a.get("alice", "memories", params={"at": "e2"}))
    assert held["entered"].wait(10)
    r = a.get("alice", "memories", params={"at": "e2"})
    err = assert_error(r, 429, "TooManyRequests")
    assert err["detail"]["limit"] == 1
    assert r.headers["Retry-After"] == "1"
    assert a.get("bob", "memories", params={"at": "e2"}).status_code == 200  # another key
    held["release"].set()
    t.join(10)
    assert out[0].status_code == 200
    assert a.get("alice", "memories", params={"at": "e2"}).status_code == 200  # counted down


def test_a_query_over_the_length_limit_is_422_everywhere(make_app: Callable[..., App]) -> None:
    a = make_app(Limits(max_query=10))
    ok = a.post("alice", "search", json={"query": "搬" * 10, "at": "e2"})
    assert ok.status_code == 200, ok.text
    # The document states the cap; the service checks it, the same error over HTTP.
    r = a.post("alice", "search", json={"query": "搬" * 11, "at": "e2"})
    assert "at most 10" in str(assert_error(r, 422, "LimitExceeded")["message"])
    r = a.get("alice", "context", params={"at": "e2", "query": "搬" * 11})
    assert "at most 10" in str(assert_error(r, 422, "LimitExceeded")["message"])
    # The service layer checks it too (what the MCP tools call).
    ctx = a.app.state.served.ctx(a.keys.authenticate(a.key["alice"]), a.key["alice"])
    with pytest.raises(Exception, match="at most 10") as err:
        svc.search(ctx, "alice", "搬" * 11, "e2")
    assert type(err.value).__name__ == "LimitExceeded"
    with pytest.raises(Exception, match="at most 10"):
        svc.context(ctx, "alice", "e2", "搬" * 11)


def test_a_vector_search_past_the_embedding_budget_is_503(make_app: Callable[..., App]) -> None:
    emb = GatedEmbedder()
    emb.gate.clear()  # the background embedder makes no progress
    a = make_app(Limits(max_embed=2), embedder=emb)
    facts = [{"content": f"用户喜欢城市{i}", "sources": ["e1"]} for i in range(8)]
    assert a.post("bob", "memories", json={"memories": facts}).status_code == 200
    r = a.post("bob", "search", json={"query": "城市", "at": "e1", "mode": "vector"})
    err = assert_error(r, 503, "EmbeddingPending")
    # More lack a vector than a search may embed: it embeds none (the worker will).
    # Answered before it queues, it counts all the namespace's backlog: the 8 and
    # the two seeded records (one not visible at e1, one expired).
    assert err["detail"]["pending"] == 10 and int(r.headers["Retry-After"]) >= 1
    assert "queued for embedding" in err["message"]
    # Hybrid answers: what has no vector yet is ranked by keyword, and says so.
    r = a.post(
        "bob",
        "search",
        json={"query": "城市", "at": "e1", "k": 20, "explain": True, "cutoff": "off"},
    )
    assert r.status_code == 200, r.text
    flags = [h["explanation"]["vector_pending"] for h in r.json()["hits"]]
    assert flags.count(True) == 8
    emb.gate.set()
    assert a.app.state.served.embedding.wait(20)
    r = a.post(
        "bob",
        "search",
        json={"query": "城市", "at": "e1", "mode": "vector", "k": 20, "cutoff": "off"},
    )
    assert r.status_code == 200 and len(r.json()["hits"]) == 8


def test_the_openapi_document_states_the_limits(make_app: Callable[..., App]) -> None:
    a = make_app(Limits(max_query=123, max_concurrent=7, max_embed=5))
    spec = a.client.get("/openapi.json").json()
    search = spec["paths"]["/v1/namespaces/{namespace}/search"]["post"]
    ref = search["requestBody"]["content"]["application/json"]["schema"]["$ref"]
    query = spec["components"]["schemas"][ref.rsplit("/", 1)[1]]["properties"]["query"]
    assert query["maxLength"] == 123
    for code in ("429", "503"):
        assert "Retry-After" in search["responses"][code]["headers"]
    context = spec["paths"]["/v1/namespaces/{namespace}/context"]["get"]
    (q,) = [p for p in context["parameters"] if p["name"] == "query"]
    assert q["schema"]["maxLength"] == 123  # beside the anyOf, as k's and limit's maximum
    text = spec["info"]["description"]
    assert "at most 7 requests of one key" in text and "at most 5" in text
    hit = spec["components"]["schemas"]["HitExplanationOut"]["properties"]
    assert "vector_pending" in hit


def test_the_pool_takes_namespaces_in_turn() -> None:
    pool = FairPool(workers=1)
    gate = threading.Event()
    order: list[str] = []

    def job(name: str) -> Callable[[], str]:
        def run() -> str:
            gate.wait(10)
            order.append(name)
            return name

        return run

    futures = [pool.submit("a", job(f"a{i}")) for i in range(4)]
    futures += [pool.submit("b", job("b0")), pool.submit("c", job("c0"))]
    gate.set()
    assert [f.result(10) for f in futures] == ["a0", "a1", "a2", "a3", "b0", "c0"]
    assert order[:4] == ["a0", "b0", "c0", "a1"]  # a's next waits for the others' turn
    waiting = pool.submit("a", job("never"))
    pool.close()
    assert waiting.cancelled() or waiting.result(1) == "never"


def test_a_namespace_never_runs_more_than_its_share() -> None:
    pool = FairPool(workers=4)  # share: 2
    gate, running, most = threading.Event(), [0], [0]
    lock = threading.Lock()

    def job() -> None:
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        gate.wait(10)
        with lock:
            running[0] -= 1

    futures = [pool.submit("a", job) for _ in range(6)]
    other = pool.submit("b", lambda: "b")
    assert other.result(5) == "b"  # two workers stay free of namespace a
    gate.set()
    for f in futures:
        f.result(10)
    assert most[0] == 2
    pool.close()


def test_serve_takes_the_limits_and_says_them_in_its_help(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import uvicorn

    from branchmem.cli import main

    with pytest.raises(SystemExit):
        main(["serve", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for words in ("--max-query", "--max-embed", "--max-concurrent", "--workers", "429", "503"):
        assert words in text
    seen: dict[str, Any] = {}

    def run(app: Any, **kw: Any) -> None:  # instead of serving: look at what it would serve
        served = app.state.served
        seen.update(limits=served.limits, workers=served.workers)
        seen["own"] = len(served.connections.own)
        seen["spec"] = app.openapi()

    monkeypatch.setattr(uvicorn, "run", run)
    db = str(tmp_path / "s.db")
    argv = ["serve", "--db", db, "--no-auth", "--no-mcp", "--embedder", "hashing"]
    argv += ["--max-query", "50", "--max-embed", "3", "--max-concurrent", "2", "--workers", "3"]
    assert main(argv) == 0
    lim = seen["limits"]
    assert (lim.max_query, lim.max_embed, lim.max_concurrent) == (50, 3, 2)
    assert seen["workers"] == 3 and seen["own"] == 3  # an SQLite file: a connection each
    schemas = seen["spec"]["components"]["schemas"]
    assert schemas["SearchIn"]["properties"]["query"]["maxLength"] == 50


def test_a_store_that_keeps_vectors_is_served_with_a_background_embedder(
    make_app: Callable[..., App],
) -> None:
    a = make_app(Limits(max_embed=2))
    bg = a.app.state.served.embedding
    assert bg is not None and background_for(a.store) is bg
    assert keeps_vectors(a.store)


def test_a_vector_search_past_the_budget_is_refused_before_it_queues(
    make_app: Callable[..., App],
) -> None:
    emb = GatedEmbedder()
    emb.gate.clear()  # the background embedder makes no progress
    a = make_app(Limits(max_embed=2), embedder=emb, workers=2)
    facts = [{"content": f"用户喜欢城市{i}", "sources": ["e1"]} for i in range(8)]
    assert a.post("bob", "memories", json={"memories": facts}).status_code == 200
    served = a.app.state.served
    release = threading.Event()
    busy = [served.pool.submit(ns, lambda: release.wait(10)) for ns in ("alice", "bob")]
    timer = threading.Timer(3.0, release.set)  # before the fix the search waits for this
    timer.start()
    try:
        t0 = time.monotonic()
        r = a.post("bob", "search", json={"query": "城市", "at": "e1", "mode": "vector"})
        took = time.monotonic() - t0
    finally:
        release.set()
        timer.cancel()
    err = assert_error(r, 503, "EmbeddingPending")
    assert err["detail"]["pending"] == 10 and int(r.headers["Retry-After"]) >= 1
    assert took < 1.5, f"answered after {took:.1f} s: it queued behind the busy workers"
    assert all(f.result(5) for f in busy)
    # Not granted: the same 404 as ever, before anything about vectors.
    r = a.client.post(
        f"{NS}/bob/search",
        json={"query": "城市", "at": "e1", "mode": "vector"},
        headers=a.h("alice"),
    )
    assert r.status_code in (403, 404), r.text
