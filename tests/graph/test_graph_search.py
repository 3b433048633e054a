"""``search(..., hops=N)`` on every backend: seeds ranked as before, expanded
along visible edges only (checked against the naive reference), and
explained by their path."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, given, settings
from test_graph_properties import NAMES, ends, naive_bfs

from branchmem import InvalidInput, Store
from helpers.pg_helpers import examples
from helpers.reference import Reference, RefRecord
from helpers.strategies import History, histories

Q = "Alice 负责的东西有没有漏洞？"


def build(store: Store) -> None:
    store.add_events(
        [
            {"id": "e1"},
            {"id": "e2", "parent": "e1"},
            {"id": "e2b", "parent": "e1"},
            {"id": "e3", "parent": "e2"},
        ]
    )
    store.add_edge("Alice", "owns", "auth-service", sources=["e2"])
    store.add_edge("Bob", "owns", "auth-service", sources=["e2b"])
    store.add_edge("auth-service", "uses", "jsonwebtoken", sources=["e3"])
    store.add_memory("jsonwebtoken 8.5 受 CVE-2024-0001 影响", sources=["e1"])
    store.add_memory("Alice 是后端工程师", sources=["e1"])


def test_hops_reach_what_the_edges_lead_to(store: Store) -> None:
    build(store)
    plain = store.search(Q, at="e3", mode="keyword", k=10)
    assert [h.memory.content for h in plain] == ["Alice 是后端工程师"]
    hits = store.search(Q, at="e3", mode="keyword", k=10, hops=2, explain=True)
    by = {h.memory.content: h for h in hits}
    cve = by["jsonwebtoken 8.5 受 CVE-2024-0001 影响"]
    assert cve.parts["hops"] == 2.0
    assert cve.explanation is not None
    assert cve.explanation.path == "Alice -owns-> auth-service -uses-> jsonwebtoken"
    assert "Alice owns auth-service" in by  # the edge records of the path too
    # On the edited branch nobody named Alice owns anything: no walk, no CVE.
    other = store.search(Q, at="e2b", embedder="hashing", k=10, hops=2)
    assert all(h.memory.kind != "edge" for h in other)
    assert all("hops" not in h.parts or "mention" in h.parts for h in other)  # no edge walked
    assert "jsonwebtoken 8.5 受 CVE-2024-0001 影响" not in {h.memory.content for h in other}
    with pytest.raises(InvalidInput, match="hops"):
        store.search(Q, at="e3", hops=99)
    with pytest.raises(InvalidInput, match="hops"):
        store.search(Q, at="e3", hops=-1)


def test_hops_zero_is_the_plain_search(store: Store) -> None:
    build(store)
    a = store.search(Q, at="e3", embedder="hashing")
    b = store.search(Q, at="e3", embedder="hashing", hops=0)
    assert [h.memory.id for h in a] == [h.memory.id for h in b]


def test_search_hops_never_leave_the_path(
    make_store: Callable[[], Store], backend_name: str
) -> None:
    @settings(
        max_examples=examples(backend_name, 60),
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(hist=histories(max_events=10, max_ops=10))
    def check(hist: History) -> None:
        store, ref = make_store(), Reference()
        triples = {}
        try:
            for eid in hist.arrival:
                store.add_event(eid, parent=list(hist.parents[eid]) or None)
                ref.add_event(eid, hist.parents[eid])
            for op in hist.ops:
                s, p, o = ends(op.id)
                if op.kind == "add" and int(op.id[1:]) % 3 == 0:  # a memory naming an entity
                    store.add_memory(f"{o} 有个问题", sources=list(op.sources), id=op.id)
                    ref.add_record(RefRecord(op.id, op.sources))
                elif op.kind == "retract":
                    assert op.target is not None and op.extra_id is not None
                    store.retract(op.target, sources=list(op.sources), id=op.extra_id)
                    ref.add_record(RefRecord(op.extra_id, op.sources, op.target))
                else:
                    store.add_edge(s, p, o, sources=list(op.sources), id=op.id)
                    ref.add_record(RefRecord(op.id, op.sources))
                    triples[op.id] = (s, o)
            for a in hist.arrival:
                visible = set(ref.memories(a))
                edges = [r for r in ref.memories(a) if r in triples]
                adj: dict[str, list[tuple[str, str]]] = {}
                for eid in edges:
                    s, o = (x.casefold() for x in triples[eid])
                    adj.setdefault(s, []).append((eid, o))
                    adj.setdefault(o, []).append((eid, s))
                plain = store.search("Alice", at=a, embedder="hashing", k=50)
                seeds = {"alice"} | {
                    n.casefold() for h in plain for n in NAMES if n in h.memory.content
                }
                near = set()
                for seed in seeds:
                    if seed in adj:
                        near |= set(naive_bfs(adj, seed, 2))
                hits = store.search("Alice", at=a, embedder="hashing", k=50, hops=2)
                for h in hits:
                    assert h.memory.id in visible, (h.memory.id, a)
                    if "hops" in h.parts and h.memory.id in triples:
                        s, o = (x.casefold() for x in triples[h.memory.id])
                        assert s in near and o in near
                    elif "hops" in h.parts and "mention" not in h.parts:
                        assert any(n.casefold() in near for n in NAMES if n in h.memory.content)
        finally:
            store.close()

    check()
