"""Named branches: create, write, list, delete, snapshot, rollback, history, concurrency."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from branchmem import (
    BranchConflict,
    BranchExists,
    InvalidInput,
    NameClash,
    NotAnAncestor,
    SnapshotExists,
    Store,
    UnknownAnchor,
    UnknownBranch,
    UnknownEvent,
    UnknownSnapshot,
)
from helpers.branch_state import state


def contents(store: Store, at: str) -> list[str]:
    return [m.content for m in store.memories(at=at)]


@pytest.fixture
def main(store: Store) -> Store:
    store.add_event("root", content="你好")
    store.create_branch("user_001/main", at="root")
    return store


# ------------------------------------------------------------------ create
def test_fork_sees_parent_at_fork_point_and_nothing_later(main: Store) -> None:
    main.remember("用户住在北京", branch="user_001/main")
    b = main.create_branch("user_001/session_a", at="user_001/main")
    assert b.parent == "user_001/main"
    assert b.fork_point == main.branch_head("user_001/main")
    main.remember("用户养了一只猫", branch="user_001/main")
    main.remember("用户想学日语", branch="user_001/session_a")
    assert contents(main, "user_001/session_a") == ["用户住在北京", "用户想学日语"]
    assert contents(main, "user_001/main") == ["用户住在北京", "用户养了一只猫"]


def test_fork_at_an_event_has_no_parent_branch(main: Store) -> None:
    b = main.create_branch("task/x", at="root")
    assert (b.head, b.fork_point, b.parent) == ("root", "root", None)


@pytest.mark.parametrize(
    "name",
    ["main", "user_001/session_abc/task_contract_review", "org-1/用户/主线", "a" * 200],
)
def test_valid_names(store: Store, name: str) -> None:
    store.add_event("root")
    assert store.create_branch(name, at="root").name == name


@pytest.mark.parametrize(
    "name",
    [
        "",
        "has space",
        "tab\there",
        "line\nbreak",
        "ctrl\x00x",
        "全角\u3000空格",
        "a" * 201,
        "/lead",
        "trail/",
        "dou//ble",
        7,
        None,
    ],
)
def test_invalid_names_are_rejected_and_change_nothing(main: Store, name: object) -> None:
    before = state(main)
    with pytest.raises(InvalidInput) as exc:
        main.create_branch(name, at="root")  # type: ignore[arg-type]
    assert "name" in str(exc.value)
    assert state(main) == before


def test_create_errors_change_nothing(main: Store) -> None:
    before = state(main)
    with pytest.raises(BranchExists):
        main.create_branch("user_001/main", at="root")
    with pytest.raises(NameClash):
        main.create_branch("root", at="root")
    with pytest.raises(UnknownAnchor):
        main.create_branch("new", at="nowhere")
    assert state(main) == before


# ------------------------------------------------------------------- write
def test_remember_appends_under_head_and_advances(main: Store) -> None:
    m = main.remember("用户对花生过敏", branch="user_001/main", kind="semantic", key="allergy")
    head = main.branch_head("user_001/main")
    assert m.sources == (head,)
    ev = main.get_event(head)
    assert ev.parent == "root" and ev.content == "用户对花生过敏"
    m2 = main.remember("第二条", branch="user_001/main", id="m2", event_id="ev2")
    assert m2.id == "m2" and main.branch_head("user_001/main") == "ev2"
    assert main.get_event("ev2").parent == head


def test_add_event_on_branch(main: Store) -> None:
    ev = main.add_event("u1", branch="user_001/main", content="我下个月搬家")
    assert ev.parent == "root"
    assert main.branch_head("user_001/main") == "u1"
    main.add_event("u2", branch="user_001/main", role="assistant", content="好的")
    assert [e.id for e in main.path("user_001/main")] == ["root", "u1", "u2"]


def test_branch_write_errors_change_nothing(main: Store) -> None:
    main.remember("x", branch="user_001/main", event_id="ev1", id="m1")
    before = state(main)
    with pytest.raises(UnknownBranch):
        main.remember("y", branch="nope", event_id="ev_new")
    with pytest.raises(InvalidInput):
        main.add_event("u9", parent="root", branch="user_001/main")
    with pytest.raises(InvalidInput):
        main.remember("y", branch="user_001/main", kind="bogus", event_id="ev_new")
    with pytest.raises(InvalidInput):
        main.remember("y", branch="user_001/main", importance=3, event_id="ev_new")
    with pytest.raises(InvalidInput):  # an existing event id
        main.remember("y", branch="user_001/main", event_id="root")
    with pytest.raises(InvalidInput):  # an existing record id
        main.remember("y", branch="user_001/main", id="m1", event_id="ev_new")
    with pytest.raises(NameClash):  # an event id equal to a branch name
        main.add_event("user_001/main", branch="user_001/main")
    with pytest.raises(BranchConflict):
        main.remember("y", branch="user_001/main", expected_head="root", event_id="ev_new")
    with pytest.raises(UnknownEvent):
        main.get_event("ev_new")
    assert state(main) == before


def test_expected_head_compare_and_set(main: Store) -> None:
    head = main.branch_head("user_001/main")
    main.remember("a", branch="user_001/main", expected_head=head)
    with pytest.raises(BranchConflict) as exc:
        main.remember("b", branch="user_001/main", expected_head=head)
    assert exc.value.expected == head
    assert exc.value.actual == main.branch_head("user_001/main")
    assert isinstance(exc.value, RuntimeError)
    assert contents(main, "user_001/main") == ["a"]


def _hammer(stores: list[Store], branch: str, per_thread: int) -> None:
    errors: list[BaseException] = []

    def work(store: Store, t: int) -> None:
        try:
            for i in range(per_thread):
                store.remember(f"t{t}-{i}", branch=branch)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(stores[t % len(stores)], t)) for t in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors


def _check_no_lost_write(store: Store, branch: str, n: int) -> None:
    got = contents(store, branch)
    assert len(got) == n and len(set(got)) == n
    path = store.path(branch)
    assert len(path) == n + 1  # a single chain: every write built on the previous head
    moves = store.history(branch)
    assert [m.from_head for m in moves[1:]] == [m.to_head for m in moves[:-1]]


def test_threads_never_lose_a_write_memory() -> None:
    store = Store()
    store.add_event("root")
    store.create_branch("main", at="root")
    _hammer([store], "main", 25)
    _check_no_lost_write(store, "main", 100)


def test_threads_never_lose_a_write_two_sqlite_stores(tmp_path: Path) -> None:
    path = tmp_path / "shared.db"
    a, b = Store(path), Store(path)
    try:
        a.add_event("root")
        a.create_branch("main", at="root")
        _hammer([a, b], "main", 15)
        _check_no_lost_write(a, "main", 60)
        _check_no_lost_write(b, "main", 60)
    finally:
        a.close()
        b.close()


# ------------------------------------------------------------------- list
def test_branches_listing_fields() -> None:
    now = [1000.0]
    store = Store(clock=lambda: now[0])
    store.add_event("root")
    store.create_branch("user/main", at="root")
    now[0] = 1010.0
    store.remember("a", branch="user/main")
    store.remember("b", branch="user/main")
    now[0] = 1020.0
    store.create_branch("user/chat", at="user/main")
    main, chat = sorted(store.branches(), key=lambda b: b.name)[::-1]
    assert (main.name, main.fork_point, main.parent, main.memories) == (
        "user/main",
        "root",
        None,
        2,
    )
    assert (main.created_at, main.updated_at) == (1000.0, 1010.0)
    assert chat.parent == "user/main" and chat.fork_point == main.head
    assert (chat.created_at, chat.memories) == (1020.0, 2)
    assert [b.memories for b in store.branches(count=False)] == [None, None]
    assert store.branches(namespace="other") == []


def test_set_branch_is_logged(main: Store) -> None:
    main.add_event("e2", parent="root")
    main.set_branch("user_001/main", "e2", actor="bob")
    assert [(h.why, h.to_head, h.actor) for h in main.history("user_001/main")][-1] == (
        "set",
        "e2",
        "bob",
    )
    with pytest.raises(InvalidInput):
        main.set_branch("bad name", "e2")


# ----------------------------------------------------------------- delete
def test_delete_removes_the_pointer_only(main: Store) -> None:
    m = main.remember("a", branch="user_001/main")
    head = main.branch_head("user_001/main")
    main.delete_branch("user_001/main", actor="ops")
    assert main.branches() == []
    with pytest.raises(UnknownAnchor):
        main.memories(at="user_001/main")
    assert [x.id for x in main.memories(at=head)] == [m.id]
    assert main.history("user_001/main")[-1].to_head is None
    before = state(main)
    with pytest.raises(UnknownBranch):
        main.delete_branch("user_001/main")
    assert state(main) == before


# ------------------------------------------------------- snapshot/rollback
def test_snapshot_rollback_and_roll_forward(main: Store) -> None:
    main.remember("a", branch="user_001/main")
    snap = main.snapshot("user_001/main", "v1")
    assert snap.event == main.branch_head("user_001/main")
    main.remember("b", branch="user_001/main")
    late = main.branch_head("user_001/main")
    after = contents(main, "user_001/main")
    main.rollback("user_001/main", "v1", actor="alice")
    assert contents(main, "user_001/main") == ["a"]
    main.rollback("user_001/main", late)  # forward again: a head it held before
    assert contents(main, "user_001/main") == after
    main.rollback("user_001/main", "root")  # an ancestor event
    assert contents(main, "user_001/main") == []
    whys = [h.why for h in main.history("user_001/main")]
    assert whys == ["create", "remember", "remember", "rollback", "rollback", "rollback"]
    assert main.history("user_001/main")[3].actor == "alice"


def test_snapshot_is_immutable(main: Store) -> None:
    s1 = main.snapshot("user_001/main", "v1")
    assert main.snapshot("user_001/main", "v1") == s1  # same head: a no-op
    main.remember("a", branch="user_001/main")
    before = state(main)
    with pytest.raises(SnapshotExists):
        main.snapshot("user_001/main", "v1")
    with pytest.raises(NameClash):
        main.snapshot("user_001/main", "root")
    with pytest.raises(InvalidInput):
        main.snapshot("user_001/main", "bad name")
    with pytest.raises(UnknownBranch):
        main.snapshot("nope", "v2")
    assert state(main) == before
    assert [s.name for s in main.snapshots()] == ["v1"]


def test_rollback_errors_change_nothing(main: Store) -> None:
    main.add_event("side", parent="root")
    main.remember("a", branch="user_001/main")
    before = state(main)
    with pytest.raises(NotAnAncestor):
        main.rollback("user_001/main", "side")
    with pytest.raises(UnknownSnapshot):
        main.rollback("user_001/main", "nothing")
    with pytest.raises(UnknownBranch):
        main.rollback("nope", "root")
    assert state(main) == before


def test_history_of_unknown_branch(store: Store) -> None:
    with pytest.raises(UnknownBranch):
        store.history("nope")


def test_namespaces_are_isolated(make_store: Callable[[], Store]) -> None:
    store = make_store()
    store.add_event("root", namespace="a")
    store.add_event("root", namespace="b")
    store.create_branch("main", at="root", namespace="a")
    store.remember("secret", branch="main", namespace="a")
    with pytest.raises(UnknownBranch):
        store.remember("x", branch="main", namespace="b")
    assert store.branches(namespace="b") == []
    store.create_branch("main", at="root", namespace="b")
    assert store.memories(at="main", namespace="b") == []


def test_rollback_ignores_heads_of_an_earlier_branch_of_the_same_name(main: Store) -> None:
    main.add_event("side", parent="root")
    main.create_branch("tmp", at="side")
    main.delete_branch("tmp")
    main.create_branch("tmp", at="root")
    with pytest.raises(NotAnAncestor):
        main.rollback("tmp", "side")
    assert main.branch_head("tmp") == "root"
