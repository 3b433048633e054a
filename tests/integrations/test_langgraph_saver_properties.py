"""BranchmemSaver against LangGraph's InMemorySaver as the reference: the same
random sequence of puts, pending writes and thread deletions gives the same
answers to get_tuple and list, on every backend."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langgraph")

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langgraph.checkpoint.base import CheckpointTuple, empty_checkpoint
from langgraph.checkpoint.memory import InMemorySaver

from branchmem import Store
from branchmem.integrations.langgraph import BranchmemSaver
from helpers.pg_helpers import PG_URL, SKIP_REASON, Tracer, open_backend

THREADS = ["a", "b"]
NAMESPACES = ["", "sub:1"]
CHANNELS = ["x", "y", "__error__", "__interrupt__"]

_op = st.one_of(
    st.tuples(
        st.just("put"),
        st.sampled_from(THREADS),
        st.sampled_from(NAMESPACES),
        st.integers(0, 20),  # which earlier checkpoint is the parent (20: none)
        st.sampled_from(["input", "loop", "update"]),
    ),
    st.tuples(
        st.just("writes"),
        st.integers(0, 50),  # which checkpoint
        st.sampled_from(["t1", "t2"]),
        st.lists(st.tuples(st.sampled_from(CHANNELS), st.integers(0, 9)), max_size=3),
    ),
    st.tuples(st.just("delete"), st.sampled_from(THREADS)),
    # Pending writes on the checkpoint the next op would put (their root comes
    # first), in a thread and namespace that has checkpoints already (how the
    # reference orders namespaces whose first row is a write is its own), and
    # a checkpoint put again with other values.
    st.tuples(
        st.just("early"),
        st.integers(0, 50),  # whose thread and namespace
        st.lists(st.tuples(st.sampled_from(CHANNELS), st.integers(0, 9)), max_size=2),
    ),
    # (values from a few, at one time: a put can repeat an earlier one exactly)
    st.tuples(st.just("again"), st.integers(0, 50), st.integers(0, 2)),
)


def _cfg(thread: str, ns: str, cid: str | None = None) -> Any:
    conf: dict[str, Any] = {"thread_id": thread, "checkpoint_ns": ns}
    if cid is not None:
        conf["checkpoint_id"] = cid
    return {"configurable": conf}


def _plain(t: CheckpointTuple | None) -> Any:
    if t is None:
        return None
    parent = t.parent_config["configurable"]["checkpoint_id"] if t.parent_config else None
    return (
        t.config["configurable"]["thread_id"],
        t.config["configurable"]["checkpoint_ns"],
        t.checkpoint["id"],
        t.checkpoint["channel_values"],
        parent,
        dict(t.metadata),
        list(t.pending_writes or []),
    )


def _store(backend: str, path: Path) -> Store:
    if backend == "postgres":
        return Store(backend=open_backend(Tracer()))
    return Store() if backend == "memory" else Store(path)


@pytest.mark.parametrize(
    "backend",
    [
        "memory",
        "sqlite",
        pytest.param("postgres", marks=pytest.mark.skipif(not PG_URL, reason=SKIP_REASON)),
    ],
)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow,
          HealthCheck.function_scoped_fixture])  # fmt: skip
@given(ops=st.lists(_op, min_size=1, max_size=15))
def test_same_answers_as_in_memory_saver(backend: str, tmp_path: Path, ops: list[Any]) -> None:
    store = _store(backend, tmp_path / f"p{abs(hash(str(ops)))}.db")
    ours, ref = BranchmemSaver(store), InMemorySaver()
    made: list[tuple[str, str, str]] = []  # (thread, ns, checkpoint id) in put order
    parents: dict[tuple[str, str, str], tuple[str | None, str]] = {}
    for n, op in enumerate(ops):
        if op[0] == "put":
            _, thread, ns, pick, source = op
            same = [c for c in made if c[0] == thread and c[1] == ns]
            parent = same[pick % len(same)][2] if same and pick < 20 else None
            cp = empty_checkpoint()
            cp["id"] = f"{n:04d}"
            cp["channel_values"] = {"x": n}
            cp["channel_versions"] = {"x": n + 1}  # the reference keys values by version
            meta: Any = {"source": source, "step": n}
            for saver in (ours, ref):
                saver.put(_cfg(thread, ns, parent), cp, meta, {"x": n + 1})
            made.append((thread, ns, cp["id"]))
            parents[made[-1]] = (parent, source)
        elif op[0] == "early" and made:
            _, pick, writes = op
            thread, ns, _ = made[pick % len(made)]
            for saver in (ours, ref):
                saver.put_writes(_cfg(thread, ns, f"{n + 1:04d}"), writes, "t0")
        elif op[0] == "again" and made:
            _, pick, value = op
            thread, ns, cid = made[pick % len(made)]
            parent, source = parents[(thread, ns, cid)]
            cp = empty_checkpoint()
            cp["id"], cp["ts"] = cid, "2026-01-01T00:00:00+00:00"
            cp["channel_values"] = {"x": value}
            cp["channel_versions"] = {"x": value + 1}
            meta = {"source": source, "step": value}
            for saver in (ours, ref):
                saver.put(_cfg(thread, ns, parent), cp, meta, {"x": value + 1})
        elif op[0] == "writes" and made:
            _, pick, task, writes = op
            thread, ns, cid = made[pick % len(made)]
            for saver in (ours, ref):
                saver.put_writes(_cfg(thread, ns, cid), writes, task)
        elif op[0] == "delete":
            for saver in (ours, ref):
                saver.delete_thread(op[1])
            made = [c for c in made if c[0] != op[1]]
    for thread in THREADS:
        for ns in NAMESPACES:
            assert _plain(ours.get_tuple(_cfg(thread, ns))) == _plain(
                ref.get_tuple(_cfg(thread, ns))
            )
            for _, _, cid in [c for c in made if c[:2] == (thread, ns)]:
                got = ours.get_tuple(_cfg(thread, ns, cid))
                assert _plain(got) == _plain(ref.get_tuple(_cfg(thread, ns, cid)))
        conf = {"configurable": {"thread_id": thread}}
        assert [_plain(t) for t in ours.list(conf)] == [_plain(t) for t in ref.list(conf)]
        loops = {"source": "loop"}
        assert [_plain(t) for t in ours.list(conf, filter=loops, limit=2)] == [
            _plain(t) for t in ref.list(conf, filter=loops, limit=2)
        ]
    assert [_plain(t) for t in ours.list(None)] == [_plain(t) for t in ref.list(None)]
    store.close()


@pytest.mark.parametrize(
    "backend",
    [
        "memory",
        "sqlite",
        pytest.param("postgres", marks=pytest.mark.skipif(not PG_URL, reason=SKIP_REASON)),
    ],
)
def test_a_checkpoint_put_back_to_an_earlier_value_reads_that_value(
    backend: str, tmp_path: Path
) -> None:
    """A checkpoint put with A, then B, then A again (the very same data as the
    first put, whose root holds it) reads A, as the reference does: the third
    put must not be taken for a harmless repeat of the first."""
    store = _store(backend, tmp_path / "s.db")
    ours, ref = BranchmemSaver(store), InMemorySaver()
    for value in ("A", "B", "A"):
        cp = empty_checkpoint()
        cp["id"], cp["ts"] = "0001", "2026-01-01T00:00:00+00:00"
        cp["channel_values"] = {"x": value}
        cp["channel_versions"] = {"x": 1}
        for saver in (ours, ref):
            saver.put(_cfg("a", ""), cp, {"source": "input", "step": 0}, {"x": 1})
    got = ours.get_tuple(_cfg("a", "", "0001"))
    assert got is not None and got.checkpoint["channel_values"] == {"x": "A"}
    assert _plain(got) == _plain(ref.get_tuple(_cfg("a", "", "0001")))
    store.close()


def test_namespaces_are_listed_in_put_order_whatever_the_clock_does() -> None:
    """Roots are listed in the order they were written, even where the store's
    clock steps back between two puts (a clock set back, or hosts apart);
    the clock only places a checkpoint put again among them."""
    now = [100.0]
    ours, ref = BranchmemSaver(Store(clock=lambda: now[0])), InMemorySaver()

    def put(ns: str, cid: str, value: int) -> None:
        cp = empty_checkpoint()
        cp["id"], cp["ts"] = cid, "2026-01-01T00:00:00+00:00"
        cp["channel_values"], cp["channel_versions"] = {"x": value}, {"x": value + 1}
        for saver in (ours, ref):
            saver.put(_cfg("t", ns), cp, {"source": "input", "step": value}, {"x": value + 1})

    put("a", "0001", 1)
    now[0] -= 10  # stepped back
    put("b", "0002", 2)
    now[0] += 100
    put("c", "0003", 3)
    put("b", "0002", 4)  # again: a listing record, written last
    conf: Any = {"configurable": {"thread_id": "t"}}
    assert [_plain(t) for t in ours.list(conf)] == [_plain(t) for t in ref.list(conf)]
    assert [t.config["configurable"]["checkpoint_ns"] for t in ours.list(conf)] == ["a", "b", "c"]
