"""`COPY` text built a column at a time (`copy_text`) against the plain
row-at-a-time reference (`copy_text_simple`)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from branchmem.backends.pg_conn import copy_text, copy_text_simple

# Few distinct texts, so that columns often hold no character to escape (the
# fast case) and sometimes one; floats include -0.0 and 0.0, equal but written apart.
TEXT = st.sampled_from(["a", "", "用户", "a\tb", "x\\y", "l\nm", "c\rr", "\\N"]) | st.text(
    max_size=4
)
NUMBER = st.sampled_from([0.0, -0.0, 1.5, 1e300, 0, 1, -7, 2**70]) | st.floats() | st.integers()
VALUE: st.SearchStrategy[Any] = st.one_of(st.none(), TEXT, NUMBER, st.booleans())


@st.composite
def tables(draw: st.DrawFn) -> list[tuple[Any, ...]]:
    """Rows of one width whose columns are mostly of one kind, as the backends
    write them, with a value of another kind now and then."""
    width = draw(st.integers(1, 5))
    kinds = [draw(st.sampled_from([TEXT, NUMBER, st.none() | TEXT, VALUE])) for _ in range(width)]
    n = draw(st.integers(0, 12))
    same = draw(st.booleans())  # one object repeated down a column, as a batch's time stamp
    first = [draw(k) for k in kinds]
    return [tuple(first) if same else tuple(draw(k) for k in kinds) for _ in range(n)]


@settings(max_examples=1000, deadline=None)
@given(ns=TEXT, rows=tables())
def test_copy_text_equals_the_simple_reference(ns: str, rows: list[tuple[Any, ...]]) -> None:
    assert copy_text(ns, rows) == copy_text_simple(ns, rows)


def test_copy_text_escapes_and_writes_null() -> None:
    rows = [("a\tb", None, 1.5), ("c", "d\\e", -0.0)]
    assert copy_text("n", rows) == "n\ta\\tb\t\\N\t1.5\nn\tc\td\\\\e\t-0.0\n"
