"""Bad input gets a clear error of the right type and changes nothing.

The list of bad calls, each refused alike on every backend, is part of the
backend contract (`branchmem.testing.bad_calls`, run by test_backend_contract.py);
here, what a few of the errors say.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from branchmem import (
    ConflictingEvent,
    CycleError,
    InvalidInput,
    Store,
    UnknownAnchor,
)
from branchmem.testing.bad_calls import seeded


def test_cycle_error_names_the_event(store: Store) -> None:
    seeded(store)
    with pytest.raises(CycleError) as info:
        store.add_event("x", parent="y")
    assert info.value.event_id == "x"
    assert "own ancestor" in str(info.value)


def test_messages_say_what_to_do(store: Store) -> None:
    seeded(store)
    with pytest.raises(InvalidInput, match="sources=\\['e2'\\]"):
        store.add_memory("x", sources="e2")  # type: ignore[arg-type]
    with pytest.raises(ConflictingEvent, match="new event with a new id"):
        store.add_event("e1", content="changed")
    with pytest.raises(UnknownAnchor, match="event id or a branch name"):
        store.memories(at="nowhere")


def test_an_id_twice_in_one_batch_says_it_is_repeated(store: Store) -> None:
    batch = [{"id": "ok1"}, {"id": "ok2", "content": "a"}, {"id": "ok2", "content": "b"}]
    with pytest.raises(ConflictingEvent, match=r"'ok2' .* repeated in the batch") as got:
        store.add_events(batch)
    assert got.value.in_batch and "already exists" not in str(got.value)
    store.add_events(batch[:2])
    with pytest.raises(ConflictingEvent, match=r"'ok2' .* already exists") as again:
        store.add_events(batch[2:])
    assert not again.value.in_batch


def test_an_int_clock_reads_back_as_floats_everywhere(open_store: Callable[..., Store]) -> None:
    s = open_store(clock=lambda: 5)
    e = s.add_event("e1", content="x")
    m = s.add_memory("fact", sources=["e1"])
    for got in (e.created_at, s.get_event("e1").created_at, s.memories(at="e1")[0].created_at):
        assert type(got) is float and got == 5.0
    assert m.created_at == 5.0 and type(m.created_at) is float


def test_a_clock_that_is_not_a_number_is_refused(open_store: Callable[..., Store]) -> None:
    s = open_store(clock=lambda: "noon")
    with pytest.raises(InvalidInput, match="clock"):
        s.add_event("e1")
