"""The fast paths for a record with one or two sources against the general ones,
and `check_name`'s against the rule it states.

A memory sourced from a message and its reply is the common case with more
than one source, so `check_sources` and `compact_ids` take a short path for
a list of two; each must give what the general path gives (a tuple goes the
general way), errors included.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from branchmem.backends.memory_rows import StoredEvent, compact_ids
from branchmem.errors import InvalidInput
from branchmem.model import Event
from branchmem.validate import MAX_NAME_LEN, check_name, check_sources

IDS = st.sampled_from(["e1", "e2", "问", "", " ", "a\nb", 7, None, "x" * 300])


def _outcome(sources: Any) -> tuple[str, Any]:
    try:
        return "ok", check_sources(sources)
    except InvalidInput as exc:
        return "error", str(exc)


@settings(max_examples=300, deadline=None, database=None)
@given(st.lists(IDS, min_size=0, max_size=4))
def test_check_sources_list_matches_the_general_path(sources: list[Any]) -> None:
    assert _outcome(sources) == _outcome(tuple(sources))


def test_a_repeated_pair_keeps_one() -> None:
    assert check_sources(["e1", "e1"]) == ("e1",)
    assert check_sources(["e2", "e1"]) == ("e2", "e1")


@settings(max_examples=200, deadline=None, database=None)
@given(st.lists(st.sampled_from(["e1", "e2", "e3", "gone"]), min_size=1, max_size=4))
def test_compact_ids_uses_the_stored_strings(ids: list[str]) -> None:
    events = {}
    for i in ("e1", "e2", "e3"):
        copy = "".join(list(i))  # the same text in another string object
        assert copy is not i
        events[i] = StoredEvent(Event(id=copy), None, None)
    got = compact_ids(tuple(ids), events)
    want = tuple(ids)
    if len(ids) == 1:
        assert got == want[0]
    else:
        assert got == want
    for given_id, kept in zip(want, (got,) if isinstance(got, str) else got, strict=True):
        stored = events.get(given_id)
        assert kept is (given_id if stored is None else stored.id)


def _name_by_the_rule(value: Any) -> bool:
    """`check_name`'s rule, one character and one part at a time."""
    return (
        isinstance(value, str)
        and 0 < len(value) <= MAX_NAME_LEN
        and not any(c.isspace() or not c.isprintable() for c in value)
        and all(value.split("/"))
    )


NAME_CHARS = st.one_of(
    st.sampled_from(list("ab/_-. \t\n\x00\x1c\x85\xa0\u2028\u3000\u200b\ufeff问")),
    st.characters(),
)


@settings(max_examples=2000, deadline=None, database=None)
@given(st.one_of(st.text(NAME_CHARS, max_size=8), st.text(NAME_CHARS, min_size=199, max_size=202)))
def test_check_name_accepts_what_the_rule_accepts(value: str) -> None:
    try:
        assert check_name(value) == value
        accepted = True
    except InvalidInput:
        accepted = False
    assert accepted == _name_by_the_rule(value)


def test_every_whitespace_character_is_refused_in_a_name() -> None:
    for c in map(chr, range(0x110000)):
        if c.isspace():
            with pytest.raises(InvalidInput):
                check_name(f"a{c}b")
