"""The stored segment tips fetched for a whole batch at once (`Ingest.prefetch_tips`)
against fetching each when it is needed: the same positions, the same store,
the same errors, on every backend."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from branchmem import BranchmemError, CycleError, Store
from branchmem.lineage import Ingest
from helpers.raw_state import stored_state as state


@st.composite
def batches(draw: st.DrawFn) -> list[list[dict[str, Any]]]:
    """A history cut into batches: mostly replies to an earlier event (often
    the last one, so segments grow), some roots, merges and parents that
    arrive later (or never, or form a cycle)."""
    n = draw(st.integers(1, 30))
    events: list[dict[str, Any]] = []
    for i in range(n):
        how = draw(st.sampled_from(["last", "last", "earlier", "root", "merge", "later"]))
        if how == "root" or i == 0:
            parent: Any = None
        elif how == "last":
            parent = f"e{i - 1}"
        elif how == "earlier":
            parent = f"e{draw(st.integers(0, i - 1))}"
        elif how == "merge" and i > 1:
            parent = [f"e{j}" for j in draw(st.sets(st.integers(0, i - 1), min_size=2, max_size=3))]
        else:
            parent = f"e{draw(st.integers(i, n))}"
        events.append({"id": f"e{i}", "parent": parent})
    cuts = sorted(draw(st.sets(st.integers(1, max(1, n - 1)), max_size=3)))
    return [events[a:b] for a, b in zip([0, *cuts], [*cuts, n], strict=True) if events[a:b]]


def ingest(store: Store, parts: list[list[dict[str, Any]]]) -> list[object]:
    """Each batch's outcome: the events' positions, or the error's type."""
    out: list[object] = []
    for part in parts:
        try:
            store.add_events(part)
        except BranchmemError as exc:
            out.append(type(exc))
            continue
        got = store._engine.backend.get_events("default", [e["id"] for e in part])
        out.append(sorted((i, r.pos) for i, r in got.items()))
    return out


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(parts=batches())
def test_batch_tip_fetch_equals_one_at_a_time(
    open_store: Callable[..., Store], monkeypatch: pytest.MonkeyPatch, parts: Any
) -> None:
    fast = open_store(clock=lambda: 1.0)
    got = ingest(fast, parts)
    with monkeypatch.context() as m:
        m.setattr(Ingest, "prefetch_tips", lambda self, events: None)
        simple = open_store(clock=lambda: 1.0)
        want = ingest(simple, parts)
    assert got == want
    assert state(fast) == state(simple)
    # Closed with their example: the next one's stores open on these schemas
    # (on a Citus coordinator a new schema is distributed first, ~2 s).
    fast.close()
    simple.close()


def test_one_lookup_for_the_tips_of_many_segments(
    open_store: Callable[..., Store], monkeypatch: pytest.MonkeyPatch
) -> None:
    store = open_store()
    store.add_events(
        [{"id": f"r{i}"} for i in range(5)] + [{"id": f"c{i}", "parent": f"r{i}"} for i in range(5)]
    )
    calls: list[list[int]] = []
    real = store._engine.backend.segment_tips

    def counted(ns: str, segs: Any) -> dict[int, int]:
        calls.append(sorted(segs))
        return real(ns, segs)

    # Forks from the middle of five stored segments, and replies at their ends.
    with monkeypatch.context() as m:  # undone before the store is closed
        m.setattr(store._engine.backend, "segment_tips", counted)
        store.add_events(
            [{"id": f"f{i}", "parent": f"r{i}"} for i in range(5)]
            + [{"id": f"d{i}", "parent": f"c{i}"} for i in range(5)]
        )
    assert len(calls) == 1 and len(calls[0]) == 5
    pos = store._engine.backend.get_events("default", [f"d{i}" for i in range(5)])
    assert all(r.pos is not None and r.pos[1] == 2 for r in pos.values())


def test_a_cycle_after_waiting_events_is_refused_as_a_cycle(store: Store) -> None:
    """A batch that connects waiting events and then names its own id as parent:
    the first plan fails, and the second must not see positions the first gave."""
    store.add_events([{"id": "e0"}])
    store.add_events([{"id": "e1", "parent": "e3"}])
    before = state(store)
    batch = [
        {"id": "e2", "parent": "e1"},
        {"id": "e3", "parent": "e0"},
        {"id": "e4", "parent": "e3"},
        {"id": "e5", "parent": "e5"},
    ]
    with pytest.raises(CycleError):
        store.add_events(batch)
    assert state(store) == before
    store.add_events(batch[:3])
    got = store._engine.backend.get_events("default", ["e1", "e2", "e3"])
    assert all(r.pos is not None for r in got.values())
