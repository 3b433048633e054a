"""A batch large enough that lookups of waiting events and records first check
whether the namespace has any (PostgreSQL), on every backend."""

from __future__ import annotations

from branchmem import Store


def test_a_large_batch_connects_what_waits_on_it(store: Store) -> None:
    store.add_events([{"id": "w1", "parent": "p"}, {"id": "w2", "parent": "w1"}])
    store.add_memory("waits for q", sources=["q"], id="m-q")
    store.add_memory("waits for w2", sources=["w2"], id="m-w2")
    n = 1500  # above the 1,000 ids from which PostgreSQL looks first
    batch = [{"id": "p"}] + [{"id": f"e{i}", "parent": f"e{i - 1}" if i else "p"} for i in range(n)]
    batch.append({"id": "q", "parent": f"e{n - 1}"})
    store.add_events(batch)
    got = store._engine.backend.get_events("default", ["w1", "w2", "q"])
    assert all(r.pos is not None for r in got.values())
    assert {m.id for m in store.memories(at="q")} == {"m-q"}
    assert {m.id for m in store.memories(at="w2")} == {"m-w2"}


def test_a_large_batch_with_nothing_waiting(store: Store) -> None:
    n = 1500
    store.add_events([{"id": f"e{i}", "parent": f"e{i - 1}" if i else None} for i in range(n)])
    store.add_memory("fact", sources=[f"e{n - 1}"], id="m")
    store.add_events([{"id": f"f{i}", "parent": f"f{i - 1}" if i else "e0"} for i in range(n)])
    assert [m.id for m in store.memories(at=f"e{n - 1}")] == ["m"]
    assert store.memories(at=f"f{n - 1}") == []
