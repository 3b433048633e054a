"""Large batches checked, placed and sent a chunk at a time (PostgreSQL,
`branchmem.ops.stream`) give what the plain path gives on every backend:
the same positions, the same error, nothing stored when the batch fails.

Chunks of 4 events here, so that small batches stream; one test uses a
50,000-event batch with the real chunk size.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from branchmem import Store
from branchmem.errors import BranchmemError
from branchmem.ops import stream as ingest_stream
from helpers.pg_helpers import examples
from helpers.strategies import History, histories

Item = dict[str, Any]


@pytest.fixture
def streams(monkeypatch: pytest.MonkeyPatch, backend_name: str) -> Iterator[list[int]]:
    """Small chunks; yields a list that counts the batches that streamed."""
    monkeypatch.setattr(ingest_stream, "CHUNK", 4)
    monkeypatch.setattr(ingest_stream, "STREAM_FROM", 8)
    opened: list[int] = []
    real = ingest_stream._add

    def counted(*args: Any) -> Any:
        opened.append(1)
        return real(*args)

    monkeypatch.setattr(ingest_stream, "_add", counted)
    yield opened


def chain(n: int, prefix: str = "e", root: str | None = None) -> list[Item]:
    return [
        {"id": f"{prefix}{i}", "parent": root if i == 0 else f"{prefix}{i - 1}"} for i in range(n)
    ]


def outcome(store: Store, batch: list[Item]) -> tuple[str, str]:
    try:
        store.add_events(batch)
    except BranchmemError as exc:
        return type(exc).__name__, str(exc)
    return "ok", ""


def unstreamed(store: Store, batch: list[Item]) -> None:
    """``add_events`` down the plain path."""
    at = ingest_stream.STREAM_FROM
    ingest_stream.STREAM_FROM = 10**9
    try:
        store.add_events(batch)
    finally:
        ingest_stream.STREAM_FROM = at


def stored(store: Store, ids: list[str], ns: str = "default") -> dict[str, Any]:
    return store._engine.backend.event_positions(ns, ids)


def test_positions_match_the_plain_path(
    make_store: Callable[[], Store], backend_name: str, streams: list[int]
) -> None:
    """Out-of-order arrivals, merges and roots, in one or two batches: every
    event lands where the same backend puts it without streaming."""

    @settings(
        max_examples=examples(backend_name, 60),
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    )
    @given(hist=histories(max_events=30, max_ops=0), data=st.data())
    def check(hist: History, data: st.DataObject) -> None:
        cut = data.draw(st.integers(0, len(hist.arrival)))
        batch = [{"id": e, "parents": list(hist.parents[e])} for e in hist.arrival]
        ids = list(hist.arrival)
        got, want = make_store(), make_store()
        try:
            for part in (batch[:cut], batch[cut:]):
                assert [e.id for e in got.add_events(part)] == [e["id"] for e in part]
                unstreamed(want, part)
            assert stored(got, ids) == stored(want, ids)
            for e in ids:
                assert [x.id for x in got.path(e)] == [x.id for x in want.path(e)]
        finally:
            got.close()
            want.close()

    check()
    if backend_name == "postgres":
        assert streams, "no batch streamed"


BAD: dict[str, Callable[[list[Item]], None]] = {
    "invalid role": lambda b: b[-2].update(role="bogus"),
    # Values the store cannot even look up: the batch is looked up before it
    # is checked, so only ids may reach the store.
    "NUL in a parent": lambda b: b.append({"id": "x", "parent": "a\x00b"}),
    "surrogate in a parent": lambda b: b.append({"id": "x", "parent": "a\ud800"}),
    "NUL in an id": lambda b: b.append({"id": "q\x00", "parent": "e1"}),
    "NUL in every namespace": lambda b: [e.update(namespace="a\x00") for e in b],
    "unhashable namespace": lambda b: b.append({"id": "x", "namespace": ["a"]}),
    "cycle": lambda b: b.append({"id": "x", "parent": "x"}),
    "conflicting re-add": lambda b: b.append({"id": "e3", "parent": "e2", "content": "other"}),
    "branch name": lambda b: b.append({"id": "main", "parent": "e1"}),
}


@pytest.mark.parametrize("bad", sorted(BAD))
def test_a_bad_event_late_in_the_batch_leaves_nothing(
    make_store: Callable[[], Store], backend_name: str, streams: list[int], bad: str
) -> None:
    batch = chain(30)
    BAD[bad](batch)
    store, ref = make_store(), Store()
    for s in (store, ref):
        s.add_event("r0")
        s.create_branch("main", at="r0")
    assert outcome(store, batch) == outcome(ref, batch)
    assert outcome(store, batch)[0] != "ok"
    assert stored(store, [f"e{i}" for i in range(30)]) == {}
    # A placement error sends the batch down the plain path, which raises it:
    # the streamed one was started, then undone.
    if backend_name == "postgres" and bad in ("cycle", "conflicting re-add", "branch name"):
        assert streams


def test_a_bad_event_after_a_placement_error_is_the_one_raised(
    make_store: Callable[[], Store], streams: list[int]
) -> None:
    """The plain path checks every event before placing any."""
    batch = [*chain(20), {"id": "x", "parent": "x"}, *chain(20, "f"), {"id": ""}]
    store = make_store()
    assert outcome(store, batch) == outcome(Store(), batch)
    assert outcome(store, batch)[0] == "InvalidInput"
    assert stored(store, ["e0", "x", "f0"]) == {}


def test_re_adding_a_stored_batch_is_a_no_op(
    make_store: Callable[[], Store], streams: list[int]
) -> None:
    store = make_store()
    first = chain(20)
    store.add_events(first)
    before = stored(store, [e["id"] for e in first])
    again = [*first[10:], *chain(12, "f", root="e19")]
    assert [e.id for e in store.add_events(again)] == [e["id"] for e in again]
    assert stored(store, [e["id"] for e in first]) == before
    assert store.path("f11")[0].id == "e0"
    assert len(store.path("f11")) == 32


def test_a_batch_of_two_namespaces_goes_in_whole(
    make_store: Callable[[], Store], streams: list[int]
) -> None:
    batch = [*chain(20), *({**e, "namespace": "other"} for e in chain(20, "o"))]
    store = make_store()
    store.add_events(batch)
    assert len(stored(store, [f"e{i}" for i in range(20)])) == 20
    assert len(stored(store, [f"o{i}" for i in range(20)], "other")) == 20


def test_concurrent_batches_of_one_namespace(
    make_store: Callable[[], Store], streams: list[int]
) -> None:
    """Writers of a namespace take turns: two chains under one stored root,
    sent at once from two threads, both end up whole and apart."""
    store = make_store()
    store.add_event("r")
    errors: list[BaseException] = []

    def write(prefix: str) -> None:
        try:
            for k in range(3):
                store.add_events(chain(40, f"{prefix}{k}-", root="r" if k == 0 else None))
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(p,)) for p in "ab"]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    ids = [f"{p}{k}-{i}" for p in "ab" for k in range(3) for i in range(40)]
    pos = stored(store, ids)
    assert None not in pos.values() and len(set(pos.values())) == len(ids)
    for p in "ab":
        assert [e.id for e in store.path(f"{p}0-39")] == ["r", *(f"{p}0-{i}" for i in range(40))]


def test_a_bad_event_late_in_a_50000_batch_leaves_nothing(
    make_store: Callable[[], Store],
) -> None:
    """With the real chunk size: the batch streams on PostgreSQL."""
    batch = chain(50_000)
    batch[49_998]["role"] = "bogus"
    store = make_store()
    assert outcome(store, batch)[0] == "InvalidInput"
    assert stored(store, ["e0", "e25000", "e49997"]) == {}
    store.add_events(batch[:49_998])
    assert len(store.path("e49997")) == 49_998
    # Every id stored: the stream fails on its first row, then the plain path
    # finds a re-add that changes nothing.
    assert len(store.add_events(batch[:49_998])) == 49_998
    assert len(store.path("e49997")) == 49_998


def test_a_failed_batch_inside_a_transaction_leaves_nothing(
    make_store: Callable[[], Store], backend_name: str, streams: list[int]
) -> None:
    """Inside a caller's transaction that goes on after the error, the rows
    the failed batch had sent are undone (its savepoint) and the rest commits."""
    store = make_store()
    bad = [*chain(30), {"id": "e3", "parent": "e2", "content": "other"}]
    with store._engine.backend.transaction():
        with pytest.raises(BranchmemError):
            store.add_events(bad)
        store.add_events(chain(10, "f"))
    assert stored(store, ["e0", "e29"]) == {}
    assert len(stored(store, [f"f{i}" for i in range(10)])) == 10
    if backend_name == "postgres":
        assert streams


@pytest.mark.parametrize("root", [None, "e9"])
def test_a_streamed_batch_looks_up_before_it_sends(
    make_store: Callable[[], Store], backend_name: str, streams: list[int], root: str | None
) -> None:
    """What the batch needs from the store (its stored parents, their
    segments' tips, the next segment's number, waiting events) is looked up
    before the first row goes out: no statement ends the ``COPY`` midway
    (which waits for the server to store every row sent), so it opens once.
    A new root first needs the next segment's number in the first chunk, the
    stored segment's tip only later; going on from ``e9``, the other way round."""
    store = make_store()
    store.add_events(chain(10))
    batch = chain(30, "f", root=root)
    for i in range(0, 30, 3):  # edits far back: forks from stored events
        batch.insert(i + 5, {"id": f"g{i}", "parent": f"e{i // 3}"})
    sent: list[str] = []
    trace = getattr(store._engine.backend, "_trace", None)

    def traced(sql: str, params: Any) -> None:
        sent.append(sql)
        if trace is not None:
            trace(sql, params)

    if backend_name == "postgres":
        store._engine.backend._trace = traced
    store.add_events(batch)
    if backend_name == "postgres":  # (the one backend that streams)
        assert streams
        assert sum(s.startswith("COPY events") for s in sent) == 1, sent
    want = Store()
    want.add_events(chain(10))
    unstreamed(want, batch)
    assert stored(store, [e["id"] for e in batch]) == stored(want, [e["id"] for e in batch])
