"""Every head move with ``expected_head`` is one compare-and-set: `set_branch`
and `rollback` (besides the branch writes, merge and resolve), on every backend."""

from __future__ import annotations

import threading
from collections import Counter
from pathlib import Path

import pytest

from branchmem import BranchConflict, InvalidInput, Store, UnknownBranch
from helpers.branch_state import state


@pytest.fixture
def main(store: Store) -> Store:
    store.add_events([{"id": "root"}, {"id": "e2", "parent": "root"}, {"id": "e3", "parent": "e2"}])
    store.create_branch("main", at="root")
    return store


def test_set_branch_moves_only_from_the_expected_head(main: Store) -> None:
    moved = main.set_branch("main", "e2", expected_head="root", actor="ann")
    assert moved.head == "e2"
    before = state(main)
    with pytest.raises(BranchConflict) as exc:
        main.set_branch("main", "e3", expected_head="root")
    assert (exc.value.name, exc.value.expected, exc.value.actual) == ("main", "root", "e2")
    assert state(main) == before  # no move, no history row, no audit entry
    main.set_branch("main", "e3", expected_head="e2")
    moves = [(m.from_head, m.to_head, m.why) for m in main.history("main")]
    assert moves == [(None, "root", "create"), ("root", "e2", "set"), ("e2", "e3", "set")]


def test_set_branch_expected_head_needs_the_branch(main: Store) -> None:
    before = state(main)
    with pytest.raises(UnknownBranch):
        main.set_branch("other", "e2", expected_head="root")
    with pytest.raises(InvalidInput, match="expected_head"):
        main.set_branch("main", "e2", expected_head="")
    assert state(main) == before
    # Without it, set_branch still creates a branch, and a move to the head is no move.
    assert main.set_branch("other", "e2").head == "e2"
    assert main.set_branch("main", "root", expected_head="root").head == "root"
    assert len(main.history("main")) == 1


def test_rollback_moves_only_from_the_expected_head(main: Store) -> None:
    main.set_branch("main", "e3")
    before = state(main)
    with pytest.raises(BranchConflict):
        main.rollback("main", "root", expected_head="e2")
    assert state(main) == before
    assert main.rollback("main", "root", expected_head="e3").head == "root"
    assert main.history("main")[-1].from_head == "e3"


def _race(stores: list[Store], per_thread: int) -> list[tuple[str, str]]:
    """4 threads move ``main`` with ``expected_head``, each to events of its own
    (a head never recurs); the ``(expected, to)`` of every move that succeeded."""
    won: list[tuple[str, str]] = []
    errors: list[BaseException] = []

    def work(store: Store, t: int) -> None:
        head = store.branch_head("main")
        try:
            for i in range(per_thread):
                try:
                    store.set_branch("main", f"t{t}_{i}", expected_head=head)
                except BranchConflict as exc:
                    head = exc.actual
                else:
                    won.append((head, f"t{t}_{i}"))
                    head = f"t{t}_{i}"
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(stores[t % len(stores)], t)) for t in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors
    return won


def _seed_targets(store: Store, per_thread: int) -> None:
    store.add_event("root")
    store.add_events(
        [{"id": f"t{t}_{i}", "parent": "root"} for t in range(4) for i in range(per_thread)]
    )
    store.create_branch("main", at="root")


def _check_chain(store: Store, won: list[tuple[str, str]]) -> None:
    assert max(Counter(e for e, _ in won).values()) == 1  # no expected head won twice
    moves = store.history("main")[1:]
    # Each success is logged from the head its caller expected, and they form one chain.
    assert sorted((m.from_head, m.to_head) for m in moves) == sorted(won)
    assert [m.from_head for m in moves[1:]] == [m.to_head for m in moves[:-1]]


def test_threads_racing_expected_head_moves(store: Store) -> None:
    _seed_targets(store, 30)
    _check_chain(store, _race([store], 30))


def test_threads_racing_expected_head_moves_two_sqlite_stores(tmp_path: Path) -> None:
    path = tmp_path / "shared.db"
    with Store(path) as a, Store(path) as b:
        _seed_targets(a, 20)
        won = _race([a, b], 20)
        _check_chain(a, won)
