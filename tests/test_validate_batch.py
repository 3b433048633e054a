"""The batch event check (`events_from`) against the one-at-a-time check (`event_from`)."""

from __future__ import annotations

from dataclasses import fields
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from branchmem import InvalidInput
from branchmem.validate import event_from, events_from

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
