"""``search(..., hops=N)`` on a store of plain memories: records linked by the
entities they name, on every backend, never off the anchor's path."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, given, settings

from branchmem import Store
from helpers.pg_helpers import examples
from helpers.reference import Reference, RefRecord
from helpers.strategies import History, histories

Q = "what does Alice Chen own?"


def build(store: Store) -> None:
    store.add_events(
        [
            {"id": "e1"},
            {"id": "e2", "parent": "e1"},
            {"id": "e3", "parent": "e2"},
            {"id": "e3b", "parent": "e2"},  # an abandoned sibling of e3
        ]
    )
    store.add_memory("Alice Chen owns auth-service", sources=["e1"], id="m1")
    store.add_memory("auth-service uses jsonwebtoken 8.5.1", sources=["e2"], id="m2")
    store.add_memory("jsonwebtoken 8.5.1 is affected by CVE-2022-23529", sources=["e3"], id="m3")
    store.add_memory("jsonwebtoken 8.5.1 was replaced by a fork", sources=["e3b"], id="m4")
    store.add_memory("the weekly signup rate was 3.4%", sources=["e1"], id="m5")


def test_hops_walk_mention_links_without_edges(store: Store) -> None:
    build(store)
    plain = store.search(Q, at="e3", mode="keyword", k=5, cutoff="off")
    assert "m3" not in {h.memory.id for h in plain}
    hits = store.search(Q, at="e3", mode="keyword", k=5, hops=2, explain=True, cutoff="off")
    by = {h.memory.id: h for h in hits}
    assert {"m1", "m2", "m3"} <= set(by)
    assert by["m3"].parts["mention"] == 1.0 and by["m3"].parts["hops"] == 2.0
    assert by["m3"].explanation is not None
    assert by["m3"].explanation.path == "m1 -[auth-service]- m2 -[jsonwebtoken]- m3"
    assert "m5" not in by  # names nothing the others name
    # The sibling's record names the same library; it is never reached here...
    assert "m4" not in by
    # ...nor m3 from the sibling, where m4 is visible instead.
    there = {h.memory.id for h in store.search(Q, at="e3b", mode="keyword", k=5, hops=2)}
    assert "m3" not in there and "m4" in there


def test_search_mention_walk_never_leaves_the_path(
    make_store: Callable[[], Store], backend_name: str
) -> None:
    names = ["Alice Chen", "auth-service", "jsonwebtoken 8.5.1", "CVE-2022-23529", "port 6001"]

    @settings(
        max_examples=examples(backend_name, 60),
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(hist=histories(max_events=10, max_ops=10))
    def check(hist: History) -> None:
        store, ref = make_store(), Reference()
        ids = set()
        try:
            for eid in hist.arrival:
                store.add_event(eid, parent=list(hist.parents[eid]) or None)
                ref.add_event(eid, hist.parents[eid])
            for op in hist.ops:
                k = int(op.id[1:])
                if op.kind == "retract":
                    assert op.target is not None and op.extra_id is not None
                    store.retract(op.target, sources=list(op.sources), id=op.extra_id)
                    ref.add_record(RefRecord(op.extra_id, op.sources, op.target))
                    continue
                a, b = names[k % 5], names[(k // 5 + k + 1) % 5]
                store.add_memory(f"{a} and {b} note {k}", sources=list(op.sources), id=op.id)
                ref.add_record(RefRecord(op.id, op.sources))
                ids.add(op.id)
            for at in hist.arrival:
                visible = set(ref.memories(at))
                hits = store.search(
                    "Alice Chen", at=at, mode="keyword", k=50, hops=2, explain=True, cutoff="off"
                )
                for h in hits:
                    assert h.memory.id in visible, (h.memory.id, at)
                    if "mention" in h.parts:
                        assert h.explanation is not None and h.explanation.path
                        walked = ids.intersection(h.explanation.path.split())
                        assert walked <= visible, (walked - visible, at)
        finally:
            store.close()

    check()


def test_only_what_can_rank_is_made_a_hit(monkeypatch: pytest.MonkeyPatch) -> None:
    """`hops._best` keeps, of the records the walks reach, the k best: the
    results equal those of keeping all of them, for any k (ties included)."""
    import random

    from branchmem.retrieval import hops

    rnd = random.Random(11)
    people = ["Alice Chen", "Bob Smith", "Carol Wang", "Dan Kim"]
    svcs = ["auth-service", "pay-service", "log-service", "mail-service", "api-gateway"]
    store = Store()
    store.add_event("e1")
    for i in range(120):
        store.add_memory(
            f"{rnd.choice(people)} owns {rnd.choice(svcs)} on port {rnd.randint(6000, 6004)}",
            sources=["e1"],
            id=f"m{i}",
        )
        if i % 9 == 0:
            store.add_memory(f"{rnd.choice(svcs)} is fine", sources=["e1"], id=f"t{i}")
    queries = ["who owns auth-service", "Alice Chen", "port 6001", "what runs mail-service"]

    def run() -> list[list[tuple[str, float]]]:
        return [
            [
                (h.memory.id, h.score)
                for h in store.search(q, at="e1", k=k, hops=2, mode=mode, now=2e9)
            ]
            for q in queries
            for k in (1, 3, 10, 40)
            for mode in ("keyword", "hybrid")
        ]

    fast = run()
    monkeypatch.setattr(hops, "_best", lambda items, k: items)
    assert run() == fast
