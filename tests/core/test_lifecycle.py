"""Lifecycle: decay and use, TTL and archive, validity, as_of, pruning; on every backend."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from branchmem import InvalidInput, Store, UnknownAnchor, UnknownMemory
from branchmem.policy import DAY, HOUR, Policy

Clocked = Callable[..., Store]


@pytest.fixture
def clock() -> list[float]:
    return [1000.0]


@pytest.fixture
def clocked(open_store: Callable[..., Store], clock: list[float]) -> Clocked:
    """A factory of stores whose clock reads ``clock[0]``."""

    def make(policy: Policy | None = None) -> Store:
        return open_store(clock=lambda: clock[0], policy=policy)

    return make


def ids(store: Store, at: str | list[str], **kw: object) -> list[str]:
    return [m.id for m in store.memories(at=at, **kw)]  # type: ignore[arg-type]


# ------------------------------------------------------------------ decay
def test_score_decays_by_kind_half_life(clocked: Clocked) -> None:
    store = clocked()
    store.add_event("e1")
    w = store.add_memory("w", sources=["e1"], kind="working", importance=1.0, id="w")
    s = store.add_memory("s", sources=["e1"], kind="semantic", importance=1.0, id="s")
    assert store.score(w.id, now=1000.0) == pytest.approx(1.0)
    assert store.score(w.id, now=1000.0 + 6 * HOUR) == pytest.approx(0.5)
    assert store.score(s.id, now=1000.0 + 365 * DAY) == pytest.approx(0.5)
    assert store.score(s.id, now=1000.0 + 6 * HOUR) > store.score(w.id, now=1000.0 + 6 * HOUR)


def test_policy_is_configurable_and_checked(clocked: Clocked) -> None:
    store = clocked(Policy(half_lives={"semantic": 10.0}))
    store.add_event("e1")
    m = store.add_memory("x", sources=["e1"], importance=0.8)
    assert store.score(m.id, now=1010.0) == pytest.approx(0.4)
    for bad in ({"semantic": 0}, {"semantic": -1.0}, {"semantic": "1d"}):
        with pytest.raises(InvalidInput):
            Policy(half_lives=bad)  # type: ignore[arg-type]
    with pytest.raises(InvalidInput):
        Policy(max_boost=0.5)


def test_reads_never_write_use_touch_does(clocked: Clocked, clock: list[float]) -> None:
    store = clocked(Policy(boost_per_use=0.5, max_boost=2.0))
    store.add_event("e1")
    m = store.add_memory("x", sources=["e1"], importance=0.5)
    first = store.score(m.id, now=1000.0)
    store.memories(at="e1")
    store.memories(at="e1")
    assert store.score(m.id, now=1000.0) == first
    store.memories(at="e1", touch=True)
    assert store.score(m.id, now=1000.0) == pytest.approx(0.75)
    store.touch([m.id])
    store.touch([m.id])
    assert store.score(m.id, now=1000.0) == pytest.approx(1.0)  # bounded by max_boost
    # age counts from the last use
    clock[0] = 5000.0
    store.touch([m.id])
    assert store.score(m.id, now=5000.0) == pytest.approx(1.0)
    assert [a.op for a in store.audit("default")].count("touch") == 4


def test_touch_bad_input_changes_nothing(clocked: Clocked) -> None:
    store = clocked()
    store.add_event("e1")
    m = store.add_memory("x", sources=["e1"])
    before = store.score(m.id, now=1000.0)
    with pytest.raises(UnknownMemory):
        store.touch([m.id, "nope"])
    with pytest.raises(InvalidInput):
        store.touch(m.id)
    assert store.score(m.id, now=1000.0) == before


# ------------------------------------------------------------ ttl, archive
def test_expired_records_are_hidden_at_that_time(clocked: Clocked, clock: list[float]) -> None:
    store = clocked()
    store.add_event("e1")
    store.add_memory("x", sources=["e1"], expires_at=2000.0, id="x")
    store.add_memory("y", sources=["e1"], id="y")
    assert ids(store, "e1") == ["x", "y"]  # the store's clock: 1000
    assert ids(store, "e1", now=1999.0) == ["x", "y"]
    assert ids(store, "e1", now=2000.0) == ["y"]
    assert ids(store, "e1", now=2000.0, include_archived=True) == ["x", "y"]
    clock[0] = 3000.0
    assert ids(store, "e1") == ["y"]
    assert ids(store, ["e1"]) == ["y"]  # scope chains too


def test_default_ttl_per_kind(clocked: Clocked) -> None:
    store = clocked(Policy(ttls={"working": 60.0}))
    store.add_event("e1")
    w = store.add_memory("w", sources=["e1"], kind="working")
    s = store.add_memory("s", sources=["e1"])
    own = store.add_memory("o", sources=["e1"], kind="working", expires_at=5000.0)
    assert (w.expires_at, s.expires_at, own.expires_at) == (1060.0, None, 5000.0)
    store.create_branch("main", at="e1")
    r = store.remember("r", branch="main", kind="working")
    assert r.expires_at == 1060.0
    assert ids(store, "main", now=2000.0) == [s.id, own.id]


def test_archive_and_restore(clocked: Clocked, clock: list[float]) -> None:
    store = clocked()
    store.add_event("e1")
    store.add_memory("x", sources=["e1"], expires_at=1500.0, id="x")
    store.add_memory("y", sources=["e1"], expires_at=9000.0, id="y")
    clock[0] = 2000.0
    assert store.archive_expired(actor="ops") == ["x"]
    assert store.archive_expired() == []  # already archived
    assert ids(store, "e1") == ["y"]
    # archived records are hidden even at a time before they expired
    assert ids(store, "e1", now=1200.0) == ["y"]
    assert ids(store, "e1", include_archived=True) == ["x", "y"]
    store.restore("x", actor="ops")
    assert ids(store, "e1") == ["x", "y"]  # back for good, expiry no longer applies
    assert store.archive_expired(now=10_000.0) == ["y"]
    assert [a.op for a in store.audit("default")][-3:] == ["archive", "restore", "archive"]
    with pytest.raises(UnknownMemory):
        store.restore("nope")


def test_restore_needs_an_archived_or_expired_record(clocked: Clocked, clock: list[float]) -> None:
    store = clocked()
    store.add_event("e1")
    store.add_memory("short", sources=["e1"], expires_at=1500.0, id="x")
    store.add_memory("plain", sources=["e1"], id="y")
    before = store.audit("default")
    for mid in ("x", "y"):  # not expired yet / never expires: nothing to restore
        with pytest.raises(InvalidInput, match="neither archived nor expired"):
            store.restore(mid)
    assert store.audit("default") == before
    assert ids(store, "e1", now=2000.0) == ["y"]  # x still expires
    clock[0] = 2000.0
    store.restore("x")  # expired, not archived: brought back from expiry
    assert ids(store, "e1", now=9000.0) == ["x", "y"]


def test_explain_says_when_time_hides_what_the_gate_shows(
    clocked: Clocked, clock: list[float]
) -> None:
    store = clocked()
    store.add_event("e1")
    store.add_memory("x", sources=["e1"], expires_at=1500.0, id="x")
    store.add_memory("bj", sources=["e1"], valid_from=100.0, valid_to=1200.0, id="bj")
    store.add_memory("y", sources=["e1"], id="y")
    store.add_memory("later", sources=["e1"], valid_from=5000.0, id="later")

    def notes() -> dict[str, str | None]:
        out = {}
        for mid in ("x", "bj", "y", "later"):
            ex = store.explain(mid, at="e1")
            assert ex.visible and store.visible(mid, at="e1")  # the gate's answer
            # the note is there exactly when a read now leaves the record out
            assert (ex.hidden_by_time is None) == (mid in ids(store, "e1"))
            out[mid] = ex.hidden_by_time
        return out

    assert notes() == {"x": None, "bj": None, "y": None, "later": notes()["later"]}
    assert "valid_from" in (notes()["later"] or "")
    clock[0] = 1300.0
    assert "valid_to" in (notes()["bj"] or "")
    clock[0] = 2000.0
    got = notes()
    assert "expired at 1970-01-01 00:25:00 UTC" in (got["x"] or "")
    assert "include_archived=True" in (got["x"] or "")
    ex = store.explain("x", at="e1")
    assert str(ex).startswith("visible at 'e1': every source ('e1') is on the path; but reads now")
    assert ex.to_dict()["hidden_by_time"] == got["x"]
    store.archive_expired()
    assert "archived at" in (notes()["x"] or "")
    store.restore("x")
    assert notes()["x"] is None
    # ``now=`` asks about another time, as reads do
    at_1300 = store.explain("bj", at="e1", now=1300.0)
    assert "valid_to" in (at_1300.hidden_by_time or "")
    assert "reads at now=1300.0 leave it out" in str(at_1300)
    assert store.explain("bj", at="e1", now=150.0).hidden_by_time is None
    with pytest.raises(InvalidInput):
        store.explain("bj", at="e1", now="later")  # type: ignore[arg-type]


def test_times_beyond_the_calendar_do_not_break_reads(clocked: Clocked) -> None:
    store = clocked()
    store.add_event("e1")
    store.add_memory("not yet", sources=["e1"], valid_from=1e12, id="later")
    store.add_memory("long gone", sources=["e1"], valid_to=-1e12, id="gone")
    store.add_memory("far expiry", sources=["e1"], expires_at=1e15, id="far")
    store.add_memory("plain", sources=["e1"], id="plain")
    assert ids(store, "e1") == ["far", "plain"]
    assert ids(store, ["e1"], now=2e15) == ["later", "plain"]
    assert "1e+12" in (store.explain("later", at="e1").hidden_by_time or "")
    assert "-1e+12" in (store.explain("gone", at="e1").hidden_by_time or "")
    assert "1e+15" in (store.explain("far", at="e1", now=2e15).hidden_by_time or "")
    store.create_branch("main", at="e1")
    store.create_branch("side", at="e1")
    store.remember("x", branch="side")
    assert store.merge("side", "main").added == 1  # merges read through the same test


# ---------------------------------------------------------------- validity
def test_validity_span(clocked: Clocked) -> None:
    store = clocked()
    store.add_event("e1")
    store.add_memory("这周在北京", sources=["e1"], valid_from=100.0, valid_to=200.0, id="bj")
    assert ids(store, "e1", now=99.0) == []
    assert ids(store, "e1", now=100.0) == ["bj"]
    assert ids(store, "e1", now=199.9) == ["bj"]
    assert ids(store, "e1", now=200.0) == []
    assert ids(store, "e1", now=150.0, include_archived=True) == ["bj"]
    assert ids(store, "e1", now=250.0, include_archived=True) == []


@pytest.mark.parametrize(
    "fields",
    [
        {"valid_from": 200.0, "valid_to": 100.0},
        {"expires_at": "tomorrow"},
        {"valid_from": float("nan")},
        {"valid_to": True},
    ],
)
def test_bad_times_are_rejected(clocked: Clocked, fields: dict[str, object]) -> None:
    store = clocked()
    store.add_event("e1")
    with pytest.raises(InvalidInput):
        store.add_memory("x", sources=["e1"], **fields)  # type: ignore[arg-type]
    with pytest.raises(InvalidInput):
        store.memories(at="e1", now="now")  # type: ignore[arg-type]
    assert store.memories(at="e1", include_archived=True) == []


def test_supersede_keeps_or_replaces_times(clocked: Clocked) -> None:
    store = clocked()
    store.add_events([{"id": "e1"}, {"id": "e2", "parent": "e1"}])
    old = store.add_memory("x", sources=["e1"], valid_to=500.0)
    new = store.supersede(old.id, "y", sources=["e2"])
    assert new.valid_to == 500.0
    newer = store.supersede(new.id, "z", sources=["e2"], valid_to=None, expires_at=900.0)
    assert (newer.valid_to, newer.expires_at) == (None, 900.0)
    with pytest.raises(InvalidInput):
        store.supersede(newer.id, "w", sources=["e2"], valid_from=9.0, valid_to=1.0)


# ------------------------------------------------------------------- as_of
def test_as_of_answers_as_then(clocked: Clocked, clock: list[float]) -> None:
    store = clocked()
    store.add_event("e1")
    store.create_branch("main", at="e1")
    clock[0] = 1010.0
    a = store.remember("a", branch="main")
    head_then = store.branch_head("main")
    clock[0] = 1020.0
    store.add_event("fix", branch="main")
    store.retract(a.id, sources=["fix"])
    b = store.remember("b", branch="main")
    clock[0] = 1030.0
    assert ids(store, "main") == [b.id]
    assert ids(store, "main", as_of=1015.0) == [a.id]
    assert ids(store, "main", as_of=1005.0) == []
    assert ids(store, "main", as_of=999.0) == []  # the branch did not exist yet
    assert ids(store, head_then, as_of=1025.0) == [a.id]
    assert ids(store, ["main", head_then], as_of=1015.0) == [a.id]
    assert [m.via for m in store.memories(at=["main"], as_of=1015.0)] == ["main"]
    assert [m.via for m in store.memories(at="main", as_of=1015.0)] == [None]
    with pytest.raises(UnknownAnchor):
        store.memories(at="nope", as_of=1015.0)


def test_as_of_ignores_events_that_arrived_later(clocked: Clocked, clock: list[float]) -> None:
    store = clocked()
    store.add_event("child", parent="late")
    store.add_memory("x", sources=["child"], id="x")
    clock[0] = 2000.0
    store.add_event("late")
    assert ids(store, "child") == ["x"]
    assert ids(store, "child", as_of=1500.0) == []  # child was still waiting then


def test_as_of_of_a_deleted_branch(clocked: Clocked, clock: list[float]) -> None:
    store = clocked()
    store.add_event("e1")
    store.create_branch("tmp", at="e1")
    store.remember("x", branch="tmp", id="x")
    clock[0] = 2000.0
    store.delete_branch("tmp")
    assert ids(store, "tmp", as_of=1500.0) == ["x"]
    assert ids(store, "tmp", as_of=2500.0) == []


# ------------------------------------------------------------------ prune
def test_prune_branches(clocked: Clocked, clock: list[float]) -> None:
    store = clocked()
    store.add_event("e1")
    for name in ("tmp", "tmp/a", "tmp/b/c", "tmpx", "main"):
        store.create_branch(name, at="e1")
    m = store.remember("keep me", branch="tmp/a")
    clock[0] = 1000.0 + 2 * HOUR
    store.remember("fresh", branch="tmp/b/c")
    assert store.prune_branches("tmp/", older_than=HOUR, actor="janitor") == ["tmp/a"]
    # A prefix names a folder: its branches go, never the branch of the name itself.
    assert [b.name for b in store.branches()] == ["main", "tmp", "tmp/b/c", "tmpx"]
    assert ids(store, m.sources[0]) == [m.id]  # records stay
    assert store.audit("default")[-1].op == "prune_branches"
    with pytest.raises(InvalidInput):
        store.prune_branches("tmp", older_than=-1)
    with pytest.raises(InvalidInput):
        store.prune_branches("bad prefix", older_than=1)


def test_prune_branches_checks_every_name_before_deleting_any(
    clocked: Clocked, clock: list[float]
) -> None:
    store = clocked()
    store.add_event("e1")
    for name in ("task", "task/a", "task/b", "task/x"):
        store.create_branch(name, at="e1")
    clock[0] += 2 * HOUR
    seen: list[str] = []

    def check(name: str) -> None:
        seen.append(name)
        if name == "task/x":
            raise PermissionError(name)

    before = (store.branches(), len(store.audit("default")))
    with pytest.raises(PermissionError):
        store.prune_branches("task", older_than=HOUR, check=check)
    assert seen == ["task/a", "task/b", "task/x"]
    assert (store.branches(), len(store.audit("default"))) == before
    assert store.prune_branches("task", older_than=HOUR, check=seen.append) == [
        "task/a",
        "task/b",
        "task/x",
    ]


def test_lifecycle_bad_input(clocked: Clocked) -> None:
    store = clocked()
    store.add_event("e1")
    m = store.add_memory("x", sources=["e1"], expires_at=1500.0)
    with pytest.raises(InvalidInput):
        store.archive_expired(now="later")  # type: ignore[arg-type]
    with pytest.raises(InvalidInput):
        store.score(m.id, now=float("inf"))
    with pytest.raises(UnknownMemory):
        store.score("nope")
    with pytest.raises(InvalidInput):
        store.restore(m.id, actor="has\nnewline")
    assert store.memories(at="e1", now=2000.0, include_archived=True) == [m]
    assert store.audit("default")[-1].op == "add_memories"


def test_lifecycle_state_survives_reopening(tmp_path: Path) -> None:
    path = tmp_path / "life.db"
    with Store(path, clock=lambda: 1000.0) as store:
        store.add_event("e1")
        store.add_memory("x", sources=["e1"], expires_at=1500.0, id="x")
        store.add_memory("y", sources=["e1"], id="y")
        store.add_memory("z", sources=["e1"], expires_at=1200.0, id="z")
        store.archive_expired(now=1300.0)
    with Store(path, clock=lambda: 2000.0) as store:
        assert ids(store, "e1") == ["y"]
        assert ids(store, "e1", now=1100.0) == ["x", "y"]  # z stays archived
        assert ids(store, "e1", include_archived=True) == ["x", "y", "z"]
