"""LangGraph's documented `BaseStore` contract, run against LangGraph's own
`InMemoryStore` and against `BranchmemStore` on every backend (bare calls:
the long-term view), so that any difference between them fails here.

Written from `BaseStore`'s docstrings: batch, get/put/delete, search with a
namespace prefix, filters (``$eq $ne $gt $gte $lt $lte``, nested values),
limit/offset, ``list_namespaces`` with prefix/suffix/wildcards/``max_depth``,
an index config with a callable ``embed`` and ``fields`` (``"a.b"``,
``"arr[*].f"``), per-put ``index=False`` or a list of fields,
`SearchItem.score`, TTL (expiry, and its refresh by a read with
``refresh_ttl``, on a controlled clock: InMemoryStore has no TTL, so these
cases check `BranchmemStore` alone against what `BaseStore` documents), and
the async versions. Gating by lineage, the point
of `BranchmemStore`, is tested elsewhere (test_langgraph_longterm.py). Also a
differential property: random operations give the same answers on both.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langgraph")

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langgraph.store.base import (
    BaseStore,
    GetOp,
    InvalidNamespaceError,
    ListNamespacesOp,
    MatchCondition,
    PutOp,
    SearchOp,
)
from langgraph.store.memory import InMemoryStore

from branchmem import Store
from branchmem.integrations.langgraph import BranchmemStore
from helpers.hand_clock import Clock
from helpers.pg_helpers import PG_URL, SKIP_REASON, Tracer, open_backend

KINDS = [
    "in_memory_store",
    "branchmem_memory",
    "branchmem_sqlite",
    pytest.param("branchmem_postgres", marks=pytest.mark.skipif(not PG_URL, reason=SKIP_REASON)),
]


def embed(texts: list[str]) -> list[list[float]]:
    """A deterministic embedding (letter counts) standing in for a model."""
    return [[float(t.count(c)) + 0.01 for c in "abcdefghij"] for t in texts]


Factory = Callable[..., BaseStore]


def _open(
    backend: str, tmp: Path, opened: list[Store], clock: Callable[[], float] = time.time
) -> Store:
    if backend == "memory":
        s = Store(clock=clock)
    elif backend == "postgres":
        s = Store(backend=open_backend(Tracer()), clock=clock)
    else:
        s = Store(tmp / f"store{len(opened)}.db", clock=clock)
    opened.append(s)
    return s


@pytest.fixture(params=KINDS)
def make(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Factory]:
    """A factory of empty stores of one kind: ``make(index=...)``; ``clock=``
    is the branchmem `Store`'s (InMemoryStore has no times to control)."""
    kind = str(request.param)
    opened: list[Store] = []

    def factory(clock: Callable[[], float] = time.time, **kw: Any) -> BaseStore:
        if kind == "in_memory_store":
            return InMemoryStore(**kw)
        return BranchmemStore(_open(kind.split("_")[1], tmp_path, opened, clock), **kw)

    yield factory
    for s in opened:
        s.close()


@pytest.fixture
def store(make: Factory) -> BaseStore:
    return make()


def _keys(items: list[Any]) -> list[str]:
    return [i.key for i in items]


# ------------------------------------------------------------------ basics
def test_put_get_delete(store: BaseStore) -> None:
    assert store.get(("users", "u1"), "prefs") is None
    store.put(("users", "u1"), "prefs", {"theme": "dark", "n": 1})
    item = store.get(("users", "u1"), "prefs")
    assert item is not None
    assert (item.namespace, item.key, item.value) == (
        ("users", "u1"),
        "prefs",
        {"theme": "dark", "n": 1},
    )
    assert item.created_at.tzinfo is not None and item.updated_at >= item.created_at
    store.put(("users", "u1"), "prefs", {"theme": "light"})
    assert store.get(("users", "u1"), "prefs").value == {"theme": "light"}  # type: ignore[union-attr]
    store.delete(("users", "u1"), "prefs")
    assert store.get(("users", "u1"), "prefs") is None
    store.delete(("users", "u1"), "prefs")  # deleting what is not there is fine
    store.put(("users", "u1"), "prefs", {"theme": "again"})
    assert store.get(("users", "u1"), "prefs").value == {"theme": "again"}  # type: ignore[union-attr]


def test_namespaces_are_validated_alike(store: BaseStore) -> None:
    for bad in [(), ("",), ("a.b",), ("langgraph", "x")]:
        with pytest.raises(InvalidNamespaceError):
            store.put(bad, "k", {"v": 1})


def test_batch_results_line_up_and_reads_see_the_state_before(store: BaseStore) -> None:
    store.put(("a",), "k1", {"v": 1})
    results = store.batch(
        [
            GetOp(("a",), "k1"),
            PutOp(("a",), "k2", {"v": 2}),
            SearchOp(("a",)),
            ListNamespacesOp(),
            PutOp(("a",), "k1", None),
            GetOp(("a",), "k2"),
        ]
    )
    assert len(results) == 6
    assert results[0].value == {"v": 1}  # type: ignore[union-attr]
    assert results[1] is None and results[4] is None
    assert _keys(results[2]) == ["k1"]  # type: ignore[arg-type]
    assert results[3] == [("a",)]
    assert results[5] is None  # k2 was not there before the batch
    assert store.get(("a",), "k1") is None and store.get(("a",), "k2") is not None


# ------------------------------------------------------------------ search
def _fill(store: BaseStore) -> None:
    store.put(("docs", "a"), "d1", {"kind": "note", "n": 1, "meta": {"lang": "zh"}, "tags": ["x"]})
    store.put(
        ("docs", "a"), "d2", {"kind": "task", "n": 5, "meta": {"lang": "en"}, "tags": ["x", "y"]}
    )
    store.put(("docs", "b"), "d3", {"kind": "note", "n": 10, "meta": {"lang": "zh"}})
    store.put(("docsx",), "d4", {"kind": "note", "n": 3})


def test_search_by_prefix_in_write_order(store: BaseStore) -> None:
    _fill(store)
    assert _keys(store.search(("docs",))) == ["d1", "d2", "d3"]  # not ("docsx",)
    assert _keys(store.search(("docs", "b"))) == ["d3"]
    assert _keys(store.search(())) == ["d1", "d2", "d3", "d4"]
    assert all(i.score is None for i in store.search(("docs",)))
    store.put(("docs", "a"), "d1", {"kind": "note", "n": 2})  # an update keeps its place
    assert _keys(store.search(("docs",))) == ["d1", "d2", "d3"]
    store.delete(("docs", "a"), "d1")
    store.put(("docs", "a"), "d1", {"kind": "note", "n": 2})  # a new put goes last in its
    assert _keys(store.search(("docs",))) == ["d2", "d1", "d3"]  # namespace (grouped)


@pytest.mark.parametrize(
    ("filt", "want"),
    [
        ({"kind": "note"}, ["d1", "d3", "d4"]),
        ({"kind": {"$eq": "note"}}, ["d1", "d3", "d4"]),
        ({"kind": {"$ne": "note"}}, ["d2"]),
        ({"n": {"$gt": 3}}, ["d2", "d3"]),
        ({"n": {"$gte": 3}}, ["d2", "d3", "d4"]),
        ({"n": {"$lt": 5}}, ["d1", "d4"]),
        ({"n": {"$lte": 5}}, ["d1", "d2", "d4"]),
        ({"n": {"$gt": 1, "$lt": 10}}, ["d2", "d4"]),
        ({"meta": {"lang": "zh"}}, ["d1", "d3"]),
        ({"tags": ["x", "y"]}, ["d2"]),
        ({"kind": "note", "n": 10}, ["d3"]),
        ({"missing": "x"}, []),
    ],
)
def test_search_filters(store: BaseStore, filt: dict[str, Any], want: list[str]) -> None:
    _fill(store)
    assert _keys(store.search((), filter=filt)) == want


def test_search_pagination(store: BaseStore) -> None:
    for i in range(7):
        store.put(("p",), f"k{i}", {"i": i})
    assert _keys(store.search(("p",), limit=3)) == ["k0", "k1", "k2"]
    assert _keys(store.search(("p",), limit=3, offset=3)) == ["k3", "k4", "k5"]
    assert _keys(store.search(("p",), limit=3, offset=6)) == ["k6"]
    assert _keys(store.search(("p",), limit=3, offset=9)) == []
    assert _keys(store.search(("p",), filter={"i": {"$gte": 2}}, limit=2, offset=1)) == ["k3", "k4"]


# --------------------------------------------------------- list_namespaces
def test_list_namespaces(store: BaseStore) -> None:
    for ns in [("a", "b", "c"), ("a", "b", "d"), ("a", "x"), ("z", "b", "c"), ("a",)]:
        store.put(ns, "k", {"v": 1})
    assert store.list_namespaces() == [
        ("a",),
        ("a", "b", "c"),
        ("a", "b", "d"),
        ("a", "x"),
        ("z", "b", "c"),
    ]
    assert store.list_namespaces(prefix=("a", "b")) == [("a", "b", "c"), ("a", "b", "d")]
    assert store.list_namespaces(suffix=("c",)) == [("a", "b", "c"), ("z", "b", "c")]
    assert store.list_namespaces(prefix=("*", "b")) == [
        ("a", "b", "c"),
        ("a", "b", "d"),
        ("z", "b", "c"),
    ]
    assert store.list_namespaces(prefix=("a",), suffix=("d",)) == [("a", "b", "d")]
    assert store.list_namespaces(max_depth=2) == [("a",), ("a", "b"), ("a", "x"), ("z", "b")]
    assert store.list_namespaces(limit=2, offset=1) == [("a", "b", "c"), ("a", "b", "d")]
    assert store.batch(
        [ListNamespacesOp(match_conditions=(MatchCondition("prefix", ("z",)),))]
    ) == [[("z", "b", "c")]]
    store.delete(("a", "x"), "k")
    # InMemoryStore keeps listing a namespace whose last item was deleted (its
    # dict of keys stays behind); a BranchmemStore lists namespaces holding items.
    emptied_listed = ("a", "x") in store.list_namespaces()
    assert emptied_listed == isinstance(store, InMemoryStore)


# ------------------------------------------------------------------- index
INDEX = {"dims": 10, "embed": embed, "fields": ["text", "info.summary", "notes[*].f"]}


def _scored(items: list[Any]) -> list[tuple[str, float | None]]:
    return [(i.key, None if i.score is None else round(i.score, 9)) for i in items]


def _want(query: str, docs: dict[str, list[str]]) -> list[tuple[str, float | None]]:
    """Best field wins: each doc's score is its best text's cosine with the query."""
    q = embed([query])[0]

    def cos(v: list[float]) -> float:
        return sum(a * b for a, b in zip(q, v, strict=False)) / (math.hypot(*q) * math.hypot(*v))

    scores = {k: max(cos(v) for v in embed(t)) for k, t in docs.items() if t}
    ranked = sorted(scores, key=lambda k: -scores[k])
    return [(k, round(scores[k], 9)) for k in ranked] + [
        (k, None) for k, t in docs.items() if not t
    ]


def test_vector_search_with_a_callable_embed_and_field_paths(make: Factory) -> None:
    store = make(index=INDEX)
    store.put(("m",), "1", {"text": "aaab"})
    store.put(("m",), "2", {"info": {"summary": "bbbc"}, "text": "jjj"})
    store.put(("m",), "3", {"notes": [{"f": "ccca"}, {"f": "aaaa"}]})
    store.put(("m",), "4", {"text": "aaaa"}, index=False)
    store.put(("m",), "5", {"other": "bbbb", "text": "aaaa"}, index=["other"])
    got = _scored(store.search(("m",), query="aaa"))
    want = _want("aaa", {"1": ["aaab"], "2": ["jjj", "bbbc"], "3": ["ccca", "aaaa"],
                         "5": ["bbbb"], "4": []})  # fmt: skip
    assert got == want
    assert got[-1] == ("4", None)  # put with index=False: no score, after the scored ones
    page = _scored(store.search(("m",), query="aaa", limit=2, offset=1))
    assert page == want[1:3]
    one = [w for w in want if w[0] == "1"]
    assert _scored(store.search(("m",), query="aaa", filter={"text": "aaab"})) == one
    assert all(i.score is None for i in store.search(("m",)))  # no query: no score


def test_index_on_an_updated_item_follows_the_new_value(make: Factory) -> None:
    store = make(index={"dims": 10, "embed": embed, "fields": ["text"]})
    store.put(("m",), "1", {"text": "aaaa"})
    store.put(("m",), "2", {"text": "bbbb"})
    store.put(("m",), "1", {"text": "cccc"})
    assert _keys(store.search(("m",), query="ccc")) == ["1", "2"]


# -------------------------------------------------------------------- ttl
def test_ttl(make: Factory) -> None:
    store = make()
    if not store.supports_ttl:  # InMemoryStore
        assert isinstance(store, InMemoryStore)
        return
    # On the real clock: 0.002 minutes is 0.12 s, which a loaded machine may
    # spend on the three puts, so only what holds after the sleep is asserted
    # here; the items before their expiry are checked on an injected clock.
    store.put(("t",), "short", {"v": 1}, ttl=0.002)  # minutes
    store.put(("t",), "long", {"v": 2}, ttl=60)
    store.put(("t",), "forever", {"v": 3})
    time.sleep(0.25)
    assert store.get(("t",), "short") is None
    assert store.get(("t",), "long", refresh_ttl=False) is not None
    assert _keys(store.search(("t",), refresh_ttl=True)) == ["long", "forever"]


def test_default_ttl_from_the_ttl_config(make: Factory) -> None:
    clock = Clock()
    if (store := _ttl_store(make, clock, ttl={"default_ttl": 0.5})) is None:
        return
    store.put(("t",), "k", {"v": 1})
    clock.minutes(0.25)
    assert store.get(("t",), "k", refresh_ttl=False) is not None
    clock.minutes(0.5)
    assert store.get(("t",), "k") is None


def _ttl_store(make: Factory, clock: Clock, **kw: Any) -> BaseStore | None:
    """A store on ``clock`` (``None`` for InMemoryStore, which has no TTL)."""
    try:
        store = make(clock=clock, **kw)
    except TypeError:  # InMemoryStore takes no ttl config
        return None
    if not store.supports_ttl:
        assert isinstance(store, InMemoryStore)
        return None
    return store


def test_a_get_refreshes_the_ttl_unless_told_not_to(make: Factory) -> None:
    clock = Clock()
    if (store := _ttl_store(make, clock)) is None:
        return
    store.put(("t",), "a", {"v": 1}, ttl=1)
    store.put(("t",), "b", {"v": 2}, ttl=1)
    store.put(("t",), "c", {"v": 3})
    clock.minutes(0.75)
    assert store.get(("t",), "a") is not None  # refresh_ttl=None: refresh_on_read, True
    assert store.get(("t",), "b", refresh_ttl=False) is not None
    clock.minutes(0.5)  # 1.25: b's minute is over, a's runs from 0.75
    assert store.get(("t",), "b") is None
    assert _keys(store.search(("t",), refresh_ttl=False)) == ["a", "c"]
    clock.minutes(0.55)  # 1.8: a read at 0.75 was its last refresh
    assert store.get(("t",), "a") is None
    assert _keys(store.search(("t",))) == ["c"]  # an item without a ttl never expires


def test_a_search_refreshes_the_items_it_returns(make: Factory) -> None:
    clock = Clock()
    if (store := _ttl_store(make, clock)) is None:
        return
    for key in ["x1", "x2", "x3"]:
        store.put(("t",), key, {"k": key}, ttl=1)
    clock.minutes(0.75)
    assert _keys(store.search(("t",), limit=2)) == ["x1", "x2"]  # (x3 not returned)
    assert _keys(store.search(("t",), filter={"k": "x3"}, refresh_ttl=False)) == ["x3"]
    clock.minutes(0.5)
    assert _keys(store.search(("t",), refresh_ttl=False)) == ["x1", "x2"]
    assert store.list_namespaces() == [("t",)]
    clock.minutes(1.0)  # 2.25: nothing refreshed since 0.75
    assert store.search(("t",)) == [] and store.list_namespaces() == []


def test_refresh_on_read_false_makes_refresh_opt_in(make: Factory) -> None:
    clock = Clock()
    store = _ttl_store(make, clock, ttl={"refresh_on_read": False, "default_ttl": 1})
    if store is None:
        return
    store.put(("t",), "a", {"v": 1})  # default_ttl
    store.put(("t",), "b", {"v": 2})
    store.put(("t",), "c", {"v": 3}, ttl=None)  # an explicit None: no ttl
    clock.minutes(0.75)
    assert store.get(("t",), "a") is not None  # no refresh by default
    assert store.get(("t",), "b", refresh_ttl=True) is not None
    clock.minutes(0.5)
    assert store.get(("t",), "a") is None
    assert store.get(("t",), "b") is not None
    assert store.batch([GetOp(("t",), "b", refresh_ttl=False)])[0] is not None
    clock.minutes(60)
    assert _keys(store.search(("t",))) == ["c"]


def test_an_expired_item_stays_expired(make: Factory) -> None:
    clock = Clock()
    if (store := _ttl_store(make, clock)) is None:
        return
    store.put(("t",), "a", {"v": 1}, ttl=1)
    clock.minutes(1.5)
    for _ in range(2):  # reads that would refresh it, were it there
        assert store.get(("t",), "a", refresh_ttl=True) is None
        assert store.search(("t",), refresh_ttl=True) == []
    clock.minutes(0.1)
    assert store.get(("t",), "a") is None and store.list_namespaces() == []
    store.put(("t",), "a", {"v": 2}, ttl=1)  # a put makes a new item, with a new ttl
    assert store.get(("t",), "a").value == {"v": 2}  # type: ignore[union-attr]


def test_a_put_restarts_the_ttl_or_drops_it(make: Factory) -> None:
    clock = Clock()
    if (store := _ttl_store(make, clock)) is None:
        return
    store.put(("t",), "a", {"v": 1}, ttl=1)
    store.put(("t",), "b", {"v": 1}, ttl=1)
    clock.minutes(0.75)
    store.put(("t",), "a", {"v": 2}, ttl=1)
    store.put(("t",), "b", {"v": 2})  # no ttl now
    clock.minutes(0.5)
    assert store.get(("t",), "a", refresh_ttl=False).value == {"v": 2}  # type: ignore[union-attr]
    clock.minutes(0.5)
    assert store.get(("t",), "a") is None
    clock.minutes(600)
    assert store.get(("t",), "b").value == {"v": 2}  # type: ignore[union-attr]


# ------------------------------------------------------------------ async
def test_async_versions_agree(store: BaseStore) -> None:
    async def go() -> None:
        await store.aput(("a", "b"), "k", {"v": 1})
        await store.aput(("a", "c"), "k", {"v": 2})
        item = await store.aget(("a", "b"), "k")
        assert item is not None and item.value == {"v": 1}
        assert [i.value for i in await store.asearch(("a",), filter={"v": {"$gt": 1}})] == [
            {"v": 2}
        ]
        assert await store.alist_namespaces(prefix=("a",)) == [("a", "b"), ("a", "c")]
        await store.adelete(("a", "b"), "k")
        assert await store.aget(("a", "b"), "k") is None
        assert len(await store.abatch([GetOp(("a", "c"), "k"), SearchOp(("a",))])) == 2

    asyncio.run(go())


# ---------------------------------------------------------- differential
NSS = [("u",), ("u", "a"), ("u", "b"), ("v",)]
LEAVES = [("u", "a"), ("u", "b"), ("v",)]
op = st.one_of(
    st.tuples(st.just("put"), st.sampled_from(NSS), st.sampled_from("xyz"), st.integers(0, 9)),
    st.tuples(st.just("del"), st.sampled_from(NSS), st.sampled_from("xyz"), st.just(0)),
    st.tuples(st.just("get"), st.sampled_from(NSS), st.sampled_from("xyz"), st.just(0)),
    st.tuples(st.just("search"), st.sampled_from([(), *NSS]), st.sampled_from([None, 3, 6]),
              st.integers(0, 3)),
    st.tuples(st.just("list"), st.sampled_from([(), ("u",)]), st.sampled_from([None, 1]),
              st.integers(0, 2)),
)  # fmt: skip


def _run(store: BaseStore, ops: list[Any]) -> list[Any]:
    out: list[Any] = []
    for kind, ns, a, b in ops:
        if kind == "put":
            store.put(ns, a, {"n": b, "text": "abcdefghij"[b] * (b + 1)})  # no ties
        elif kind == "del":
            store.delete(ns, a)
        elif kind == "get":
            item = store.get(ns, a)
            out.append(None if item is None else (item.namespace, item.key, item.value))
        elif kind == "search":
            filt = None if a is None else {"n": {"$lt": a}}
            if ns in LEAVES:  # one namespace: pages in write order
                hits = store.search(ns, filter=filt, limit=3, offset=b)
                out.append([(i.namespace, i.key, i.value) for i in hits])
                hits = store.search(ns, query="ccc", limit=4)
                out.append([(i.key, None if i.score is None else round(i.score, 9)) for i in hits])
            else:  # several: InMemoryStore orders namespaces by their first put ever,
                # BranchmemStore by the oldest item they hold; compare within each
                hits = store.search(ns, filter=filt, limit=99)
                rows = [(i.namespace, i.key, i.value) for i in hits]
                out.append(sorted(rows, key=lambda r: r[0]))  # (stable: write order kept)
                hits = store.search(ns, query="ccc", limit=99)
                out.append(sorted((i.namespace, i.key, round(i.score or 0, 9)) for i in hits))
        else:  # (leaving out what InMemoryStore lists with no item left under it)
            spaces = store.list_namespaces(prefix=ns or None, max_depth=a)
            held = {i.namespace[:a] if a else i.namespace for i in store.search((), limit=99)}
            out.append([sp for sp in spaces if sp in held][b:])
    return out


@pytest.fixture(params=[k for k in KINDS if k != "in_memory_store"])
def branchmem_factory(
    request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[Callable[[], BaseStore]]:
    opened: list[Store] = []
    backend = str(request.param).split("_")[1]
    yield lambda: BranchmemStore(_open(backend, tmp_path, opened), index=dict(INDEX))
    for s in opened:
        s.close()


@settings(
    max_examples=40, deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)  # fmt: skip
@given(st.lists(op, max_size=25))
def test_random_operations_answer_as_in_memory_store(
    branchmem_factory: Callable[[], BaseStore], ops: list[Any]
) -> None:
    assert _run(branchmem_factory(), ops) == _run(InMemoryStore(index=dict(INDEX)), ops)  # type: ignore[arg-type]
