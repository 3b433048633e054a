"""Every batch is all or none, on every backend, whichever namespaces it spans."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from branchmem import BranchmemError, Store
from raw_state import raw_state

NAMESPACES = ["A", "B", "C"]


def _base(store: Store) -> None:
    for ns in NAMESPACES[:2]:
        store.add_events(
            [{"id": "root", "namespace": ns}, {"id": "x", "parent": "root", "namespace": ns}]
        )
        store.add_memory("old", sources=["x"], id="mem", namespace=ns)


def _refused(store: Store, write: Callable[[], object]) -> None:
    """``write`` raises a `BranchmemError` and leaves the store exactly as it was."""
    before = raw_state(store)
    with pytest.raises(BranchmemError):
        write()
    assert raw_state(store) == before


def test_cross_namespace_events_example(make_store: Callable[[], Store]) -> None:
    store = make_store()
    _base(store)
    bad = [{"id": "a1", "namespace": "A"}, {"id": "x", "namespace": "B", "content": "other"}]
    _refused(store, lambda: store.add_events(bad))


def test_cross_namespace_memories_example(make_store: Callable[[], Store]) -> None:
    store = make_store()
    _base(store)
    bad = [
        {"content": "new", "sources": ["x"], "namespace": "A"},
        {"content": "changed", "sources": ["x"], "id": "mem", "namespace": "B"},
    ]
    _refused(store, lambda: store.add_memories(bad))


GOOD_EVENT = st.builds(
    lambda i, ns, parent: {"id": f"n{i}", "namespace": ns, "parent": parent},
    st.integers(0, 30),
    st.sampled_from(NAMESPACES),
    st.sampled_from([None, "root", "x", "later"]),
)
BAD_EVENT = st.sampled_from(
    [
        {"id": "x", "namespace": "A", "content": "not what was stored"},  # conflicting re-add
        {"id": "x", "namespace": "B", "parent": "x"},  # a cycle on itself
        {"id": "", "namespace": "C"},  # an invalid id
        {"id": "ok", "namespace": "A", "role": 5},  # an invalid field
        {"id": "root", "namespace": "B", "parent": "x"},  # re-add with another parent
    ]
)
GOOD_MEMORY = st.builds(
    lambda i, ns, src: {"content": f"fact {i}", "sources": [src], "namespace": ns, "id": f"f{i}"},
    st.integers(0, 30),
    st.sampled_from(NAMESPACES),
    st.sampled_from(["root", "x", "ghost"]),
)
BAD_MEMORY = st.sampled_from(
    [
        {"content": "changed", "sources": ["x"], "id": "mem", "namespace": "A"},
        {"content": "changed", "sources": ["root"], "id": "mem", "namespace": "B"},
        {"content": "x", "sources": [], "namespace": "C"},
        {"content": 7, "sources": ["x"], "namespace": "A"},
        {"content": "x", "sources": ["x"], "namespace": "B", "importance": "high"},
    ]
)


def _batch(draw: st.DrawFn, good: Any, bad: Any) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = draw(st.lists(good, max_size=8, unique_by=lambda d: d["id"]))
    items.insert(draw(st.integers(0, len(items))), draw(bad))
    return items


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_a_failing_item_anywhere_leaves_the_store_as_before(
    make_store: Callable[[], Store], data: st.DataObject
) -> None:
    store = make_store()
    _base(store)
    if data.draw(st.booleans()):
        batch = data.draw(st.composite(lambda d: _batch(d, GOOD_EVENT, BAD_EVENT))())
        _refused(store, lambda: store.add_events(batch))
    else:
        batch = data.draw(st.composite(lambda d: _batch(d, GOOD_MEMORY, BAD_MEMORY))())
        _refused(store, lambda: store.add_memories(batch))
