"""The batch event check (`events_from`) against the one-at-a-time check (`event_from`)."""

from __future__ import annotations

from dataclasses import fields
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from branchmem import InvalidInput
from branchmem.validate import event_from
from branchmem.validate_batch import event_columns, events_from

IDS = st.sampled_from(["e1", "e 2", "", " ", "x" * 600, "a\nb", "用户", 7, None])
PARENTS = st.sampled_from([None, "e0", "", " ", ["e0"], ("e0", "e9"), [], 3, "e\t"])
VALUES: dict[str, st.SearchStrategy[Any]] = {
    "id": IDS,
    "parent": PARENTS,
    "parents": PARENTS,
    "role": st.sampled_from(["user", "assistant", "tool", "nobody", 1, ["user"]]),
    "content": st.sampled_from(["hi", "", 5, None, "很长的内容"]),
    "namespace": st.sampled_from(["default", "other", "", 3, "bad ns"]),
    "meta": st.sampled_from([None, {"a": 1}, {"a": object()}, [1], "m"]),
    "bogus": st.just(1),
}


@st.composite
def items(draw: st.DrawFn) -> Any:
    """Mostly a valid event with one or two fields changed or dropped, so that
    each check meets both its good and its bad values often."""
    if draw(st.integers(0, 19)) == 0:
        return draw(st.sampled_from([None, "e1", 3, ["id"]]))
    item: dict[str, Any] = {"id": "e1", "parent": "e0", "role": "user", "content": "hi"}
    for key in draw(st.lists(st.sampled_from(sorted(VALUES)), unique=True, max_size=2)):
        if draw(st.booleans()) and key in item:
            del item[key]
        else:
            item[key] = draw(VALUES[key])
    return item


def outcome(fn: Any, item: Any) -> Any:
    try:
        ev = fn(item)
    except Exception as exc:  # the same error, with the same words
        return type(exc), str(exc)
    return ev, {f.name: getattr(ev, f.name) for f in fields(ev)}


@settings(max_examples=600, deadline=None)
@given(item=items())
def test_batch_check_equals_single_check(item: Any) -> None:
    one = outcome(lambda i: event_from(i, 5.0), item)
    batch = outcome(lambda i: events_from([i], 5.0)[0], item)
    assert batch == one


def test_batch_keeps_order_and_stops_at_the_first_bad_item() -> None:
    good = [{"id": f"e{i}", "parent": f"e{i - 1}" if i else None} for i in range(5)]
    assert [e.id for e in events_from(good, 1.0)] == [f"e{i}" for i in range(5)]
    with pytest.raises(InvalidInput) as got:
        events_from([*good[:2], {"id": " "}, {"id": 3}], 1.0)
    with pytest.raises(InvalidInput) as want:
        event_from({"id": " "}, 1.0)
    assert str(got.value) == str(want.value)


def batch_outcome(fn: Any, batch: list[Any]) -> Any:
    try:
        evs = fn(batch)
    except Exception as exc:
        return type(exc), str(exc)
    return [(ev, {f.name: getattr(ev, f.name) for f in fields(ev)}) for ev in evs]


@settings(max_examples=600, deadline=None)
@given(batch=st.lists(items(), min_size=1, max_size=5))
def test_batch_check_equals_single_checks_over_whole_batches(batch: list[Any]) -> None:
    """Batches of several items take the column-at-a-time check when every item
    is of the common shape; either way the answer (or the first error) is the
    one-at-a-time check's."""
    one = batch_outcome(lambda b: [event_from(i, 5.0) for i in b], batch)
    assert batch_outcome(lambda b: events_from(b, 5.0), batch) == one


def test_the_common_shape_is_checked_a_column_at_a_time() -> None:
    batch = [
        {"id": "e0", "content": "你好"},
        {"id": "e1", "parent": "e0", "role": "assistant", "namespace": "other"},
        {"id": "e2", "parent": "e1", "meta": {"k": [1]}},
        {"id": "e 3", "parent": "e2", "content": "a b"},
        {"id": "e4", "parents": ["e2", "e 3"]},
        {"id": "e5", "parents": ["e4"]},
    ]
    cols = event_columns(batch)
    assert cols is not None and cols.ids == ["e0", "e1", "e2", "e 3", "e4", "e5"]
    assert cols.parents[3:] == ["e2", ("e2", "e 3"), "e4"]
    part = event_columns(batch[1:3])
    assert part is not None
    got = part.events(2.0)
    assert got == [event_from(i, 2.0) for i in batch[1:3]]
    assert got[1].parents[0] is got[0].id  # a parent in the batch: one string object
    assert cols.events(2.0) == [event_from(i, 2.0) for i in batch]
    for bad in (
        {"id": "  "},
        {"id": "x", "parents": ["e0", "e0"]},
        {"id": "x", "parent": ["e0", 3]},
        {"id": "x", "role": ["user"]},
        {"id": "x", "namespace": "a\nb"},
    ):
        assert event_columns([*batch, bad]) is None


class _Ambiguous:
    """Compares like an array: ``==`` gives no plain truth value."""

    def __eq__(self, other: object) -> bool:
        raise ValueError("the truth value is ambiguous")

    __hash__ = None  # type: ignore[assignment]


class _Role(str):
    pass


@pytest.mark.parametrize(
    "odd",
    [
        {"id": "x", "role": _Role("user")},
        {"id": "x", "parents": _Ambiguous()},
        {"id": "x", "parent": _Ambiguous()},
        {"id": "x", "meta": _Ambiguous()},
        {"id": "x", "namespace": _Ambiguous()},
        {"id": "x", "namespace": ["a"]},
    ],
)
def test_values_no_check_expects_get_the_one_at_a_time_answer(odd: dict[str, Any]) -> None:
    """A role that is a str subclass, values whose ``==`` raises, unhashable
    values: the column check steps aside and the answer is `event_from`'s."""
    batch = [{"id": "a"}, odd]
    assert event_columns(batch) is None
    assert batch_outcome(lambda b: events_from(b, 5.0), batch) == batch_outcome(
        lambda b: [event_from(i, 5.0) for i in b], batch
    )
