"""`Memory.seq` and audit ``seq`` count within their namespace, on every backend:
one tenant's numbers say nothing about how much another writes."""

from __future__ import annotations

from collections.abc import Callable

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from branchmem import Store

NAMESPACES = ("A", "B")

# A step: write n memories into a namespace, or purge one of its records.
STEP = st.one_of(
    st.tuples(st.just("add"), st.sampled_from(NAMESPACES), st.integers(1, 3)),
    st.tuples(st.just("purge"), st.sampled_from(NAMESPACES), st.integers(0, 50)),
)


def _replay_alone(steps: list[tuple[str, str, int]], ns: str) -> list[tuple[str, int]]:
    """The reference: the namespace's (id, seq) list had it been written alone.
    A record's seq is one past the highest seq still stored in its namespace."""
    stored: dict[str, int] = {}
    n = 0
    for op, where, k in steps:
        if where != ns:
            continue
        if op == "add":
            for _ in range(k):
                n += 1
                stored[f"{ns}{n}"] = max(stored.values(), default=0) + 1
        elif stored:
            victim = sorted(stored)[k % len(stored)]
            del stored[victim]
    return sorted(stored.items(), key=lambda kv: kv[1])


def _run(store: Store, steps: list[tuple[str, str, int]]) -> None:
    counts = dict.fromkeys(NAMESPACES, 0)
    for ns in NAMESPACES:
        store.add_event("e", namespace=ns)
    for op, ns, k in steps:
        if op == "add":
            batch = []
            for _ in range(k):
                counts[ns] += 1
                batch.append(
                    {"content": "x", "sources": ["e"], "id": f"{ns}{counts[ns]}", "namespace": ns}
                )
            store.add_memories(batch)
        else:
            ids = sorted(m.id for m in store.records(namespace=ns))
            if ids:
                store.purge(memories=[ids[k % len(ids)]], namespace=ns)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(steps=st.lists(STEP, max_size=12))
def test_interleaved_writes_number_each_namespace_alone(
    make_store: Callable[[], Store], steps: list[tuple[str, str, int]]
) -> None:
    store = make_store()
    try:
        _run(store, steps)
        for ns in NAMESPACES:
            got = [(m.id, m.seq) for m in store.records(namespace=ns)]
            assert got == _replay_alone(steps, ns), ns
            audit = [e.seq for e in store.audit(ns)]
            assert audit == list(range(1, len(audit) + 1))
    finally:
        store.close()  # one example's connections go before the next opens its own


def test_one_tenant_writing_does_not_move_anothers_numbers(
    make_store: Callable[[], Store],
) -> None:
    store = make_store()
    store.add_event("e", namespace="A")
    store.add_event("e", namespace="B")
    a1 = store.add_memory("a", sources=["e"], namespace="A")
    for _ in range(5):
        store.add_memory("b", sources=["e"], namespace="B")
    a2 = store.add_memory("a", sources=["e"], namespace="A")
    assert (a1.seq, a2.seq) == (1, 2)
    assert [m.seq for m in store.records(namespace="B")] == [1, 2, 3, 4, 5]


def test_a_number_purged_in_a_transaction_is_given_again_in_it(
    make_store: Callable[[], Store],
) -> None:
    """The next number is one past the highest still stored, even where the
    purge and the next write share a transaction (numbers counted on in it)."""
    store = make_store()
    store.add_event("e")
    with store._engine.backend.transaction():
        store.add_memories([{"content": "x", "sources": ["e"], "id": f"m{i}"} for i in (1, 2, 3)])
        store.purge(memories=["m3"])
        again = store.add_memory("x", sources=["e"], id="m4")
        store.add_event("f", parent="e")
    assert again.seq == 3
    assert [(m.id, m.seq) for m in store.records()] == [("m1", 1), ("m2", 2), ("m4", 3)]
    audit = [e.seq for e in store.audit()]
    assert audit == list(range(1, len(audit) + 1))
