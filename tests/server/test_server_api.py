"""The HTTP API in-process (the ASGI app through httpx): every route, the one
error shape, keys and grants, tenant isolation, limits, the OpenAPI document."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from branchmem.server.service import Limits
from helpers.server_fixtures import NS, Served, assert_error, make_served, open_served, seed


@pytest.fixture
def served() -> Iterator[Served]:
    yield from open_served()


# Every route with a request that succeeds on the seeded namespace "alice"
# for a key with admin on it: (method, path under the namespace, kwargs).
ROUTES: list[tuple[str, str, dict[str, Any]]] = [
    ("POST", "events", {"json": {"id": "e3", "parent": "e2", "content": "好的"}}),
    ("GET", "events/e1", {}),
    ("GET", "events/e1/children", {}),
    ("GET", "events/e2/siblings", {}),
    ("GET", "events/e2/versions", {}),
    ("GET", "roots", {}),
    ("GET", "diff", {"params": {"a": "e2", "b": "e2b"}}),
    ("GET", "path", {"params": {"at": "e2"}}),
    ("GET", "events", {"params": {"limit": 2}}),
    ("GET", "inspect", {"params": {"at": "e2b"}}),
    ("POST", "memories", {"json": {"content": "用户在准备搬家", "sources": ["e1"]}}),
    ("GET", "memories", {"params": {"at": "e2"}}),
    ("GET", "memories/m-cd", {}),
    ("GET", "memories/m-cd/explain", {"params": {"at": "e2b"}}),
    ("GET", "memories/m-cd/visible", {"params": {"at": "e2"}}),
    ("POST", "memories/m-cd/retract", {"json": {"sources": ["e2"]}}),
    ("POST", "memories/m-cd/supersede", {"json": {"content": "用户搬去重庆", "sources": ["e2"]}}),
    ("POST", "search", {"json": {"query": "搬去哪里", "at": "e2", "k": 3}}),
    ("POST", "extract", {"json": {"at": "e2"}}),
    ("GET", "context", {"params": {"at": "e2", "query": "搬去哪里"}}),
    ("GET", "memories/m-cd/score", {}),
    ("POST", "memories/m-old/restore", {}),
    ("POST", "touch", {"json": {"ids": ["m-cd"]}}),
    ("POST", "archive", {"json": {}}),
    ("POST", "prune", {"json": {"prefix": "tmp", "older_than": 0}}),
    ("POST", "branches", {"json": {"name": "task/a", "at": "e2"}}),
    ("GET", "branches", {}),
    ("GET", "branches/main", {}),
    ("POST", "branches/main/head", {"json": {"to": "e2", "expected_head": "e1"}}),
    ("DELETE", "branches/main", {}),
    ("POST", "merge", {"json": {"source": "e2b", "into": "main"}}),
    ("GET", "conflicts", {"params": {"at": "main"}}),
    ("POST", "conflicts/c-none/resolve", {"json": {"keep": "m-cd", "branch": "main"}}),
    ("POST", "snapshots", {"json": {"branch": "main", "name": "v2"}}),
    ("GET", "snapshots", {}),
    ("POST", "rollback", {"json": {"branch": "main", "to": "v1"}}),
    ("GET", "history", {"params": {"branch": "main"}}),
    ("POST", "purge", {"json": {"memories": ["m-cd"]}}),
    ("GET", "audit", {}),
    (
        "POST",
        "edges",
        {"json": {"subject": "a", "predicate": "uses", "object": "b", "sources": ["e2"]}},
    ),
    ("GET", "graph", {"params": {"at": "e2"}}),
    ("GET", "jobs", {}),
    ("POST", "consolidate", {"json": {"at": "e2"}}),
    ("GET", "profile", {"params": {"at": "e2"}}),
]
SUCCEEDS_EXCEPT = {"conflicts/c-none/resolve"}  # no conflict in the seed: a 404 by design


def call(s: Served, who: str | None, ns: str, method: str, path: str, kw: dict[str, Any]) -> Any:
    headers = s.h(who) if who else {}
    return s.client.request(method, f"{NS}/{ns}/{path}", headers=headers, **kw)


def _template(path: str) -> str:
    parts = path.split("/")
    names = {"events": "{event_id}", "memories": "{memory_id}", "branches": "{name}"}
    names["conflicts"] = "{conflict_id}"
    if len(parts) >= 2 and parts[0] in names and parts[1]:
        parts[1] = names[parts[0]]
    return "/".join(parts)


def test_the_table_covers_every_route(served: Served) -> None:
    spec = served.client.get("/openapi.json").json()
    listed = {
        (m.upper(), p) for p, ops in spec["paths"].items() for m in ops if p.startswith(f"{NS}/")
    }
    table = {(m, f"{NS}/{{namespace}}/{_template(p)}") for m, p, _ in ROUTES}
    assert table == listed


@pytest.mark.parametrize(("method", "path", "kw"), ROUTES, ids=[f"{m} {p}" for m, p, _ in ROUTES])
def test_every_route_works_for_its_tenant(
    served: Served, method: str, path: str, kw: dict[str, Any]
) -> None:
    r = call(served, "admin", "alice", method, path, kw)
    if path in SUCCEEDS_EXCEPT:
        assert_error(r, 404, "UnknownConflict")
    else:
        assert r.status_code == 200, r.text
        assert isinstance(r.json(), dict)


@pytest.mark.parametrize(("method", "path", "kw"), ROUTES, ids=[f"{m} {p}" for m, p, _ in ROUTES])
def test_another_tenant_is_indistinguishable_from_a_missing_one(
    served: Served, method: str, path: str, kw: dict[str, Any]
) -> None:
    """bob's key on alice (which exists) answers exactly like alice's key on a
    namespace that exists nowhere, and like bob's key on that one."""
    before = served.store.audit("alice")
    answers = [
        call(served, "bob", "alice", method, path, kw),
        call(served, "alice", "nowhere", method, path, kw),
        call(served, "bob", "nowhere", method, path, kw),
    ]
    for r in answers:
        assert_error(r, 404, "UnknownNamespace")
    shapes = [json.dumps(r.json()).replace("alice", "NS").replace("nowhere", "NS") for r in answers]
    assert len(set(shapes)) == 1
    headers = {
        tuple(sorted((k, v) for k, v in r.headers.items() if k != "content-length"))
        for r in answers
    }
    assert len(headers) == 1
    assert served.store.audit("alice") == before  # nothing was written


@pytest.mark.parametrize(("method", "path", "kw"), ROUTES, ids=[f"{m} {p}" for m, p, _ in ROUTES])
def test_every_route_needs_a_valid_key(
    served: Served, method: str, path: str, kw: dict[str, Any]
) -> None:
    assert_error(call(served, None, "alice", method, path, kw), 401, "Unauthorized")
    bad = {"X-API-Key": "bm_000000000000_not-a-key"}
    r = served.client.request(method, f"{NS}/alice/{path}", headers=bad, **kw)
    assert_error(r, 401, "Unauthorized")


@pytest.mark.parametrize(
    ("method", "path", "kw"),
    [r for r in ROUTES if r[0] != "GET" and r[1] != "search"],
    ids=[f"{m} {p}" for m, p, _ in ROUTES if m != "GET" and p != "search"],
)
def test_a_read_grant_cannot_write(
    served: Served, method: str, path: str, kw: dict[str, Any]
) -> None:
    before = served.store.audit("alice")
    assert_error(call(served, "reader", "alice", method, path, kw), 403, "Forbidden")
    assert served.store.audit("alice") == before


@pytest.mark.parametrize(
    ("method", "path", "kw"),
    [r for r in ROUTES if "json" in r[2]],
    ids=[f"{m} {p}" for m, p, kw in ROUTES if "json" in kw],
)
def test_request_validation_uses_the_error_shape(
    served: Served, method: str, path: str, kw: dict[str, Any]
) -> None:
    r = call(served, "admin", "alice", method, path, {"json": {"no_such_field": 1}})
    err = assert_error(r, 422, "InvalidInput")
    assert err["detail"]["errors"]  # type: ignore[index]
    r = served.client.post(f"{NS}/alice/{path}", content=b"{not json", headers=served.h("admin"))
    assert_error(r, 422, "InvalidInput")


def test_admin_routes_need_admin(served: Served) -> None:
    assert_error(call(served, "alice", "alice", "GET", "audit", {}), 403, "Forbidden")
    r = call(served, "alice", "alice", "POST", "purge", {"json": {"events": ["e2"]}})
    assert_error(r, 403, "Forbidden")
    assert served.store.get_event("e2", namespace="alice").content  # not erased


@pytest.mark.parametrize(
    ("method", "path", "kw", "type_"),
    [
        ("GET", "events/nope", {}, "UnknownEvent"),
        ("GET", "memories/nope", {}, "UnknownMemory"),
        ("GET", "memories", {"params": {"at": "nope"}}, "UnknownAnchor"),
        ("GET", "path", {"params": {"at": "nope"}}, "UnknownAnchor"),
        ("GET", "memories/m-cd/explain", {"params": {"at": "nope"}}, "UnknownAnchor"),
        ("GET", "memories/nope/explain", {"params": {"at": "e1"}}, "UnknownMemory"),
        ("POST", "memories/nope/retract", {"json": {"sources": ["e1"]}}, "UnknownMemory"),
        ("POST", "search", {"json": {"query": "x", "at": "nope"}}, "UnknownAnchor"),
        ("GET", "branches/nope", {}, "UnknownBranch"),
        ("DELETE", "branches/nope", {}, "UnknownBranch"),
        ("GET", "history", {"params": {"branch": "nope"}}, "UnknownBranch"),
        ("POST", "rollback", {"json": {"branch": "main", "to": "nope"}}, "UnknownSnapshot"),
        ("GET", "conflicts", {"params": {"at": "nope"}}, "UnknownAnchor"),
    ],
)
def test_unknown_ids_and_anchors_are_404(
    served: Served, method: str, path: str, kw: dict[str, Any], type_: str
) -> None:
    assert_error(call(served, "admin", "alice", method, path, kw), 404, type_)


@pytest.mark.parametrize("query", ["\x00", "\x00 \x00", " ", ""])
def test_a_query_of_nul_or_blanks_is_refused(served: Served, query: str) -> None:
    r = call(served, "alice", "alice", "POST", "search", {"json": {"query": query, "at": "e2"}})
    assert_error(r, 422, "InvalidInput")


def test_other_errors_keep_their_status(served: Served) -> None:
    r = call(served, "alice", "alice", "POST", "events", {"json": {"id": "e2", "parent": "e1"}})
    err = assert_error(r, 422, "ConflictingEvent")
    assert err["detail"] == {
        "event_id": "e2",
        "namespace": "alice",
        "field": "content",
        "in_batch": False,
    }
    twice = [{"id": "ok2", "content": "a"}, {"id": "ok2", "content": "b"}]
    r = call(served, "alice", "alice", "POST", "events", {"json": {"events": twice}})
    err = assert_error(r, 422, "ConflictingEvent")
    assert "'ok2'" in err["message"] and "repeated in the batch" in err["message"]
    body = {"to": "e2", "expected_head": "e2b"}
    r = call(served, "alice", "alice", "POST", "branches/main/head", {"json": body})
    assert_error(r, 409, "BranchConflict")
    assert served.store.branch_head("main", namespace="alice") == "e1"
    r = call(served, "alice", "alice", "POST", "branches", {"json": {"name": "main", "at": "e1"}})
    assert_error(r, 422, "BranchExists")
    assert_error(served.client.get("/nope"), 404, "UnknownRoute")
    assert_error(served.client.put(f"{NS}/alice/search"), 405, "UnknownRoute")


def test_no_anchor_sees_nothing(served: Served) -> None:
    r = call(served, "alice", "alice", "GET", "memories", {})
    assert r.json()["memories"] == []


def test_scope_chain_and_gate_over_http(served: Served) -> None:
    r = call(served, "alice", "alice", "GET", "memories", {"params": {"at": "e2b"}})
    assert r.json()["memories"] == []
    r = call(served, "alice", "alice", "GET", "memories", {"params": {"at": ["e2b", "e2"]}})
    [m] = r.json()["memories"]
    assert (m["id"], m["via"]) == ("m-cd", "e2")
    r = call(served, "alice", "alice", "GET", "memories/m-cd/explain", {"params": {"at": "e2b"}})
    assert r.json()["visible"] is False
    assert "not on the path" in r.json()["reason"]


def test_batch_writes_and_pagination(served: Served) -> None:
    events = [{"id": f"x{i}", "parent": f"x{i - 1}" if i else "e2"} for i in range(5)]
    r = call(served, "alice", "alice", "POST", "events", {"json": {"events": events}})
    assert [e["id"] for e in r.json()["events"]] == [e["id"] for e in events]
    mems = [{"content": f"fact {i}", "sources": [f"x{i}"]} for i in range(5)]
    r = call(served, "alice", "alice", "POST", "memories", {"json": {"memories": mems}})
    assert len(r.json()["memories"]) == 5
    seen: list[str] = []
    params: dict[str, Any] = {"at": "x4", "limit": 2, "offset": 0}
    while True:
        page = call(served, "alice", "alice", "GET", "memories", {"params": params}).json()
        seen += [m["content"] for m in page["memories"]]
        if page["next_offset"] is None:
            break
        params["offset"] = page["next_offset"]
    assert seen == ["用户搬去成都"] + [f"fact {i}" for i in range(5)]


def test_every_write_records_the_principal(served: Served) -> None:
    call(served, "alice", "alice", "POST", "events", {"json": {"id": "e9", "parent": "e2"}})
    call(served, "alice", "alice", "POST", "memories", {"json": {"content": "x", "branch": "main"}})
    entries = served.store.audit("alice")
    assert [(a.op, a.actor) for a in entries[-2:]] == [
        ("add_events", "alice"),
        ("remember", "alice"),
    ]


def test_extraction_records_the_principal(served: Served) -> None:
    call(
        served,
        "alice",
        "alice",
        "POST",
        "events",
        {"json": {"id": "j1", "parent": "e2", "content": "我在阿里巴巴上班。"}},
    )
    r = call(served, "alice", "alice", "POST", "extract", {"json": {"at": "j1"}})
    assert r.json()["memories"]
    assert served.store.audit("alice")[-1].actor == "alice"


def test_branch_narrowed_grant(served: Served) -> None:
    ok = call(
        served, "tasks", "alice", "POST", "branches", {"json": {"name": "task/a", "at": "e1"}}
    )
    assert ok.status_code == 200
    ev = {"id": "t1", "branch": "task/a", "content": "在任务分支上"}
    assert call(served, "tasks", "alice", "POST", "events", {"json": ev}).status_code == 200
    assert served.store.branch_head("task/a", namespace="alice") == "t1"
    r = call(served, "tasks", "alice", "POST", "branches", {"json": {"name": "main2", "at": "e1"}})
    assert_error(r, 403, "Forbidden")
    r = call(served, "tasks", "alice", "POST", "events", {"json": {"id": "t2", "parent": "e1"}})
    assert_error(r, 403, "Forbidden")
    r = call(
        served, "tasks", "alice", "POST", "merge", {"json": {"source": "task/a", "into": "main"}}
    )
    assert_error(r, 403, "Forbidden")
    assert (
        call(served, "tasks", "alice", "GET", "memories", {"params": {"at": "e2"}}).status_code
        == 200
    )


def test_revoked_key_is_refused(served: Served) -> None:
    [info] = [k for k in served.keys.list() if k.principal == "bob"]
    served.keys.revoke(info.id)
    r = call(served, "bob", "bob", "GET", "branches", {})
    assert_error(r, 401, "Unauthorized")


def test_me_names_the_principal_and_its_grants(served: Served) -> None:
    r = served.client.get("/v1/me", headers=served.h("alice"))
    assert r.json() == {"principal": "alice", "grants": ["alice:write", "shared:read"]}
    assert_error(served.client.get("/v1/me"), 401, "Unauthorized")


def test_healthz_needs_no_key(served: Served) -> None:
    r = served.client.get("/healthz")
    assert r.status_code == 200 and r.json()["status"] == "ok"


def test_limits() -> None:
    s = make_served(Limits(max_body_bytes=2_000, max_batch=3, max_k=5, max_page=10))
    seed(s.store, "alice")
    h = s.h("alice")
    big = {"id": "big", "parent": "e1", "content": "字" * 2_000}
    r = s.client.post(f"{NS}/alice/events", json=big, headers=h)
    assert_error(r, 413, "PayloadTooLarge")
    chunks = (b'{"id": "big", "content": "' + b"a" * 1500, b"a" * 1500 + b'"}')
    r = s.client.post(f"{NS}/alice/events", content=iter(chunks), headers=h)
    assert_error(r, 413, "PayloadTooLarge")
    batch = {"events": [{"id": f"b{i}", "parent": "e1"} for i in range(4)]}
    r = s.client.post(f"{NS}/alice/events", json=batch, headers=h)
    assert_error(r, 413, "PayloadTooLarge")
    r = s.client.post(f"{NS}/alice/search", json={"query": "x", "at": "e1", "k": 6}, headers=h)
    assert_error(r, 422, "LimitExceeded")
    r = s.client.get(f"{NS}/alice/memories", params={"at": "e2", "limit": 11}, headers=h)
    assert_error(r, 422, "LimitExceeded")
    assert s.store.audit("alice")[-1].op == "snapshot"  # nothing written


def test_openapi_names_request_and_response_models(served: Served) -> None:
    spec = served.client.get("/openapi.json").json()
    for path, ops in spec["paths"].items():
        for method, op in ops.items():
            ok = op["responses"]["200"]["content"]["application/json"]["schema"]
            assert "$ref" in ok, (method, path)
            if "requestBody" in op:
                body = op["requestBody"]["content"]["application/json"]["schema"]
                assert "$ref" in body or "anyOf" in body, (method, path)
            if path.startswith("/v1/"):
                assert "$ref" in op["responses"]["404"]["content"]["application/json"]["schema"]
    assert served.client.get("/docs").status_code == 200


def test_internal_errors_use_the_error_shape(served: Served, monkeypatch: Any) -> None:
    def broken(*a: Any, **k: Any) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(type(served.store), "branches", broken)
    r = call(served, "alice", "alice", "GET", "branches", {})
    err = assert_error(r, 500, "BranchmemError")
    assert "boom" not in str(err)


def test_through_httpx_asgi_transport(served: Served) -> None:
    import asyncio

    import httpx

    async def run() -> list[Any]:
        transport = httpx.ASGITransport(app=served.client.app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as c:
            return [
                await c.get(f"{NS}/alice/memories", params={"at": "e2"}, headers=served.h("alice")),
                await c.get(f"{NS}/bob/memories", params={"at": "e2"}, headers=served.h("alice")),
            ]

    ok, hidden = asyncio.run(run())
    assert [m["id"] for m in ok.json()["memories"]] == ["m-cd"]
    assert_error(hidden, 404, "UnknownNamespace")


def test_without_keys_only_loopback_hosts_are_answered() -> None:
    from fastapi.testclient import TestClient

    from branchmem import Store
    from branchmem.server.app import create_app

    with Store() as store:
        app = create_app(store, None, mcp=False)
        seed(store, "default")
        local = TestClient(app, base_url="http://127.0.0.1:8080")
        r = local.get(f"{NS}/default/memories", params={"at": "e2"})
        assert [m["id"] for m in r.json()["memories"]] == ["m-cd"]
        assert local.get("/v1/me").json()["principal"] == "anonymous"
        for host in ("http://testserver", "http://evil.example:8080", "http://127.0.0.1.evil"):
            r = TestClient(app, base_url=host).get(f"{NS}/default/memories", params={"at": "e2"})
            assert_error(r, 403, "Forbidden")


def test_inspect_lists_every_record_with_its_reason(served: Served) -> None:
    r = call(served, "alice", "alice", "GET", "inspect", {"params": {"at": "e2b"}})
    assert r.status_code == 200, r.text
    rows = {m["memory"]["id"]: m for m in r.json()["memories"]}
    shown = {m.id for m in served.store.memories(at="e2b", namespace="alice")}
    assert {i for i, m in rows.items() if m["visible"]} == shown
    assert rows["m-cd"]["visible"] is False and "not on the path" in rows["m-cd"]["reason"]
    assert len(rows) == len(served.store.records(namespace="alice"))


def test_events_page_through_the_whole_tree(served: Served) -> None:
    seen: list[str] = []
    offset: int | None = 0
    while offset is not None:
        r = call(
            served, "alice", "alice", "GET", "events", {"params": {"offset": offset, "limit": 1}}
        )
        assert r.status_code == 200, r.text
        seen += [e["id"] for e in r.json()["events"]]
        offset = r.json()["next_offset"]
    assert seen == [e.id for e in served.store.events(namespace="alice")] and len(seen) >= 3
