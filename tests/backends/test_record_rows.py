"""`records_from_rows`, the SQL backends' bulk build of fetched record rows,
against `record_from_row`, the one-row build it must match: every record,
every field (those left out of equality too), its index position and extra
positions, in order, and each one a plain frozen `Memory`."""

from __future__ import annotations

import pickle
from dataclasses import FrozenInstanceError, fields
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from branchmem.backends.base import RecordRow
from branchmem.backends.sqlrows import record_from_row, record_values, records_from_rows
from branchmem.model import Memory

TEXT = st.text(max_size=6)
ID = st.text(min_size=1, max_size=6).filter(lambda s: "\x1f" not in s)
TIME = st.none() | st.floats(0, 1e9)
META = st.none() | st.dictionaries(st.text(max_size=3), st.integers() | TEXT, max_size=2)
POS = st.none() | st.tuples(st.integers(0, 10**6), st.integers(0, 10**9))
EXTRA = st.lists(st.tuples(st.integers(0, 99), st.integers(0, 99)), max_size=3).map(tuple)

MEMORY = st.builds(
    Memory,
    id=ID,
    content=TEXT,
    sources=st.lists(ID, min_size=1, max_size=3).map(tuple),
    kind=st.sampled_from(["semantic", "episodic", "retraction", "edge"]),
    key=st.none() | TEXT,
    importance=st.sampled_from([0.5, 0.0, 1.0, 0.25]),
    namespace=st.just("ns"),
    meta=META,
    target=st.none() | ID,
    created_at=st.floats(0, 1e9),
    seq=st.integers(1, 10**9),
    expires_at=TIME,
    valid_from=TIME,
    valid_to=TIME,
)


def _fields(m: Memory) -> tuple[Any, ...]:
    return tuple(getattr(m, f.name) for f in fields(Memory))


def _row(m: Memory, pos: tuple[int, int] | None, extra: tuple[tuple[int, int], ...]) -> Any:
    # As a backend stores it (`record_values`) and reads it back: a row of `REC_COLS`.
    return record_values(m, RecordRow(m, pos, extra))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(MEMORY, POS, EXTRA), max_size=8))
def test_the_bulk_build_matches_the_one_row_build(
    items: list[tuple[Memory, tuple[int, int] | None, tuple[tuple[int, int], ...]]],
) -> None:
    rows = [_row(m, pos, extra) for m, pos, extra in items]
    want = [record_from_row("ns", r) for r in rows]
    got = records_from_rows("ns", rows)
    assert len(got) == len(want)
    for g, w, (m, pos, extra) in zip(got, want, items, strict=True):
        assert type(g) is RecordRow and type(g.memory) is Memory
        assert g == w and repr(g) == repr(w)
        assert _fields(g.memory) == _fields(w.memory) == _fields(m)
        assert (g.pos, g.extra) == (w.pos, w.extra) == (pos, extra)


def test_a_built_record_is_a_plain_frozen_memory() -> None:
    m = Memory("m1", "x", ("e1", "e2"), namespace="ns", meta={"a": [1]}, seq=4, expires_at=9.0)
    (row,) = records_from_rows("ns", [_row(m, (1, 2), ((0, 3),))])
    got = row.memory
    assert got == m and got.sources == ("e1", "e2") and got.meta == {"a": [1]}
    assert not hasattr(got, "__dict__")
    with pytest.raises(FrozenInstanceError):
        got.content = "y"  # type: ignore[misc]
    again = pickle.loads(pickle.dumps(got))
    assert _fields(again) == _fields(got)
    assert records_from_rows("ns", []) == []
