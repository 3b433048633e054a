"""``search(..., filter=)``: LangGraph-style conditions after the gate, before ranking,
the same on every backend, checked against a plain-Python reading of the rule."""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from branchmem import InvalidInput, Store

TOPICS = ["food", "health", "work", None]
KINDS = ["semantic", "episodic"]


def seed(store: Store, rows: list[tuple[str, str | None, float, int]]) -> None:
    store.add_events([{"id": "e1"}, {"id": "e2", "parent": "e1"}, {"id": "x", "parent": "e1"}])
    for i, (kind, topic, imp, n) in enumerate(rows):
        meta: dict[str, Any] = {"n": n}
        if topic is not None:
            meta["topic"] = topic
        store.add_memory(
            f"杭州 记录{i}", sources=["e2"], id=f"m{i}", kind=kind, importance=imp, meta=meta
        )
    store.add_memory("杭州 别的分支", sources=["x"], id="hidden", meta={"topic": "food"})


OPS: dict[str, Callable[[Any, Any], bool]] = {
    "$eq": operator.eq,
    "$ne": operator.ne,
    "$gt": operator.gt,
    "$gte": operator.ge,
    "$lt": operator.lt,
    "$lte": operator.le,
}


def reference(m: Any, flt: dict[str, Any]) -> bool:
    """The documented rule, plainly: a missing field fails all but $ne; order only
    between numbers or between strings; True is not 1."""
    for name, cond in flt.items():
        conds = cond if isinstance(cond, dict) else {"$eq": cond}
        if name.startswith("meta."):
            have = (m.meta or {}).get(name[5:], "<missing>")
        else:
            have = getattr(m, name)
        for op, x in conds.items():
            if have == "<missing>" or have is None:
                if op != "$ne":
                    return False
                continue
            if op == "$in":
                ok = any(type(have) is type(y) and have == y for y in x) or any(
                    isinstance(have, (int, float))
                    and not isinstance(have, bool)
                    and isinstance(y, (int, float))
                    and not isinstance(y, bool)
                    and have == y
                    for y in x
                )
            elif op in ("$eq", "$ne"):
                same = isinstance(have, bool) == isinstance(x, bool) and have == x
                ok = same if op == "$eq" else not same
            else:
                num = (int, float)
                comparable = (
                    isinstance(have, num) and isinstance(x, num) and not isinstance(have, bool)
                ) or (isinstance(have, str) and isinstance(x, str))
                ok = comparable and OPS[op](have, x)
            if not ok:
                return False
    return True


def test_the_example_of_the_docs(store: Store) -> None:
    seed(
        store,
        [
            ("semantic", "food", 0.5, 1),
            ("episodic", "food", 0.5, 2),
            ("semantic", "work", 0.5, 3),
            ("semantic", "health", 0.9, 4),
        ],
    )
    flt = {"kind": "semantic", "meta.topic": {"$in": ["food", "health"]}, "meta.n": {"$gte": 1}}
    hits = store.search("杭州", at="e2", k=10, embedder="hashing", filter=flt, cutoff="off")
    assert sorted(h.memory.id for h in hits) == ["m0", "m3"]  # never "hidden" (the gate)
    late = store.search(
        "杭州", at="e2", k=10, embedder="hashing", cutoff="off", filter={"importance": {"$gt": 0.6}}
    )
    assert [h.memory.id for h in late] == ["m3"]


@pytest.mark.parametrize(
    "bad",
    [
        "kind",
        {"colour": "red"},
        {"kind": {"$like": "sem"}},
        {"kind": {}},
        {"meta.topic": {"$in": "food"}},
        {"meta.n": {"$gt": None}},
        {"meta.n": {"$gt": [1]}},
        {"meta.n": float("nan")},
    ],
)
def test_bad_filters_are_refused(store: Store, bad: Any) -> None:
    seed(store, [("semantic", "food", 0.5, 1)])
    with pytest.raises(InvalidInput):
        store.search("杭州", at="e2", embedder="hashing", filter=bad)


values = st.one_of(
    st.sampled_from(["food", "health", "work", "semantic", "episodic"]),
    st.integers(0, 4),
    st.sampled_from([0.5, 0.9, True]),
)
conditions = st.one_of(
    values,
    st.dictionaries(st.sampled_from(list(OPS)), values, min_size=1, max_size=2),
    st.fixed_dictionaries({"$in": st.lists(values, max_size=3)}),
)
filters = st.dictionaries(
    st.sampled_from(["kind", "meta.topic", "meta.n", "importance", "key"]),
    conditions,
    max_size=3,
)
rows = st.lists(
    st.tuples(
        st.sampled_from(KINDS),
        st.sampled_from(TOPICS),
        st.sampled_from([0.5, 0.9]),
        st.integers(0, 4),
    ),
    min_size=1,
    max_size=6,
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(rows=rows, flt=filters)
def test_filter_matches_the_reference(
    make_store: Callable[[], Store], rows: list[Any], flt: dict[str, Any]
) -> None:
    store = make_store()
    seed(store, rows)
    order_on_bool = any(
        isinstance(c, dict)
        and any(op in ("$gt", "$gte", "$lt", "$lte") and v is True for op, v in c.items())
        for c in flt.values()
    )
    if order_on_bool:
        with pytest.raises(InvalidInput):
            store.search("杭州", at="e2", embedder="hashing", filter=flt)
        return
    hits = store.search("杭州", at="e2", k=50, embedder="hashing", filter=flt, cutoff="off")
    want = {m.id for m in store.memories(at="e2") if reference(m, flt)}
    assert {h.memory.id for h in hits} == want
