"""The checks of the backend contract, and `check_backend`, which runs them all."""

from __future__ import annotations

import traceback
from collections.abc import Callable
from dataclasses import dataclass

from .batches import bad_input_is_refused_alike, batches_are_all_or_none
from .gate_checks import answers_do_not_depend_on_arrival_order, gate_matches_reference
from .harness import MakeBackend, RawState, Stores
from .stored_checks import stored_vectors_and_terms_follow_their_records
from .tree_checks import tree_reads_match_reference


def generation_tracks_writes_and_erasures(stores: Stores) -> None:
    """`Backend.generation`: ``writes`` moves with every committed write,
    ``erasures`` only with one that deletes (a purge); asked for the
    namespace written to, the same."""
    store = stores.open()
    backend = store._engine.backend

    seen: list[tuple[int, int]] = []

    def now() -> tuple[int, int]:
        with backend.reading():
            g = backend.generation()
            n = backend.generation("default")
        assert n.erasures == g.erasures, "generation(ns) has another erasure count"
        assert (n.writes, n.erasures) not in seen, "a write left generation(ns) as it was"
        seen.append((n.writes, n.erasures))
        return g.writes, g.erasures

    w0, e0 = now()
    store.add_event("e1", content="a")
    w1, e1 = now()
    assert w1 != w0, "a write left Generation.writes as it was"
    assert e1 == e0, "a write that erased nothing moved Generation.erasures"
    store.add_memory("fact", sources=["e1"])
    w2, e2 = now()
    assert w2 != w1 and e2 == e1
    store.purge(events=["e1"])
    w3, e3 = now()
    assert w3 != w2, "a purge left Generation.writes as it was"
    assert e3 != e2, "a purge left Generation.erasures as it was"


@dataclass(frozen=True)
class Check:
    """One check of the contract: call it with a backend factory."""

    name: str
    run: Callable[[Stores], None]

    def __call__(
        self, make_backend: MakeBackend, *, raw_state: RawState | None = None, scale: float = 1.0
    ) -> None:
        """Run the check on stores over fresh backends from ``make_backend``;
        raises AssertionError (or the backend's own error) if it fails."""
        stores = Stores(make_backend, raw_state, scale)
        try:
            self.run(stores)
        finally:
            stores.close()

    def __str__(self) -> str:
        return self.name

    @property
    def doc(self) -> str:
        return (self.run.__doc__ or "").strip()


CHECKS: tuple[Check, ...] = tuple(
    Check(fn.__name__, fn)
    for fn in (
        gate_matches_reference,
        answers_do_not_depend_on_arrival_order,
        batches_are_all_or_none,
        bad_input_is_refused_alike,
        generation_tracks_writes_and_erasures,
        tree_reads_match_reference,
        stored_vectors_and_terms_follow_their_records,
    )
)
"""Every check, in the order `check_backend` runs them."""


class ContractFailure(AssertionError):
    """Raised by `check_backend`: ``failed`` maps each failed check to its report."""

    def __init__(self, failed: dict[str, str]) -> None:
        self.failed = failed
        text = "\n\n".join(f"{name}:\n{report}" for name, report in failed.items())
        super().__init__(f"{len(failed)} of {len(CHECKS)} contract checks failed\n\n{text}")


def check_backend(
    make_backend: MakeBackend, *, raw_state: RawState | None = None, scale: float = 1.0
) -> None:
    """Run every check of `CHECKS`; raise `ContractFailure` naming each that failed."""
    failed = {}
    for check in CHECKS:
        try:
            check(make_backend, raw_state=raw_state, scale=scale)
        except Exception as exc:
            failed[check.name] = "".join(traceback.format_exception(exc))
    if failed:
        raise ContractFailure(failed)
