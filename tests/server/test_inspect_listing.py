"""Listing for inspection: every event and every record, a page at a time, on every backend."""

from __future__ import annotations

import pytest

from branchmem import InvalidInput, Store


def _history(store: Store) -> None:
    store.add_events(
        [
            {"id": "e1"},
            {"id": "e2", "parent": "e1"},
            {"id": "e2b", "parent": "e1"},
            {"id": "x1", "namespace": "other"},
        ]
    )
    store.add_memory("A", sources=["e2"], id="mA")
    store.add_memory("B", sources=["e2b"], id="mB")
    store.retract("mA", sources=["e2"])
    store.add_memory("secret of another tenant", sources=["x1"], namespace="other")


def test_events_in_arrival_order_by_pages(store: Store) -> None:
    _history(store)
    assert [e.id for e in store.events()] == ["e1", "e2", "e2b"]
    assert [e.id for e in store.events(limit=2)] == ["e1", "e2"]
    assert [e.id for e in store.events(offset=2, limit=2)] == ["e2b"]
    assert store.events(offset=3) == []
    assert [e.id for e in store.events(namespace="other")] == ["x1"]
    assert store.events(namespace="nosuch") == []


def test_records_list_every_record_whatever_its_visibility(store: Store) -> None:
    _history(store)
    got = store.records()
    assert [m.id for m in got][:2] == ["mA", "mB"]
    assert len(got) == 3 and got[2].target == "mA"  # the retraction is a record too
    assert [m.id for m in store.records(offset=1, limit=1)] == ["mB"]
    assert [m.content for m in store.records(namespace="other")] == ["secret of another tenant"]
    # The gate still decides what a read shows.
    assert [m.id for m in store.memories(at="e2")] == []
    assert [m.id for m in store.memories(at="e2b")] == ["mB"]


@pytest.mark.parametrize("bad", [{"offset": -1}, {"limit": 0}, {"limit": "10"}, {"offset": True}])
def test_bad_pages_are_refused(store: Store, bad: dict[str, object]) -> None:
    with pytest.raises(InvalidInput):
        store.events(**bad)  # type: ignore[arg-type]
    with pytest.raises(InvalidInput):
        store.records(**bad)  # type: ignore[arg-type]
