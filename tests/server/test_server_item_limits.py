"""Over HTTP and MCP, the store's limits per item hold as they do in Python
(422, naming the limit), the rows one request adds are capped (413, naming
--max-rows), a body too large names what to change, and a JSON object that
names a key twice is refused (422), all in the one error shape."""

from __future__ import annotations

import pytest

pytest.importorskip("fastapi")

from branchmem.server.service import Limits
from branchmem.validate import MAX_CONTENT_BYTES, MAX_PARENTS
from helpers.server_fixtures import NS, assert_error, make_served, seed


def test_one_event_over_the_content_limit_says_so() -> None:
    s = make_served()
    seed(s.store, "alice")
    big = {"id": "big", "parent": "e1", "content": "a" * (2 * MAX_CONTENT_BYTES)}
    r = s.client.post(f"{NS}/alice/events", json=big, headers=s.h("alice"))
    err = assert_error(r, 422, "InvalidInput")
    assert "MAX_CONTENT_BYTES" in str(err["message"]) and "batch" not in str(err["message"])


def test_a_body_over_max_body_names_both_limits() -> None:
    s = make_served(Limits(max_body_bytes=2_000))
    seed(s.store, "alice")
    big = {"id": "big", "parent": "e1", "content": "a" * 3_000}
    r = s.client.post(f"{NS}/alice/events", json=big, headers=s.h("alice"))
    msg = str(assert_error(r, 413, "PayloadTooLarge")["message"])
    assert "--max-body" in msg and "MAX_CONTENT_BYTES" in msg


def test_parents_and_rows_are_bounded() -> None:
    s = make_served(Limits(max_rows=100))
    seed(s.store, "alice")
    h = s.h("alice")
    one = {"id": "x", "parent": [f"p{i}" for i in range(MAX_PARENTS + 1)]}
    err = assert_error(s.client.post(f"{NS}/alice/events", json=one, headers=h), 422)
    assert "MAX_PARENTS" in str(err["message"])
    # 20 events of 10 parents each: 220 rows, over 100, though each item is fine
    batch = {"events": [{"id": f"b{i}", "parent": [f"p{j}" for j in range(10)]} for i in range(20)]}
    err = assert_error(s.client.post(f"{NS}/alice/events", json=batch, headers=h), 413)
    assert "220 rows" in str(err["message"]) and "--max-rows" in str(err["message"])
    mems = {"memories": [{"content": "x", "sources": [f"s{j}" for j in range(60)]}] * 2}
    err = assert_error(s.client.post(f"{NS}/alice/memories", json=mems, headers=h), 413)
    assert "122 rows" in str(err["message"])
    assert s.store.audit("alice")[-1].op == "snapshot"  # nothing written


def test_nul_in_meta_over_http_is_422() -> None:
    s = make_served()
    seed(s.store, "alice")
    ev = {"id": "x", "parent": "e1", "meta": {"k": "v\u0000"}}
    r = s.client.post(f"{NS}/alice/events", json=ev, headers=s.h("alice"))
    assert "NUL" in str(assert_error(r, 422, "InvalidInput")["message"])


def test_a_key_named_twice_is_422() -> None:
    s = make_served()
    seed(s.store, "alice")
    body = b'{"id": "x", "parent": "e1", "content": "one", "content": "two"}'
    h = {**s.h("alice"), "content-type": "application/json"}
    r = s.client.post(f"{NS}/alice/events", content=body, headers=h)
    err = assert_error(r, 422, "InvalidInput")
    assert "'content' twice" in str(err["message"]) and err["detail"]["key"] == "content"
    nested = b'{"id": "x", "parent": "e1", "meta": {"a": 1, "a": 2}}'
    assert_error(s.client.post(f"{NS}/alice/events", content=nested, headers=h), 422)
    ok = b'{"id": "x", "parent": "e1", "meta": {"a": {"b": 1}, "c": {"b": 2}}}'
    assert s.client.post(f"{NS}/alice/events", content=ok, headers=h).status_code == 200
