"""Shared setup for the server tests: an app over a store, keys, and a seeded namespace."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("mcp")

from fastapi.testclient import TestClient

from branchmem import Store
from branchmem.server.app import create_app
from branchmem.server.auth import KeyStore
from branchmem.server.service import Limits

NS = "/v1/namespaces"


@dataclass
class Served:
    store: Store
    keys: KeyStore
    client: TestClient
    key: dict[str, str]  # role name -> API key

    def h(self, who: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.key[who]}"}


GRANTS = {
    "alice": ["alice:write", "shared:read"],
    "admin": ["alice:admin"],
    "bob": ["bob:write"],
    "reader": ["alice:read"],
    "tasks": ["alice:write:branch=task/*"],
    "owner": ["default:admin"],
}


def seed(store: Store, ns: str) -> None:
    """A small tree: e1 -> e2 (fact), e1 -> e2b (edit), a branch with a snapshot."""
    store.add_events(
        [
            {"id": "e1", "content": "你好", "namespace": ns},
            {"id": "e2", "parent": "e1", "content": "我下个月搬去成都。", "namespace": ns},
            {"id": "e2b", "parent": "e1", "content": "我下个月搬去杭州。", "namespace": ns},
        ]
    )
    store.add_memory("用户搬去成都", sources=["e2"], key="city", id="m-cd", namespace=ns)
    store.add_memory("早已过期", sources=["e1"], id="m-old", expires_at=1.0, namespace=ns)
    store.create_branch("main", at="e1", namespace=ns)
    store.snapshot("main", "v1", namespace=ns)


_APPS: dict[Limits | None, Any] = {}


def make_served(limits: Limits | None = None, store: Store | None = None) -> Served:
    """A fresh store and fresh keys behind an app (built once per limits: building
    the routes is the slow part, and the app holds no state of its own)."""
    store = store if store is not None else Store()
    keys = KeyStore(None)
    key = {who: keys.create(who, grants)[1] for who, grants in GRANTS.items()}
    app = _APPS.get(limits)
    if app is None:
        app = _APPS[limits] = create_app(store, keys, limits=limits, embedder="hashing")
    app.state.served.use(store, keys)
    return Served(store, keys, TestClient(app, raise_server_exceptions=False), key)


def open_served() -> Iterator[Served]:
    """The body of each test module's ``served`` fixture: alice and bob seeded."""
    s = make_served()
    seed(s.store, "alice")
    seed(s.store, "bob")
    yield s  # the client is not entered: the app's lifespan (MCP sessions) is not needed
    s.keys.close()
    s.store.close()


def assert_error(r: object, status: int, type_: str | None = None) -> dict[str, object]:
    """The one error shape: {"error": {"type", "message", "detail"}}."""
    assert r.status_code == status, (r.status_code, r.text)  # type: ignore[attr-defined]
    body = r.json()  # type: ignore[attr-defined]
    assert set(body) == {"error"}
    err = body["error"]
    assert set(err) == {"type", "message", "detail"}
    assert isinstance(err["message"], str) and err["message"]
    assert isinstance(err["detail"], dict)
    if type_ is not None:
        assert err["type"] == type_, err
    return dict(err)
