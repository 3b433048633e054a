"""What the in-memory store holds (``python bench/gate.py --footprint N``).

The gate's history of N events and N memories (one each), as a `Store` in
memory, against the same data as plain tuples (``(id, parent, role,
content)`` per event, ``(id, content, sources)`` per memory, in two lists): the
raw size of what was given. Both are measured with ``tracemalloc`` as the
memory still allocated once the input dicts are gone, so the strings, which
the store keeps and the tuples share, count on both sides.

The store builds a record's `Memory` on its first read and keeps it, so a
second figure is the store after every record has been read once
(`Store.get_memory` of each): the most reads can add.
"""

from __future__ import annotations

import gc
import tracemalloc
from collections.abc import Callable
from typing import Any

from branchmem import Store
from gate import build, make_history


def held(make: Callable[[], Any]) -> tuple[int, Any]:
    """Bytes still allocated after ``make()`` (whose result is kept alive)."""
    gc.collect()
    before = tracemalloc.get_traced_memory()[0]
    kept = make()
    gc.collect()
    return tracemalloc.get_traced_memory()[0] - before, kept


def as_tuples(n: int) -> Any:
    events, memories, _ = make_history(n)
    return (
        [(e["id"], e["parent"], e["role"], e["content"]) for e in events],
        [(m["id"], m["content"], tuple(m["sources"])) for m in memories],
    )


def as_store(n: int) -> Store:
    events, memories, _ = make_history(n)
    store = Store()
    build(store, events, memories, 50_000)
    return store


def read_all(store: Store, n: int) -> None:
    for i in range(n):
        store.get_memory(f"m{i}")


def footprint(n: int) -> None:
    print(f"footprint in memory: {n:,} events + {n:,} memories")
    tracemalloc.start()
    raw, kept = held(lambda: as_tuples(n))
    del kept
    store_bytes, store = held(lambda: as_store(n))
    read_bytes, _ = held(lambda: read_all(store, n))
    tracemalloc.stop()
    assert len(store.memories(at=f"e{n - 1}")) > 0
    for label, size, note in (
        ("store", store_bytes, "goal: store <= 700 MB at 1M"),
        ("read all", store_bytes + read_bytes, "once every record has been read"),
    ):
        print(
            f"  {label:<8} {size / 1e6:8.0f} MB vs plain tuples {raw / 1e6:8.0f} MB"
            f"  ratio {size / raw:5.2f}x  ({note})"
        )
