"""`RemoteStore` over any httpx transport: what it sends, what it rebuilds, and
how it is put together (a connection it holds, not a stack of base classes)."""

from __future__ import annotations

import httpx
import pytest

from branchmem import InvalidInput, StorageError, UnknownBranch
from branchmem.client import AsyncRemoteStore, RemoteStore
from branchmem.client.background import BackgroundDoors
from branchmem.client.connection import Connection
from branchmem.client.surface import Surface
from helpers.server_fixtures import Served, make_served, seed


def forwarding(served: Served, seen: list[httpx.Request]) -> httpx.MockTransport:
    """A transport that hands each request to the app in this process, and keeps it."""

    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        r = served.client.request(
            request.method,
            request.url.raw_path.decode(),
            headers=request.headers,
            content=request.content,
        )
        return httpx.Response(r.status_code, headers=r.headers, content=r.content)

    return httpx.MockTransport(handle)


def test_a_transport_carries_every_call() -> None:
    served = make_served()
    seed(served.store, "alice")
    seen: list[httpx.Request] = []
    key = served.keys.create("t", ["alice:write"])[1]
    with RemoteStore(
        "http://memory.example",
        api_key=key,
        namespace="alice",
        transport=forwarding(served, seen),
    ) as remote:
        remote.add_event("e3", parent="e2", content="预算4000元。")
        m = remote.add_memory("预算4000元", sources=["e3"], id="m-b")
        assert [x.id for x in remote.memories(at="e3")] == ["m-cd", "m-b"]
        assert remote.memories(at="e2b") == []
        assert remote.get_memory("m-b") == m == served.store.get_memory("m-b", "alice")
    assert [(r.method, r.url.path) for r in seen] == [
        ("POST", "/v1/namespaces/alice/events"),
        ("POST", "/v1/namespaces/alice/memories"),
        ("GET", "/v1/namespaces/alice/memories"),
        ("GET", "/v1/namespaces/alice/memories"),
        ("GET", "/v1/namespaces/alice/memories/m-b"),
    ]
    assert {r.headers["authorization"] for r in seen} == {f"Bearer {key}"}
    assert all(r.url.host == "memory.example" for r in seen)
    served.store.close()


def test_the_servers_errors_come_back_as_the_stores() -> None:
    served = make_served()
    seen: list[httpx.Request] = []
    remote = RemoteStore(
        "http://memory.example", api_key=served.key["owner"], transport=forwarding(served, seen)
    )
    with pytest.raises(UnknownBranch) as info:
        remote.branch_head("nowhere")
    assert info.value.name == "nowhere" and info.value.namespace == "default"
    assert isinstance(info.value, KeyError)
    served.store.close()


def test_a_transport_that_fails_is_a_storage_error() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    remote = RemoteStore("http://memory.example", transport=httpx.MockTransport(refuse))
    with pytest.raises(StorageError, match="did not answer: connection refused"):
        remote.memories(at="e1")


def test_a_transport_or_a_client_not_both() -> None:
    with pytest.raises(InvalidInput, match="not both"):
        RemoteStore(
            "http://memory.example",
            transport=httpx.MockTransport(lambda r: httpx.Response(200)),
            http_client=httpx.Client(),
        )


def test_remote_store_holds_a_connection_and_shares_only_its_surface() -> None:
    # Each method is written once, as a plan, on `Surface`; the blocking and the
    # awaitable store differ only in their connection.
    remote = RemoteStore("http://memory.example", namespace="alice")
    assert RemoteStore.__bases__ == AsyncRemoteStore.__bases__ == (Surface,)
    assert Surface.__bases__ == (BackgroundDoors,)  # its plans too, written once
    assert BackgroundDoors.__bases__ == (object,)
    assert isinstance(vars(remote)["_c"], Connection)
    assert remote.namespace == "alice"
    remote.namespace = "bob"
    assert vars(remote)["_c"].url(None, "events") == "/v1/namespaces/bob/events"
    remote.close()
