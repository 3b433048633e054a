"""Extraction against a naive reference: whatever the order of extract() calls
over a random conversation tree, each node sees the last city stated on its
path and the allergies its path leaves standing, and nothing from elsewhere."""

from __future__ import annotations

from collections.abc import Callable

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from branchmem import Store

CITIES = ("Oslo", "Lima", "Rome", "Quito")
ALLERGENS = ("peanuts", "shellfish", "pollen")
SAYINGS = (
    [f"I live in {c}." for c in CITIES]
    + [f"I'm allergic to {a}." for a in ALLERGENS]
    + [f"I'm not allergic to {a} anymore." for a in ALLERGENS]
    + ["Tell me a joke.", "What is the capital of Peru?"]
)


@st.composite
def conversations(draw: st.DrawFn) -> tuple[list[int | None], list[str], list[int]]:
    n = draw(st.integers(1, 10))
    parents: list[int | None] = [None] + [draw(st.integers(0, i - 1)) for i in range(1, n)]
    says = [draw(st.sampled_from(SAYINGS)) for _ in range(n)]
    order = draw(st.permutations(range(n)))
    return parents, says, list(order)


def expected(parents: list[int | None], says: list[str], node: int) -> list[str]:
    """Walk the path root first and apply each statement in turn."""
    path: list[int] = []
    at: int | None = node
    while at is not None:
        path.append(at)
        at = parents[at]
    city, allergies = None, set()
    for i in reversed(path):
        text = says[i]
        if text.startswith("I live in "):
            city = text.removeprefix("I live in ").rstrip(".")
        elif text.startswith("I'm allergic to "):
            allergies.add(text.removeprefix("I'm allergic to ").rstrip("."))
        elif text.startswith("I'm not allergic to "):
            allergies.discard(text.removeprefix("I'm not allergic to ").split(" anymore")[0])
    out = [f"User is allergic to {a}" for a in allergies]
    return sorted(out + ([f"User lives in {city}"] if city else []))


def test_extraction_matches_the_reference(make_store: Callable[[], Store]) -> None:
    @settings(
        max_examples=25,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow],
    )
    @given(conv=conversations())
    def check(conv: tuple[list[int | None], list[str], list[int]]) -> None:
        parents, says, order = conv
        store = make_store()
        store.add_events(
            [
                {"id": f"n{i}", "parent": None if p is None else f"n{p}", "content": says[i]}
                for i, p in enumerate(parents)
            ]
        )
        for i in order:
            store.extract(at=f"n{i}", window=16)
        for i in range(len(parents)):
            got = sorted(m.content for m in store.memories(at=f"n{i}"))
            assert got == expected(parents, says, i), (i, parents, says, order)
        for i in order:  # idempotent: a second round writes nothing
            assert store.extract(at=f"n{i}", window=16) == []

    check()
