"""One contract over the four doors: `Store`, `AsyncStore`, `RemoteStore` and
`AsyncRemoteStore` (both over the in-process app, no sockets). The same calls
give the same answers, and the same bad inputs raise the same classes."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from branchmem import (
    AsyncStore,
    BranchmemError,
    InvalidInput,
    Store,
    UnknownAnchor,
    UnknownEvent,
    UnknownMemory,
)
from branchmem.client import AsyncRemoteStore, RemoteStore
from branchmem.validate import MAX_PARENTS
from helpers.server_fixtures import make_served

DOORS = ["Store", "AsyncStore", "RemoteStore", "AsyncRemoteStore"]


class Blocking:
    """An async door driven from plain code: each method call runs to its end on
    this door's own event loop, so one scenario runs on all four doors."""

    def __init__(self, loop: asyncio.AbstractEventLoop, door: Any) -> None:
        self._loop, self._door = loop, door

    def __getattr__(self, name: str) -> Callable[..., Any]:
        method = getattr(self._door, name)

        def call(*args: Any, **kwargs: Any) -> Any:
            got = method(*args, **kwargs)
            return self._loop.run_until_complete(got) if inspect.isawaitable(got) else got

        return call


@pytest.fixture(params=DOORS)
def door(request: pytest.FixtureRequest) -> Iterator[Any]:
    kind = request.param
    if kind == "Store":
        with Store() as s:
            yield s
        return
    loop = asyncio.new_event_loop()
    try:
        if kind == "AsyncStore":
            store: Any = Blocking(loop, AsyncStore())
        else:
            served = make_served()
            key = served.key["owner"]
            if kind == "RemoteStore":
                store = RemoteStore("http://testserver", api_key=key, http_client=served.client)
            else:
                transport = httpx.ASGITransport(app=served.client.app)
                store = Blocking(
                    loop, AsyncRemoteStore("http://testserver", api_key=key, transport=transport)
                )
        yield store
        store.close()
    finally:
        loop.close()


def build(s: Any) -> None:
    """The edit scenario, a branch with a fork, a correction and a merge."""
    s.add_event("e1", role="user", content="你好，我在准备搬家。")
    s.add_event("e2", parent="e1", content="我下个月搬去成都。")
    s.add_event("e2b", parent="e1", content="我下个月搬去杭州。")
    s.add_events([{"id": "e3", "parent": "e2b", "content": "我对花生过敏。"}])
    s.add_memory("用户下个月搬去成都", sources=["e2"], key="city", id="m-cd")
    s.add_memory("用户下个月搬去杭州", sources=["e2b"], key="city", id="m-hz")
    s.add_memories([{"content": "用户对花生过敏", "sources": ["e3"], "id": "m-nut"}])
    s.create_branch("main", at="e3")
    s.create_branch("trip", at="main")
    s.remember("用户订了去杭州的机票", branch="trip", key="ticket", id="m-ticket")
    s.retract("m-nut", sources=["e3"], id="r-nut")
    s.merge("trip", "main")


def answers(s: Any) -> dict[str, Any]:
    """What the doors must agree on, in plain values (the timestamps are each store's)."""

    def ids(items: list[Any]) -> list[str]:
        return [m.id for m in items]

    d = s.diff("e2", "e2b")
    return {
        "e2b": ids(s.memories(at="e2b")),
        "e2": ids(s.memories(at="e2")),
        "main": ids(s.memories(at="main")),
        "none": s.memories(at=None),
        "chain": ids(s.memories(at=["e2", "main"])),
        "explain": str(s.explain("m-cd", at="e2b")),
        "visible": (s.visible("m-cd", at="e2"), s.visible("m-cd", at="e2b")),
        "path": [e.id for e in s.path("e3")],
        "event": s.get_event("e2").content,
        "memory": s.get_memory("m-hz").sources,
        "heads": sorted((b.name, b.head == s.branch_head(b.name)) for b in s.branches()),
        "versions": s.versions("e2b").to_dict(),
        "children": [e.id for e in s.children("e1")],
        "diff": [[m.id for m in side] for side in (d.only_a, d.only_b)],
        "search": [
            h.memory.id for h in s.search("搬去哪里", at="e2b", k=3, mode="keyword", cutoff="off")
        ],
        "context": s.context(at="e3").text(),
        "snapshot": s.snapshot("main", "v1").event == s.branch_head("main"),
    }


def test_the_same_calls_give_the_same_answers(door: Any) -> None:
    with Store() as reference:
        build(reference)
        want = answers(reference)
    build(door)
    assert answers(door) == want


BAD_CALLS: dict[str, tuple[Callable[[Any], Any], type[BranchmemError]]] = {
    "memories(at=5)": (lambda s: s.memories(at=5), InvalidInput),
    "memories(at=[5])": (lambda s: s.memories(at=["e1", 5]), InvalidInput),
    'search(k="3")': (lambda s: s.search("x", at="e1", k="3"), InvalidInput),
    "search(k=0)": (lambda s: s.search("x", at="e1", k=0), InvalidInput),
    "search(hops=99)": (lambda s: s.search("x", at="e1", hops=99), InvalidInput),
    "search(mode=?)": (lambda s: s.search("x", at="e1", mode="fuzzy"), InvalidInput),
    "search(min_score=2)": (lambda s: s.search("x", at="e1", min_score=2.0), InvalidInput),
    "search(cutoff=?)": (lambda s: s.search("x", at="e1", cutoff="some"), InvalidInput),
    "search(query=NUL)": (lambda s: s.search("\x00", at="e1"), InvalidInput),
    "unknown anchor": (lambda s: s.memories(at="nowhere"), UnknownAnchor),
    "unknown event": (lambda s: s.get_event("nowhere"), UnknownEvent),
    "unknown memory": (lambda s: s.get_memory("nowhere"), UnknownMemory),
    "NUL in content": (lambda s: s.add_event("x", content="a\x00b"), InvalidInput),
    "too many parents": (
        lambda s: s.add_event("x", parent=[f"p{i}" for i in range(MAX_PARENTS + 1)]),
        InvalidInput,
    ),
    "no sources": (lambda s: s.add_memory("m", sources=[]), InvalidInput),
    "path(last=-1)": (lambda s: s.path("e1", last="2"), InvalidInput),
}


@pytest.mark.parametrize("name", sorted(BAD_CALLS))
def test_the_same_bad_inputs_raise_the_same_classes(door: Any, name: str) -> None:
    call, want = BAD_CALLS[name]
    door.add_event("e1", content="你好")
    with pytest.raises(BranchmemError) as got:
        call(door)
    assert type(got.value) is want, got.value
