"""The gate on forked paths (run by ``python bench/gate.py``; see its docstring).

The worst shape for the gate's index: each user message is answered, then
the answer is regenerated (or the message edited) and the conversation goes
on from the newer one, so nearly every step starts a segment.

- writes: memories sourced from a message and its reply (parent first)
  against memories from the reply alone, on the same history;
- reads: ``memories(at=tip)`` on that path against the same records on a
  chain of the same messages (no forks), warm, on both backends; and on
  SQLite the first read of a fresh connection (nothing cached), with the
  statements it issued.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

from branchmem import Store
from gate import medians, remove_dir


def make_forked_path(steps: int) -> tuple[list[dict[str, Any]], list[list[str]]]:
    """Events of the forked path, and the (message, reply) pair of each step."""
    events: list[dict[str, Any]] = []
    pairs = []
    last = None
    for i in range(steps):
        if i % 3 == 2 and last is not None:  # an edit: the first wording, then the second
            events.append({"id": f"u{i}a", "parent": last, "role": "user", "content": f"问 {i}"})
        u = f"u{i}"
        events.append({"id": u, "parent": last, "role": "user", "content": f"问题 {i}"})
        events.append({"id": f"r{i}a", "parent": u, "role": "assistant", "content": f"答 {i}"})
        r = f"r{i}"  # the regenerated reply the conversation continues from
        events.append({"id": r, "parent": u, "role": "assistant", "content": f"回答 {i}"})
        pairs.append([u, r])
        last = r
    return events, pairs


def forked_path(steps: int, repeat: int) -> None:
    """Two-source memories against one-source ones on the forked path, both backends."""
    events, pairs = make_forked_path(steps)
    two = [{"id": f"m{i}", "content": f"记忆 {i}", "sources": p} for i, p in enumerate(pairs)]
    one = [{"id": f"m{i}", "content": f"记忆 {i}", "sources": p[1:]} for i, p in enumerate(pairs)]
    print(f"forked path: {len(events):,} events, {steps:,} memories of each shape")
    tmp = Path(tempfile.mkdtemp(prefix="branchmem-bench-"))
    for label in ("memory", "sqlite"):
        stores: dict[str, Store] = {}
        for shape in ("one", "two"):
            st = Store() if label == "memory" else Store(tmp / f"{shape}.db")
            st.add_events(events)
            stores[shape] = st
        times: dict[str, list[float]] = {"two": [], "one": []}
        for k in range(repeat):
            # Alternating, so both shapes meet the same machine conditions.
            for shape, mems in (("one", one), ("two", two)):
                batch = [dict(m, id=f"{m['id']}.{k}") for m in mems]
                t = time.perf_counter()
                stores[shape].add_memories(batch)
                times[shape].append(time.perf_counter() - t)
        tip = pairs[-1][1]
        assert len(stores["two"].memories(at=tip)) == len(stores["one"].memories(at=tip))
        for st in stores.values():
            st.close()
        medians(f"{label}: two-source memories vs one-source (forked path)", times, "<= 1.5x")
    remove_dir(tmp)


def chain_of(pairs: list[list[str]]) -> list[dict[str, Any]]:
    """The path's messages as one chain, in the same order, without the abandoned ones."""
    events: list[dict[str, Any]] = []
    last = None
    for i, (u, r) in enumerate(pairs):
        events.append({"id": u, "parent": last, "role": "user", "content": f"问题 {i}"})
        events.append({"id": r, "parent": u, "role": "assistant", "content": f"回答 {i}"})
        last = r
    return events


def forked_reads(messages: int, repeat: int) -> None:
    """A read at the tip of a forked path of ``messages`` messages against the
    same read on a chain of the same messages holding the same records."""
    events, pairs = make_forked_path(messages // 2)
    mems = []
    for i, (u, r) in enumerate(pairs):
        mems.append({"id": f"q{i}", "content": f"问 {i}", "sources": [u]})
        mems.append({"id": f"a{i}", "content": f"答 {i}", "sources": [u, r]})
    shapes = {"forked": events, "chain": chain_of(pairs)}
    tip = pairs[-1][1]
    tmp = Path(tempfile.mkdtemp(prefix="branchmem-bench-"))
    print(
        f"forked path reads: {messages:,} messages on the path ({len(events):,} events), "
        f"{len(mems):,} memories, against a chain of the same messages"
    )
    for label in ("memory", "sqlite"):
        stores: dict[str, Store] = {}
        for shape, evs in shapes.items():
            st = Store() if label == "memory" else Store(tmp / f"{shape}.db")
            st.add_events(evs)
            st.add_memories(mems)
            stores[shape] = st
        want = [m.id for m in stores["chain"].memories(at=tip)]
        assert [m.id for m in stores["forked"].memories(at=tip)] == want
        assert len(want) == len(mems)
        times: dict[str, list[float]] = {"forked": [], "chain": []}
        cpu: dict[str, list[float]] = {"forked": [], "chain": []}
        for _ in range(repeat):
            for shape in ("forked", "chain"):  # alternately: the same machine conditions
                t, c = time.perf_counter(), time.process_time()
                stores[shape].memories(at=tip)
                times[shape].append(time.perf_counter() - t)
                cpu[shape].append(time.process_time() - c)
        for st in stores.values():
            st.close()
        medians(f"{label}: read at the tip, forked path vs chain (warm)", times, "<= 3x")
        # A read of a few milliseconds is often descheduled on a loaded machine,
        # which wall-clock time counts; the process's CPU time does not.
        medians(f"{label}: the same, CPU time of the process", cpu, "<= 3x")
        if label == "sqlite":
            cold(tmp, tip, repeat)
    remove_dir(tmp)


def cold(tmp: Path, tip: str, repeat: int) -> None:
    """The first read of a fresh connection on each file (nothing cached)."""
    times: dict[str, list[float]] = {"forked": [], "chain": []}
    statements: dict[str, int] = {}
    for _ in range(repeat):
        for shape in times:
            st = Store(tmp / f"{shape}.db")
            seen: list[str] = []
            st._engine.backend._db.set_trace_callback(seen.append)  # type: ignore[attr-defined]
            t = time.perf_counter()
            st.memories(at=tip)
            times[shape].append(time.perf_counter() - t)
            statements[shape] = len(seen)
            st.close()
    medians(
        f"sqlite: first read of a connection, forked vs chain "
        f"({statements['forked']} vs {statements['chain']} statements)",
        times,
        "-",
    )
