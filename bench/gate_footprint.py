"""What the in-memory store holds (``python bench/gate.py --footprint N``).

The gate's history of N events and N memories (one each), as a `Store` in
memory, against the same data as plain tuples (``(id, parent, role,
content)`` per event, ``(id, content, sources)`` per memory, in two lists): the
raw size of what was given. Both are measured with ``tracemalloc`` as the
memory still allocated once the input dicts are gone, so the strings, which
the store keeps and the tuples share, count on both sides.
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


def footprint(n: int) -> None:
    print(f"footprint in memory: {n:,} events + {n:,} memories")
    tracemalloc.start()
    raw, kept = held(lambda: as_tuples(n))
    del kept
    store_bytes, store = held(lambda: as_store(n))
    tracemalloc.stop()
    assert len(store.memories(at=f"e{n - 1}")) > 0
    print(
        f"  store {store_bytes / 1e6:8.0f} MB vs plain tuples {raw / 1e6:8.0f} MB"
        f"  ratio {store_bytes / raw:5.2f}x  (goal: store <= 700 MB at 1M)"
    )
