"""LangGraph's store semantics on BranchmemStore within one branch (ported from the
behaviour LangGraph's own store tests check on InMemoryStore), and a property:
on a random tree, a view at any anchor equals replaying the writes on its path."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langgraph")

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langgraph.store.base import (
    GetOp,
    InvalidNamespaceError,
    ListNamespacesOp,
    MatchCondition,
    PutOp,
    SearchOp,
)

from branchmem import InvalidInput, Store
from branchmem.integrations.langgraph import BranchmemStore


@pytest.fixture(params=["memory", "sqlite"])
def view(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[BranchmemStore]:
    mem = Store() if request.param == "memory" else Store(tmp_path / "s.db")
    mem.add_event("e1")
    yield BranchmemStore(mem).at("e1")
    mem.close()


@pytest.mark.parametrize(
    "namespace",
    [(), ("",), ("a", ""), ("a.b",), ("langgraph", "x"), ("a", 1)],
)
def test_invalid_namespaces_are_refused(view: BranchmemStore, namespace: Any) -> None:
    with pytest.raises(InvalidNamespaceError):
        view.put(namespace, "k", {"v": 1})


def test_batch_validates_labels_too(view: BranchmemStore) -> None:
    with pytest.raises(InvalidNamespaceError):
        view.batch([PutOp(("a.b",), "k", {"v": 1})])
    with pytest.raises(InvalidNamespaceError):
        view.batch([SearchOp(("",))])


def test_put_get_update_keeps_created_at(view: BranchmemStore) -> None:
    view.put(("docs",), "d1", {"text": "one"})
    first = view.get(("docs",), "d1")
    assert first is not None and first.value == {"text": "one"}
    view.put(("docs",), "d1", {"text": "two"})
    second = view.get(("docs",), "d1")
    assert second is not None and second.value == {"text": "two"}
    assert second.created_at == first.created_at
    assert second.updated_at >= first.updated_at
    assert view.get(("docs",), "missing") is None
    assert view.get(("other",), "d1") is None


def test_put_none_deletes_and_delete_deletes(view: BranchmemStore) -> None:
    view.put(("docs",), "a", {"x": 1})
    view.put(("docs",), "b", {"x": 2})
    view.batch([PutOp(("docs",), "a", None)])
    view.delete(("docs",), "b")
    assert view.get(("docs",), "a") is None and view.get(("docs",), "b") is None
    view.delete(("docs",), "never-there")  # a no-op, like InMemoryStore


def test_a_value_that_is_not_json_is_refused_and_nothing_is_written(
    view: BranchmemStore,
) -> None:
    with pytest.raises(InvalidInput, match="JSON"):
        view.batch([PutOp(("n",), "ok", {"v": 1}), PutOp(("n",), "bad", {"v": object()})])
    assert view.get(("n",), "ok") is None
    with pytest.raises(InvalidInput, match="JSON"):
        view.put(("n",), "nan", {"v": float("nan")})


def test_values_go_through_the_stores_redactor() -> None:
    from branchmem import Redactor

    mem = Store(redactor=Redactor())
    mem.add_event("e1")
    view = BranchmemStore(mem).at("e1")
    view.put(("u",), "phone", {"text": "我的手机 13812345678", "n": 1, "tags": ["13812345678"]})
    item = view.get(("u",), "phone")
    assert item is not None and "13812345678" not in str(item.value)
    assert item.value["n"] == 1
    assert [i.key for i in view.search(("u",), query="手机")] == ["phone"]


def test_batch_reads_see_the_state_before_its_writes(view: BranchmemStore) -> None:
    out = view.batch(
        [
            PutOp(("n",), "k", {"v": 1}),
            GetOp(("n",), "k"),
            PutOp(("n",), "k", {"v": 2}),
        ]
    )
    assert out == [None, None, None]
    item = view.get(("n",), "k")
    assert item is not None and item.value == {"v": 2}  # the last write wins


def test_search_filters_limit_offset_and_order(view: BranchmemStore) -> None:
    docs = {
        "a": {"color": "red", "score": 4.5, "tags": {"lang": "zh"}},
        "b": {"color": "blue", "score": 3.0, "tags": {"lang": "en"}},
        "c": {"color": "red", "score": 2.0, "tags": {"lang": "en"}},
    }
    for key, value in docs.items():
        view.put(("test", "docs"), key, value)
    view.put(("test", "other"), "z", {"color": "red", "score": 9.0})
    assert [i.key for i in view.search(("test",))] == ["a", "b", "c", "z"]  # insertion order
    assert [i.key for i in view.search(("test", "docs"), filter={"color": "red"})] == ["a", "c"]
    assert [i.key for i in view.search(("test",), filter={"score": {"$gt": 3.0}})] == ["a", "z"]
    assert [i.key for i in view.search(("test",), filter={"score": {"$lte": 3.0}})] == ["b", "c"]
    assert [i.key for i in view.search(("test",), filter={"color": {"$ne": "red"}})] == ["b"]
    nested = view.search(("test",), filter={"tags": {"lang": "en"}})
    assert [i.key for i in nested] == ["b", "c"]
    assert [i.key for i in view.search(("test",), limit=2)] == ["a", "b"]
    assert [i.key for i in view.search(("test",), limit=2, offset=2)] == ["c", "z"]
    assert view.search(("nothing",)) == []
    # an update keeps the item's place
    view.put(("test", "docs"), "a", {"color": "green", "score": 0.0})
    assert [i.key for i in view.search(("test", "docs"))] == ["a", "b", "c"]


def test_search_with_a_query_ranks_matches_first(view: BranchmemStore) -> None:
    view.put(("m",), "1", {"text": "用户喜欢喝咖啡"})
    view.put(("m",), "2", {"text": "用户下个月搬去杭州"})
    hits = view.search(("m",), query="搬去哪个城市")
    assert hits[0].key == "2"
    assert hits[0].score is not None and hits[0].score > 0


def test_semantic_index_with_a_project_embedder(tmp_path: Path) -> None:
    mem = Store()
    mem.add_event("e1")
    view = BranchmemStore(mem, index={"embed": "hashing", "fields": ["text"]}).at("e1")
    view.put(("m",), "1", {"text": "用户喜欢喝咖啡", "n": 1})
    view.put(("m",), "2", {"text": "用户下个月搬去杭州", "n": 2})
    view.put(("m",), "3", {"text": "用户对花生过敏"}, index=False)
    hits = view.search(("m",), query="搬去杭州")
    assert hits[0].key == "2"
    assert {h.key for h in hits} == {"1", "2", "3"}  # unindexed items come last
    with pytest.raises(InvalidInput, match="embed"):
        BranchmemStore(mem, index={"fields": ["text"]})


def test_list_namespaces_matching(view: BranchmemStore) -> None:
    for ns in [("a", "b", "c"), ("a", "b", "d"), ("a", "x"), ("b", "c"), ("users", "1", "prefs")]:
        view.put(ns, "k", {"v": 1})
    assert view.list_namespaces() == [
        ("a", "b", "c"), ("a", "b", "d"), ("a", "x"), ("b", "c"), ("users", "1", "prefs"),
    ]  # fmt: skip
    assert view.list_namespaces(prefix=("a",)) == [("a", "b", "c"), ("a", "b", "d"), ("a", "x")]
    assert view.list_namespaces(suffix=("c",)) == [("a", "b", "c"), ("b", "c")]
    assert view.list_namespaces(prefix=("a", "*", "d")) == [("a", "b", "d")]
    assert view.list_namespaces(max_depth=2) == [
        ("a", "b"), ("a", "x"), ("b", "c"), ("users", "1"),
    ]  # fmt: skip
    assert view.list_namespaces(limit=2, offset=1) == [("a", "b", "d"), ("a", "x")]
    cond = MatchCondition(match_type="prefix", path=("users",))
    assert view.batch([ListNamespacesOp(match_conditions=(cond,))]) == [[("users", "1", "prefs")]]
    view.delete(("a", "x"), "k")
    assert ("a", "x") not in view.list_namespaces()


def test_ttl_expires_items(view: BranchmemStore) -> None:
    view.put(("t",), "short", {"v": 1}, ttl=0.0005)  # minutes: 30 ms
    view.put(("t",), "long", {"v": 2}, ttl=60)
    time.sleep(0.1)
    assert view.get(("t",), "short") is None
    assert view.get(("t",), "long") is not None


# --------------------------------------------------------------------- property
_ops = st.lists(
    st.tuples(
        st.integers(0, 30),  # parent pick (modulo the events so far)
        st.lists(
            st.tuples(st.sampled_from(["k1", "k2", "k3"]), st.one_of(st.none(), st.integers(0, 5))),
            max_size=3,
        ),
    ),
    min_size=1,
    max_size=12,
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_ops)
def test_a_view_equals_replaying_the_writes_on_its_path(steps: list[Any]) -> None:
    """Events arrive parent first; each event's writes (value None: delete) happen
    right after it arrives. At every anchor, the store shows exactly the
    dict obtained by applying the writes on the anchor's path in order."""
    mem = Store()
    store = BranchmemStore(mem)
    parents: dict[str, str | None] = {}
    writes: dict[str, list[tuple[str, int | None]]] = {}
    for i, (pick, ops) in enumerate(steps):
        ev = f"e{i}"
        parent = f"e{pick % i}" if i else None
        mem.add_event(ev, parent=parent)
        parents[ev], writes[ev] = parent, ops
        view = store.at(ev)
        for key, value in ops:
            if value is None:
                view.delete(("ns",), key)
            else:
                view.put(("ns",), key, {"v": value})
    for ev in parents:
        path: list[str] = []
        node: str | None = ev
        while node is not None:
            path.append(node)
            node = parents[node]
        expected: dict[str, int] = {}
        for step in reversed(path):
            for key, value in writes[step]:
                if value is None:
                    expected.pop(key, None)
                else:
                    expected[key] = value
        got = {i.key: i.value["v"] for i in store.at(ev).search(("ns",), limit=100)}
        assert got == expected, ev
