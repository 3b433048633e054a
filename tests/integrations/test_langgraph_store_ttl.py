"""`BranchmemStore`'s TTL refresh beyond the contract's cases
(test_langgraph_store_contract.py): random operations against a naive
reference of what `BaseStore` documents, on every backend; a refresh by one
`Store` seen by another on the same SQLite file; reads in a run and at an
anchor; what a read costs without TTLs; erasure; bad input."""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Annotated, Any, TypedDict

import pytest

pytest.importorskip("langgraph")

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langgraph.graph import START, StateGraph
from langgraph.store.base import BaseStore

from branchmem import InvalidInput, Store
from branchmem.integrations.langgraph import BranchmemSaver, BranchmemStore, _ttl
from branchmem.integrations.langgraph import _keys as k
from helpers.hand_clock import Clock
from helpers.pg_helpers import PG_URL, SKIP_REASON, Tracer, open_backend

NS = ("user", "facts")
BACKENDS = [
    "memory",
    "sqlite",
    pytest.param("postgres", marks=pytest.mark.skipif(not PG_URL, reason=SKIP_REASON)),
]


Opener = Callable[[Clock], Store]


@pytest.fixture(params=BACKENDS)
def opener(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Opener]:
    opened: list[Store] = []

    def open_store(clock: Clock) -> Store:
        if request.param == "memory":
            s = Store(clock=clock)
        elif request.param == "postgres":
            s = Store(backend=open_backend(Tracer()), clock=clock)
        else:
            s = Store(tmp_path / f"s{len(opened)}.db", clock=clock)
        opened.append(s)
        return s

    yield open_store
    for s in opened:
        s.close()


# ------------------------------------------------------------ the reference
class Reference:
    """LangGraph's documented TTL, naively: an item with a ttl expires ``ttl``
    minutes after its put or its last refreshing read, and is then gone."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self.items: dict[tuple[tuple[str, ...], str], dict[str, Any]] = {}

    def _alive(self) -> dict[tuple[tuple[str, ...], str], dict[str, Any]]:
        now = self.clock()
        return {i: d for i, d in self.items.items() if d["end"] is None or d["end"] > now}

    def _renew(self, ident: tuple[tuple[str, ...], str]) -> None:
        d = self.items[ident]
        if d["ttl"] is not None:
            d["end"] = self.clock() + d["ttl"] * 60

    def put(self, ns: tuple[str, ...], key: str, v: int, ttl: float | None) -> None:
        old = self._alive().get((ns, key))
        now = self.clock()
        self.items[(ns, key)] = {
            "v": v, "ttl": ttl, "end": None if ttl is None else now + ttl * 60,
            "created": old["created"] if old else now,
        }  # fmt: skip

    def delete(self, ns: tuple[str, ...], key: str) -> None:
        self.items.pop((ns, key), None)

    def get(self, ns: tuple[str, ...], key: str, refresh: bool) -> int | None:
        d = self._alive().get((ns, key))
        if d is None:
            return None
        if refresh:
            self._renew((ns, key))
        return int(d["v"])

    def search(self, ns: tuple[str, ...], limit: int, refresh: bool) -> list[Any]:
        live = sorted(
            ((i, d) for i, d in self._alive().items() if i[0] == ns), key=lambda x: x[1]["created"]
        )[:limit]
        if refresh:
            for i, _ in live:
                self._renew(i)
        return [(i[1], d["v"]) for i, d in live]

    def spaces(self) -> list[tuple[str, ...]]:
        return sorted({i[0] for i in self._alive()})


SPACES = [("t",), ("t",), ("u",)]
WAIT = st.tuples(st.just("wait"), st.none(), st.just(0.6), st.none())  # (two: past a ttl of 1)
READ = st.one_of(
    st.tuples(st.just("get"), st.sampled_from(SPACES), st.sampled_from("ab"), st.booleans()),
    st.tuples(st.just("search"), st.sampled_from(SPACES), st.sampled_from([1, 2, 10]),
              st.booleans()),
)  # fmt: skip
op = st.one_of(
    st.tuples(st.just("put"), st.sampled_from(SPACES), st.sampled_from("ab"),
              st.sampled_from([None, 1.0, 1.0, 1.5])),
    WAIT, READ, WAIT, READ,
    st.tuples(st.just("del"), st.sampled_from(SPACES), st.sampled_from("ab"), st.none()),
    st.tuples(st.just("list"), st.none(), st.none(), st.none()),
)  # fmt: skip


def _play(
    ops: list[Any], store: BaseStore | None, ref: Reference | None, clock: Clock
) -> list[Any]:
    out: list[Any] = []
    for n, (kind, ns, a, b) in enumerate(ops):
        clock.t += 1.0  # (a second per step: no two puts share a created_at)
        if kind == "wait":
            clock.minutes(a)
        elif kind == "put":
            store.put(ns, a, {"v": n}, ttl=b) if store else ref.put(ns, a, n, b)  # type: ignore[union-attr]
        elif kind == "del":
            store.delete(ns, a) if store else ref.delete(ns, a)  # type: ignore[union-attr]
        elif kind == "get":
            if store is not None:
                item = store.get(ns, a, refresh_ttl=b)
                out.append(None if item is None else item.value["v"])
            else:
                out.append(ref.get(ns, a, b))  # type: ignore[union-attr]
        elif kind == "search":
            if store is not None:
                hits = store.search(ns, limit=a, refresh_ttl=b)
                out.append([(i.key, i.value["v"]) for i in hits])
            else:
                out.append(ref.search(ns, a, b))  # type: ignore[union-attr]
        else:
            out.append(store.list_namespaces() if store is not None else ref.spaces())  # type: ignore[union-attr]
    return out


@settings(
    max_examples=100, deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)  # fmt: skip
@given(st.lists(op, min_size=10, max_size=40))
def test_random_operations_expire_and_refresh_as_documented(opener: Opener, ops: list[Any]) -> None:
    c1, c2 = Clock(), Clock()
    got = _play(ops, BranchmemStore(opener(c1)), None, c1)
    assert got == _play(ops, None, Reference(c2), c2)


# ---------------------------------------------------------- where it is seen
def test_a_refresh_by_one_store_is_seen_by_another_on_the_file(tmp_path: Path) -> None:
    clock = Clock()
    with Store(tmp_path / "s.db", clock=clock) as a, Store(tmp_path / "s.db", clock=clock) as b:
        sa, sb = BranchmemStore(a), BranchmemStore(b)
        sa.put(NS, "k", {"v": 1}, ttl=1)
        sa.put(NS, "j", {"v": 2}, ttl=1)
        assert len(sb.search(NS, refresh_ttl=False)) == 2  # b's long-term view is built
        clock.minutes(0.75)
        assert sa.get(NS, "k") is not None  # a refreshes k
        clock.minutes(0.5)  # 1.25: j is gone, and b sees a's refresh of k
        assert sb.get(NS, "k", refresh_ttl=False) is not None
        assert sb.get(NS, "j") is None and sa.get(NS, "j") is None
        assert [i.key for i in sb.search(NS, query="v")] == ["k"]  # b refreshes k
        clock.minutes(0.75)  # 2.0: a sees b's refresh
        assert sa.get(NS, "k", refresh_ttl=False) is not None
        clock.minutes(0.5)
        assert sa.get(NS, "k") is None and sb.list_namespaces() == []


class State(TypedDict):
    seen: Annotated[list[Any], operator.add]


def test_reads_in_a_run_and_at_an_anchor_refresh(opener: Opener) -> None:
    clock = Clock()
    mem = opener(clock)
    store = BranchmemStore(mem)
    store.put(NS, "bare", {"v": 0}, ttl=1)

    def node(state: State, *, store: BaseStore) -> dict[str, Any]:
        if not state["seen"]:
            store.put(NS, "mine", {"v": 1}, ttl=1)
        got = store.get(NS, "bare"), store.get(NS, "mine")
        return {"seen": [[None if g is None else g.value["v"] for g in got]]}

    graph = StateGraph(State)
    graph.add_node("read", node)
    graph.add_edge(START, "read")
    app = graph.compile(checkpointer=BranchmemSaver(mem), store=store)
    config = {"configurable": {"thread_id": "t"}}
    assert app.invoke({"seen": []}, config)["seen"] == [[0, 1]]
    clock.minutes(0.75)
    assert app.invoke({"seen": []}, config)["seen"][-1] == [0, 1]  # refreshes both
    clock.minutes(0.5)
    assert store.get(NS, "bare", refresh_ttl=False) is not None
    assert store.at(config).get(NS, "mine", refresh_ttl=False) is not None
    mem.add_event("e1")
    at = store.at("e1")
    at.put(NS, "anchored", {"v": 2}, ttl=1)
    clock.minutes(0.75)
    assert at.get(NS, "anchored") is not None and at.search(NS)[0].key == "anchored"
    clock.minutes(0.5)
    assert at.get(NS, "anchored", refresh_ttl=False) is not None
    assert store.get(NS, "bare") is None  # refreshed at 0.75 for the last time
    assert store.at(config).get(NS, "mine") is None


# ------------------------------------------------------------------- costs
def test_reads_look_up_and_write_only_for_items_with_a_ttl(
    opener: Opener, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = Clock()
    mem = opener(clock)
    store = BranchmemStore(mem, ttl={"refresh_on_read": True})
    lookups: list[int] = []
    touches: list[int] = []
    real_last_used, real_touch = _ttl.last_used, Store.touch
    monkeypatch.setattr(
        _ttl, "last_used", lambda s, ns, ids: lookups.append(len(ids)) or real_last_used(s, ns, ids)
    )
    monkeypatch.setattr(
        Store,
        "touch",
        lambda self, ids, **kw: touches.append(len(ids)) or real_touch(self, ids, **kw),
    )
    for i in range(20):
        store.put(NS, f"k{i}", {"v": i})

    def read_all() -> None:
        store.get(NS, "k1")
        store.get(NS, "t1")
        store.search(NS, limit=100)
        store.search(NS, filter={"v": 3})
        store.list_namespaces()

    read_all()
    assert lookups == [] and touches == []  # no ttl anywhere: nothing more
    for i in range(5):
        store.put(NS, f"t{i}", {"v": i}, ttl=1)
    clock.minutes(0.75)
    read_all()  # within their first minute: refreshed, never looked up
    assert lookups == [] and touches == [1, 5, 1]
    clock.minutes(0.5)  # the first minute is over, the refresh keeps them
    del touches[:]
    read_all()
    assert lookups == [1, 5, 1, 5] and touches == [1, 5, 1]  # one lookup a read


# ------------------------------------------------------------ erasure, input
def test_an_expired_item_put_again_with_the_same_value_is_back(opener: Opener) -> None:
    """A put after expiry writes the item again, whatever its value: an expired
    record with the same key and text is not taken for it (a put once went
    through "one fact once" and got the expired record back)."""
    clock = Clock()
    mem = opener(clock)
    for store in (BranchmemStore(mem), BranchmemStore(mem).at(k.SHARED_EVENT)):
        store.put(NS, "a", {"text": "tea"}, ttl=1)
        clock.minutes(2)
        assert store.get(NS, "a") is None
        store.put(NS, "a", {"text": "tea"})
        item = store.get(NS, "a")
        assert item is not None and item.value == {"text": "tea"}
        clock.minutes(10**6)
        assert store.get(NS, "a") is not None  # put without a ttl: no expiry
        store.delete(NS, "a")


def test_a_purge_erases_refreshed_items_and_their_use(opener: Opener) -> None:
    clock = Clock()
    mem = opener(clock)
    store = BranchmemStore(mem)
    store.put(NS, "k", {"v": 1}, ttl=1)
    store.put(NS, "j", {"v": 2}, ttl=1)
    assert store.get(NS, "k") is not None and store.get(NS, "j") is not None  # refreshed
    ids = [m.id for m in mem.memories(at=k.SHARED_EVENT)]
    backend = mem._engine.backend
    with backend.reading():
        assert set(backend.get_life("default", ids)) == set(ids)
    mem.purge(memories=ids[:1])
    with backend.reading():
        assert set(backend.get_life("default", ids)) == set(ids[1:])
    mem.purge(whole_namespace=True)
    with backend.reading():
        assert backend.get_life("default", ids) == {}
        assert backend.get_records("default", ids) == {}


def test_a_read_only_store_reads_without_refreshing(tmp_path: Path) -> None:
    clock = Clock()
    with Store(tmp_path / "s.db", clock=clock) as mem:
        BranchmemStore(mem).put(NS, "k", {"v": 1}, ttl=1)
    with Store(tmp_path / "s.db", clock=clock, readonly=True) as ro:
        store = BranchmemStore(ro)
        clock.minutes(0.75)
        assert store.get(NS, "k") is not None  # (no refresh recorded)
        clock.minutes(0.5)
        assert store.get(NS, "k") is None


@pytest.mark.parametrize("ttl", ["1", float("nan"), float("inf"), -1, True])
def test_a_bad_ttl_is_refused(ttl: Any) -> None:
    store = BranchmemStore(Store())
    with pytest.raises(InvalidInput, match="ttl"):
        store.put(NS, "k", {"v": 1}, ttl=ttl)
