"""Rows a backend hands out never alias what it stores, on every backend.

Batch ingest plans on the rows `get_events` returns and gives waiting ones a
position before anything is written; a plan may then fail (a later namespace
of the same batch is refused). The memory backend used to hand out its stored
rows themselves, so planning wrote into the store.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from branchmem import BranchmemError, Event, Store
from helpers.raw_state import stored_state as _stored


def test_changing_rows_read_changes_nothing_stored(store: Store) -> None:
    store.add_events([{"id": "r"}, {"id": "a", "parent": "r"}, {"id": "w", "parent": "later"}])
    store.add_memory("fact", sources=["a"], id="m1")
    store.retract("m1", sources=["a"])
    b = store._engine.backend
    before = _stored(store)
    with b.reading():
        rows = [*b.get_events("default", ["r", "a", "w"]).values()]
        rows += b.list_events("default", 0, 10)
        recs = [*b.get_records("default", ["m1"]).values()]
        recs += b.list_records("default", 0, 10) + b.retractions_of("default", ["m1"])
    for row in rows:
        row.pos = (99, 99) if row.pos is None else None
        row.event = Event("other")
    for rec in recs:
        rec.pos, rec.extra = (99, 99), ((98, 98),)
    assert _stored(store) == before
    with b.reading():
        again = b.get_events("default", ["r", "a", "w"])
    assert again["w"].pos is None and again["a"].pos is not None
    assert [again[i].event.id for i in ("r", "a", "w")] == ["r", "a", "w"]
    # Still indexed where they were: the retraction shows at "a" and hides m1 there.
    (retraction,) = store.memories(at="a", kind="retraction")
    assert retraction.target == "m1" and store.memories(at="a") == []


def test_a_refused_batch_over_namespaces_leaves_waiting_events_waiting(
    make_store: Callable[[], Store],
) -> None:
    store = make_store()
    store.add_events([{"id": "w", "parent": "p", "namespace": "A"}])
    store.add_events([{"id": "x", "content": "one", "namespace": "B"}])
    before = _stored(store)
    # A's part connects the waiting ``w`` while it is planned; B's part is refused.
    batch = [
        {"id": "p", "namespace": "A"},
        {"id": "x", "content": "another", "namespace": "B"},
    ]
    with pytest.raises(BranchmemError):
        store.add_events(batch)
    assert _stored(store) == before
    with store._engine.backend.reading():
        assert store._engine.backend.get_events("A", ["w"])["w"].pos is None
    store.add_events(batch[:1])
    assert [e.id for e in store.path("w", namespace="A")] == ["p", "w"]
