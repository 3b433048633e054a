"""The tree reads and the diff over HTTP and through `RemoteStore`: the same
answers as the embedded store, each checked against the key's grants."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from branchmem import Diff, EventPage, Store, UnknownEvent, Versions
from branchmem.client import RemoteStore
from branchmem.server.errors import UnknownNamespace
from helpers.server_fixtures import NS, Served, assert_error, make_served, open_served


@pytest.fixture
def served() -> Iterator[Served]:
    yield from open_served()


def _chat(s: Any) -> None:
    s.add_events(
        [
            {"id": "u1", "content": "我下个月搬去成都"},
            {"id": "a1", "parent": "u1", "role": "assistant"},
            {"id": "u1b", "content": "我下个月搬去杭州", "meta": {"version_of": "u1"}},
            {"id": "dir/a", "parent": "u1", "role": "assistant"},
        ]
    )
    s.add_events([{"id": f"r{i}", "parent": "u1", "role": "assistant"} for i in range(5)])
    s.add_memory("用户搬去成都", sources=["u1"], id="m-cd")
    s.add_memory("用户搬去杭州", sources=["u1b"], id="m-hz")


@pytest.fixture(params=["embedded", "remote"])
def any_store(request: pytest.FixtureRequest) -> Iterator[Any]:
    if request.param == "embedded":
        with Store() as s:
            yield s
        return
    served = make_served()
    yield RemoteStore("http://testserver", api_key=served.key["owner"], http_client=served.client)
    served.store.close()


def test_remote_and_embedded_agree(any_store: Any) -> None:
    _chat(any_store)
    page = any_store.children("u1", limit=3)
    assert isinstance(page, EventPage)
    assert [e.id for e in page.events] == ["a1", "dir/a", "r0"]
    rest = any_store.children("u1", limit=10, cursor=page.cursor)
    assert [e.id for e in rest.events] == ["r1", "r2", "r3", "r4"] and rest.cursor is None
    assert [e.id for e in any_store.children(None).events] == ["u1", "u1b"]
    assert [e.id for e in any_store.siblings("u1b").events] == ["u1", "u1b"]
    assert [e.id for e in any_store.siblings("u1b")] == ["u1", "u1b"]  # a page iterates
    v = any_store.versions("dir/a")
    assert isinstance(v, Versions) and (v.position, v.count, v.previous, v.next) == (
        2,
        7,
        "a1",
        "r0",
    )
    d = any_store.diff("u1", "u1b")
    assert isinstance(d, Diff) and d.fork_point is None
    assert [m.id for m in d.only_a] == ["m-cd"] and [m.id for m in d.only_b] == ["m-hz"]
    chain = any_store.diff(["u1", "u1b"], "u1b")
    assert [m.id for m in chain.only_a] == ["m-cd"] and chain.only_b == ()
    with pytest.raises(UnknownEvent):
        any_store.versions("nope")


def test_http_shapes(served: Served) -> None:
    c, h = served.client, served.h("alice")
    r = c.get(f"{NS}/alice/events/e1/children", headers=h, params={"limit": 1})
    assert r.status_code == 200, r.text
    assert [e["id"] for e in r.json()["events"]] == ["e2"] and r.json()["cursor"]
    r2 = c.get(f"{NS}/alice/events/e1/children", headers=h, params={"cursor": r.json()["cursor"]})
    assert [e["id"] for e in r2.json()["events"]] == ["e2b"] and r2.json()["cursor"] is None
    v = c.get(f"{NS}/alice/events/e2b/versions", headers=h).json()
    assert v == {"id": "e2b", "position": 2, "count": 2, "previous": "e2", "next": None}
    sib = c.get(f"{NS}/alice/events/e2/siblings", headers=h).json()
    assert [e["id"] for e in sib["events"]] == ["e2", "e2b"]
    roots = c.get(f"{NS}/alice/roots", headers=h).json()
    assert [e["id"] for e in roots["events"]] == ["e1"]
    d = c.get(f"{NS}/alice/diff", headers=h, params={"a": "e2", "b": "e2b"}).json()
    assert d["fork_point"] == "e1" and [m["id"] for m in d["only_a"]] == ["m-cd"]
    assert d["only_b"] == []
    # The event itself is still reached at its own path.
    assert c.get(f"{NS}/alice/events/e2", headers=h).json()["id"] == "e2"


def test_http_errors_and_grants(served: Served) -> None:
    c = served.client
    h = served.h("alice")
    assert_error(c.get(f"{NS}/alice/events/nope/children", headers=h), 404, "UnknownEvent")
    assert_error(
        c.get(f"{NS}/alice/events/e1/children", headers=h, params={"cursor": "zz"}),
        422,
        "InvalidInput",
    )
    assert_error(c.get(f"{NS}/alice/diff", headers=h, params={"a": "e2"}), 422)
    # bob may not read alice's tree, nor learn whether an event exists there.
    hb = served.h("bob")
    for path in ("events/e1/children", "events/e1/siblings", "events/e1/versions", "roots"):
        assert_error(c.get(f"{NS}/alice/{path}", headers=hb), 404, UnknownNamespace.__name__)
    r = c.get(f"{NS}/alice/diff", headers=hb, params={"a": "e2", "b": "e2b"})
    assert_error(r, 404, UnknownNamespace.__name__)
    # a reader may read it.
    r = c.get(f"{NS}/alice/events/e1/versions", headers=served.h("reader"))
    assert r.status_code == 200, r.text


@pytest.mark.parametrize(
    ("path", "body", "shape", "other"),
    [
        ("events", {"id": 123}, "EventIn", "EventsIn"),
        ("events", {"events": [{"id": 1}]}, "EventsIn", "EventIn"),
        ("memories", {"content": 5, "sources": ["e1"]}, "MemoryIn", "MemoriesIn"),
    ],
)
def test_validation_answers_with_the_closest_body_shape(
    served: Served, path: str, body: dict[str, Any], shape: str, other: str
) -> None:
    r = served.client.post(f"{NS}/alice/{path}", headers=served.h("alice"), json=body)
    err = assert_error(r, 422, "InvalidInput")
    assert f"body.{shape}." in str(err["message"]) and other not in str(err["message"])
    locs = [e["loc"] for e in err["detail"]["errors"]]  # type: ignore[index]
    assert locs and all(loc[1] == shape for loc in locs)


def test_a_body_of_no_shape_keeps_every_shapes_errors(served: Served) -> None:
    r = served.client.post(f"{NS}/alice/events", headers=served.h("alice"), json=[1])
    msg = str(assert_error(r, 422, "InvalidInput")["message"])
    assert "EventIn" in msg and "EventsIn" in msg
