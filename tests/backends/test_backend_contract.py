"""The backend contract (`branchmem.testing`) on memory, SQLite and PostgreSQL,
through its public entry points, as a third party runs it; and the suite
itself: it passes a backend that only wraps one that passes, and fails one
that breaks a rule."""

from __future__ import annotations

import doctest
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from branchmem.backends.base import Backend, DuplicateIds, EventRow
from branchmem.backends.memory import MemoryBackend
from branchmem.testing import CHECKS, Check, ContractFailure, check_backend
from helpers.pg_helpers import scale
from helpers.raw_state import backend_state


@pytest.mark.parametrize("check", CHECKS, ids=str)
def test_backend_contract(
    check: Check, make_backend: Callable[[], Backend], backend_name: str
) -> None:
    check(make_backend, raw_state=backend_state, scale=scale(backend_name))


class Wrapped:
    """A third party's backend: another backend behind a layer of its own
    (here one that counts the calls it passes on)."""

    def __init__(self, inner: Backend) -> None:
        self._inner = inner
        self.calls: Counter[str] = Counter()

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._inner, name)
        if callable(value):
            self.calls[name] += 1
        return value


def test_a_backend_defined_elsewhere_runs_the_whole_suite() -> None:
    made: list[Wrapped] = []

    def make() -> Backend:
        made.append(Wrapped(MemoryBackend()))
        return made[-1]  # type: ignore[return-value]

    check_backend(make, scale=0.1)
    assert len(made) > 100  # one store per property example, per bad call
    used = sum((b.calls for b in made), Counter())
    assert used["transaction"] > 0 and used["insert_events"] > 0 and used["generation"] > 0


class Leaky(Wrapped):
    """Breaks a rule of `Backend.insert_events`: it stores the new rows of a
    batch before raising `DuplicateIds` for the others (instead of writing nothing)."""

    def __init__(self, inner: MemoryBackend) -> None:
        super().__init__(inner)
        self._memory = inner

    def insert_events(self, ns: str, rows: list[EventRow]) -> None:
        stored = self._memory.get_events(ns, [r.event.id for r in rows])
        self._memory.insert_events(ns, [r for r in rows if r.event.id not in stored])
        if stored:
            raise DuplicateIds(ns)


def test_the_suite_fails_a_backend_that_keeps_half_a_batch() -> None:
    with pytest.raises(ContractFailure) as info:
        check_backend(lambda: Leaky(MemoryBackend()), scale=0.1)  # type: ignore[arg-type,return-value]
    assert "batches_are_all_or_none" in info.value.failed
    assert "batches_are_all_or_none:" in str(info.value)


def test_every_check_says_what_it_checks() -> None:
    assert len({c.name for c in CHECKS}) == len(CHECKS)
    assert all(len(c.doc) > 30 for c in CHECKS)


def test_the_backends_guide_runs() -> None:
    """docs/backends.md runs the suite on a backend it defines."""
    page = Path(__file__).resolve().parents[2] / "docs" / "backends.md"
    result = doctest.testfile(str(page), module_relative=False)
    assert result.attempted >= 3 and result.failed == 0, result
