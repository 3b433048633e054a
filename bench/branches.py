"""Benchmark branch operations against single-anchor reads, side by side in one run.

    python bench/branches.py            # merge 2 x 100,000 memories; chain read on 1,000,000
    python bench/branches.py --quick    # merge 2 x 10,000; chain read on 100,000 (under a minute)
    python bench/branches.py --smoke    # merge 2 x 1,000; chain read on 5,000 (seconds)

1. **Merge.** Two branches forked at one root, each holding N memories (100
   per event, 1% of them sharing a key with the other side and differing in
   content). Each strategy merges one into a fresh copy of the other. Printed
   against a single-anchor read of the target's memories in the same run.
2. **Scope chain.** The chat-like history of ``bench/gate.py`` (one memory
   per event, 2% of events fork from an older one). A 3-anchor chain read
   against the sum of the three single-anchor reads, for nested anchors (the
   tip and two of its ancestors, like a conversation, its user's branch and
   the org's) and for anchors apart (on different branches). Three chain
   figures: the scopes unchanged since the last read; after a new memory in
   the first scope (each chat turn); and with no kept copies. In memory a
   chain returns a copy of each stored record to carry ``via`` and keeps
   those copies for the next read; the last figure pays for every copy.

Figures are medians of several repeats; ratios are taken within this run.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from statistics import median

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from branchmem import Memory, Store
from gate import build, make_history, timed


def line(label: str, a: float, b: float, what: str) -> str:
    return f"  {label:<46} {a * 1e3:10.3f} ms   {what} {b * 1e3:10.3f} ms   ratio {a / b:6.2f}x"


def build_sides(store: Store, n: int, per_event: int = 100) -> None:
    store.add_event("root")
    for side in ("a", "b"):
        events = [
            {"id": f"{side}{i}", "parent": f"{side}{i - 1}" if i else "root"}
            for i in range(n // per_event)
        ]
        store.add_events(events)
        mems = []
        for i in range(n):
            shared = i % 100 == 0  # 1% collide with the other side
            mems.append(
                {
                    "id": f"{side}m{i}",
                    "content": f"{side} value {i}",
                    "sources": [f"{side}{i // per_event}"],
                    "key": f"k{i}" if shared else f"{side}k{i}",
                }
            )
            if len(mems) == 20_000:
                store.add_memories(mems)
                mems = []
        if mems:
            store.add_memories(mems)
        store.create_branch(side, at=f"{side}{n // per_event - 1}")


def bench_merge(store: Store, n: int, repeat: int) -> None:
    build_sides(store, n)
    read, got = timed(lambda: store.memories(at="a"), repeat)
    assert len(got) == n
    for strategy in ("append", "overwrite", "keep_both"):
        names = [f"t_{strategy}_{i}" for i in range(repeat)]
        for name in names:
            store.create_branch(name, at="a")
        it = iter(names)
        took, r = timed(lambda: store.merge("b", next(it), strategy=strategy), repeat)  # noqa: B023
        what = f"merge {strategy} ({r.added} added, {r.overwritten} ow, {r.conflicts} cf)"
        print(line(what, took, read, "vs read of target"))
    after, got = timed(lambda: store.memories(at="t_append_0"), repeat)
    print(line(f"read after merge ({len(got)} memories)", after, read, "vs read of target"))


def clock(fn: Callable[[], object]) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def chain_vs_singles(store: Store, anchors: list[str], repeat: int, label: str) -> None:
    """The three single reads and the chain reads, interleaved in every round
    (one read is well under a millisecond, so rounds are many and noise is shared)."""
    turn = iter(range(1_000_000))

    def write() -> None:  # a new memory in the first scope, as each chat turn makes
        store.add_memory(f"turn {next(turn)}", sources=[anchors[0]])

    def chain() -> list[Memory]:
        return store.memories(at=anchors)

    sizes = [len(store.memories(at=a)) for a in anchors]
    got = chain()
    singles: list[float] = []
    warm: list[float] = []
    after: list[float] = []
    cold: list[float] = []
    for _ in range(max(repeat, 31)):
        singles.append(sum(clock(lambda a=a: store.memories(at=a)) for a in anchors))  # type: ignore[misc]
        warm.append(clock(chain))  # nothing changed since the last chain read
        write()
        after.append(clock(chain))
        # Drop the copies that carry `via` (kept by the memory backend only):
        # the first read of these scopes in a process, or the first after a purge.
        store._engine.via_copies.clear()
        cold.append(clock(chain))
    total = median(singles)
    print(f"  {label}: anchors {anchors}, {sizes} visible, chain returns {len(got)}")
    for what, times in (
        ("scopes as at the last read", warm),
        ("after a write to the first", after),
        ("no kept copies", cold),
    ):
        print(line(f"  3-anchor chain, {what}", median(times), total, "vs sum of singles"))


def bench_chain(store: Store, n: int, repeat: int) -> None:
    events, memories, tip = make_history(n)
    build(store, events, memories, 50_000)
    path = [e.id for e in store.path(tip)]
    # Nested, as a conversation forked from a user's branch forked from an org's.
    nested = [tip, path[len(path) // 2], path[len(path) // 4]]
    chain_vs_singles(store, nested, repeat, "nested")
    # Apart: three events on different branches, sharing little.
    chain_vs_singles(store, [tip, f"e{n // 2}", f"e{n // 4}"], repeat, "apart")


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--quick", action="store_true", help="10x smaller (under a minute)")
    ap.add_argument("--smoke", action="store_true", help="100x smaller (seconds)")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--backends", default="memory,sqlite")
    args = ap.parse_args()
    merge_n, chain_n = (10_000, 100_000) if args.quick else (100_000, 1_000_000)
    if args.smoke:
        merge_n, chain_n, args.repeat = 1_000, 5_000, 3
    with tempfile.TemporaryDirectory() as tmp:
        for backend in args.backends.split(","):

            def make(name: str, backend: str = backend) -> Store:
                return Store() if backend == "memory" else Store(os.path.join(tmp, name))

            print(f"[{backend}] merge of two branches with {merge_n:,} memories each")
            t = time.perf_counter()
            with make("merge.db") as store:
                bench_merge(store, merge_n, args.repeat)
            print(f"  (section took {time.perf_counter() - t:.0f} s)")
            print(f"[{backend}] scope chain on a store of {chain_n:,} records")
            t = time.perf_counter()
            with make("chain.db") as store:
                bench_chain(store, chain_n, args.repeat)
            print(f"  (section took {time.perf_counter() - t:.0f} s)")


if __name__ == "__main__":
    main()
