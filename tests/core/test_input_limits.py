"""One nesting limit for JSON values and one range for integers, at every entry
point, checked before anything is written, the same on every backend; reads
of meta stored too deep (before the limit) still work, here and over HTTP."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from branchmem import InvalidInput, Store, UnknownEvent
from branchmem.validate import MAX_DEPTH, MAX_INT, TOO_DEEP, check_int, nesting


def nested(levels: int) -> dict[str, Any]:
    """``{"a": {"a": ... {}}}``: ``levels`` objects deep, built without recursion."""
    inner: dict[str, Any] = {}
    for _ in range(levels - 1):
        inner = {"a": inner}
    return inner


def nested_text(levels: int) -> str:
    return '{"a": ' * (levels - 1) + "{}" + "}" * (levels - 1)


def test_nesting_counts_levels() -> None:
    assert [nesting(v) for v in (1, {}, [], {"a": []}, [[{}]], nested(500))] == [0, 1, 1, 2, 3, 65]
    assert nesting(nested(500), stop=1_000) == 500


@pytest.mark.parametrize("levels", [MAX_DEPTH + 1, 400, 5_000])
def test_meta_over_the_limit_is_refused_and_nothing_is_written(store: Store, levels: int) -> None:
    store.add_event("e1")
    with pytest.raises(InvalidInput, match=f"more than {MAX_DEPTH} levels"):
        store.add_event("deep", parent="e1", meta=nested(levels))
    with pytest.raises(InvalidInput, match="meta of event 'b2'"):
        store.add_events([{"id": "b1"}, {"id": "b2", "meta": {"x": [nested(levels)]}}])
    with pytest.raises(InvalidInput):
        store.add_memory("fact", sources=["e1"], meta=nested(levels))
    m = store.add_memory("fact", sources=["e1"], meta=nested(MAX_DEPTH))
    with pytest.raises(InvalidInput):
        store.supersede(m.id, "fact 2", sources=["e1"], meta=nested(levels))
    for eid in ("deep", "b1", "b2"):
        with pytest.raises(UnknownEvent):
            store.get_event(eid)
    assert [e.id for e in store.events()] == ["e1"]
    assert [r.id for r in store.records()] == [m.id]
    assert nesting(store.get_memory(m.id).meta) == MAX_DEPTH  # the limit itself is taken


def test_search_refuses_a_meta_filter_over_the_limit(store: Store) -> None:
    store.add_event("e1")
    with pytest.raises(InvalidInput, match="meta filter"):
        store.search("x", at="e1", meta=nested(MAX_DEPTH + 1), embedder="hashing")


def store_deep_meta(path: Path, levels: int) -> None:
    """Meta ``levels`` deep written into the file as an older version would have."""
    with Store(path) as s:
        s.add_event("e1")
        s.add_event("deep", parent="e1", meta={"ok": 1})
        s.add_memory("fact", sources=["deep"], id="m1", meta={"ok": 1})
    db = sqlite3.connect(path)
    with db:
        db.execute("UPDATE events SET meta = ? WHERE id = 'deep'", (nested_text(levels),))
        db.execute("UPDATE records SET meta = ? WHERE id = 'm1'", (nested_text(levels),))
    db.close()


@pytest.mark.parametrize("levels", [MAX_DEPTH + 1, 300, 100_000])
def test_meta_stored_too_deep_before_the_limit_still_reads(tmp_path: Path, levels: int) -> None:
    path = tmp_path / "old.db"
    store_deep_meta(path, levels)
    with Store(path) as s:
        for meta in (s.get_event("deep").meta, s.get_memory("m1").meta):
            assert meta == {TOO_DEEP: nested_text(levels)}
        assert [e.id for e in s.path("deep")] == ["e1", "deep"]
        assert [m.id for m in s.memories(at="deep")] == ["m1"]
        assert s.get_event("deep").to_dict()["meta"] == {TOO_DEEP: nested_text(levels)}


def test_meta_within_the_limit_reads_back_whole(tmp_path: Path) -> None:
    with Store(tmp_path / "s.db") as s:
        s.add_event("e1", meta=nested(MAX_DEPTH))
        assert s.get_event("e1").meta == nested(MAX_DEPTH)


BIG = [2**63, 2**64, 10**30]


@pytest.mark.parametrize("value", BIG)
def test_every_integer_parameter_is_range_checked_on_every_backend(
    store: Store, value: int
) -> None:
    store.add_event("e1", content="我在腾讯做产品经理。")
    store.add_memory("用户在腾讯工作", sources=["e1"])
    calls = {
        "offset": lambda: store.events(offset=value),
        "records offset": lambda: store.records(offset=value),
        "limit": lambda: store.events(limit=value),
        "last": lambda: store.path("e1", last=value),
        "k": lambda: store.search("腾讯", at="e1", k=value, embedder="hashing"),
        "window": lambda: store.context("e1", window=value, embedder="hashing"),
        "context k": lambda: store.context("e1", k=value, embedder="hashing"),
        "extract window": lambda: store.extract("e1", window=value),
    }
    for what, call in calls.items():
        with pytest.raises(InvalidInput, match="whole number"):
            call()
        assert what  # named, for the failing line


def test_the_largest_offset_is_taken_on_every_backend(store: Store) -> None:
    store.add_event("e1")
    assert store.events(offset=MAX_INT) == []
    assert store.records(offset=MAX_INT, limit=100_000) == []


def test_check_int_refuses_bools_floats_and_out_of_range() -> None:
    assert check_int(5, "n") == 5
    for bad in (True, 1.0, "1", None, -1):
        with pytest.raises(InvalidInput, match="n must be a whole number of at least 0, got") as e:
            check_int(bad, "n")
        assert str(MAX_INT) not in str(e.value)  # the backends' ceiling helps no one here
    with pytest.raises(InvalidInput, match=f"n must be a whole number from 0 to {MAX_INT}, got"):
        check_int(MAX_INT + 1, "n")
    with pytest.raises(InvalidInput, match="k must be a whole number from 1 to 50, got 0"):
        check_int(0, "k", least=1, most=50)


def test_langgraph_store_refuses_a_value_over_the_limit_before_writing(tmp_path: Path) -> None:
    pytest.importorskip("langgraph")
    from langgraph.store.base import ListNamespacesOp, PutOp, SearchOp

    from branchmem.integrations.langgraph import BranchmemStore

    with Store(tmp_path / "lg.db") as store:
        store.add_event("root")
        lg = BranchmemStore(store).at("root")
        ok = PutOp(("user",), "ok", {"v": 1})
        deep = PutOp(("user",), "deep", nested(MAX_DEPTH - 1))  # in meta: two levels more
        with pytest.raises(InvalidInput, match="more than 62 levels"):
            lg.batch([ok, deep])
        assert store.records() == []  # the batch is refused whole
        lg.put(("user",), "fine", nested(MAX_DEPTH - 2))
        assert lg.get(("user",), "fine").value == nested(MAX_DEPTH - 2)
        for op in (
            SearchOp(("user",), offset=2**63),
            SearchOp(("user",), limit=-1),
            ListNamespacesOp(max_depth=2**64),
        ):
            with pytest.raises(InvalidInput, match="whole number"):
                lg.batch([op])
