"""Differential test of the relation graph: `Store.graph` against a naive reference.

Random histories (trees, DAGs, out-of-order arrival, sources that never
arrive) get edges, retractions of edges and replacements (``replaces=``) on
every backend. At each anchor, after every arrival (so the kept index is
checked while it grows), the view must equal the graph a naive reference
builds from the records the reference gate shows: the same edges, the same
neighbours, the same shortest paths and reach, and every edge of every
answer has all its sources among the anchor's ancestors.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, given, settings

from branchmem import Store, UnknownEntity
from helpers.pg_helpers import examples
from helpers.reference import Reference, RefRecord
from helpers.strategies import History, Op, histories

NAMES = ["Alice", "auth-service", "jwt", "CVE-1", "payments"]


def ends(op_id: str) -> tuple[str, str, str]:
    """The subject, predicate and object an op's edge joins (fixed by its id)."""
    k = int(op_id[1:])
    s = k % len(NAMES)
    o = (s + 1 + (k // len(NAMES)) % (len(NAMES) - 1)) % len(NAMES)
    return NAMES[s], ("uses" if k % 2 else "depends on"), NAMES[o]


def apply_edge_op(
    store: Store, ref: Reference, op: Op, triples: dict[str, tuple[str, str, str]]
) -> None:
    s, p, o = ends(op.id)
    if op.kind == "add":
        store.add_edge(s, p, o, sources=list(op.sources), id=op.id)
        ref.add_record(RefRecord(op.id, op.sources))
        triples[op.id] = (s, p, o)
    elif op.kind == "retract":
        assert op.target is not None and op.extra_id is not None
        store.retract(op.target, sources=list(op.sources), id=op.extra_id)
        ref.add_record(RefRecord(op.extra_id, op.sources, op.target))
    else:
        assert op.target is not None
        store.add_edge(s, p, o, sources=list(op.sources), id=op.id, replaces=[op.target])
        ref.add_record(RefRecord(f"__ret_{op.id}", op.sources, op.target))
        ref.add_record(RefRecord(op.id, op.sources))
        triples[op.id] = (s, p, o)


def naive_bfs(adj: dict[str, list[tuple[str, str]]], start: str, hops: int) -> dict[str, int]:
    dist = {start: 0}
    todo = deque([start])
    while todo:
        x = todo.popleft()
        if dist[x] >= hops:
            continue
        for _, y in adj.get(x, []):
            if y not in dist:
                dist[y] = dist[x] + 1
                todo.append(y)
    return dist


def naive_shortest_paths(
    adj: dict[str, list[tuple[str, str]]], a: str, z: str, hops: int
) -> set[tuple[str, ...]]:
    """Every shortest walk of edge ids from ``a`` to ``z``, by brute force."""
    dist = naive_bfs(adj, a, hops)
    if z not in dist:
        return set()
    out: set[tuple[str, ...]] = set()

    def walk(x: str, seen: tuple[str, ...], edges: tuple[str, ...]) -> None:
        if len(edges) == dist[z]:
            if x == z:
                out.add(edges)
            return
        for eid, y in adj.get(x, []):
            if y not in seen:
                walk(y, (*seen, y), (*edges, eid))

    walk(a, (a,), ())
    return out


def check_view(
    store: Store, ref: Reference, a: str, triples: dict[str, tuple[str, str, str]], c: Counter[str]
) -> None:
    anc = ref.ancestors(a)
    want = ref.memories(a)
    g = store.graph(at=a)
    got = g.edges()
    assert [e.id for e in got] == want, f"edges at {a!r}"
    assert store.memories(at=a) == []  # edges stay out of plain reads
    assert [m.id for m in store.memories(at=a, kind="edge")] == want
    adj: dict[str, list[tuple[str, str]]] = {}
    for eid in want:
        s, _, o = triples[eid]
        adj.setdefault(s.casefold(), []).append((eid, o.casefold()))
        adj.setdefault(o.casefold(), []).append((eid, s.casefold()))
    for e in got:
        assert set(e.sources) <= anc  # the gate, checked directly
    for name in NAMES:
        key = name.casefold()
        # A fresh view per name: views made at one state share what they worked out
        # (graph/memo.py), so this also reads what an earlier name's walk kept.
        g = store.graph(at=a)
        if key not in adj:
            with pytest.raises(UnknownEntity):
                g.neighbors(name)
            continue
        assert [e.id for e in g.neighbors(name)] == [eid for eid, _ in adj[key]]
        reach = g.reach([name], max_hops=3)
        assert {k.casefold(): p.hops for k, p in reach.items()} == naive_bfs(adj, key, 3)
        for other in NAMES:
            if other == name or other.casefold() not in adj:
                continue
            paths = g.paths(name, other, max_hops=3, limit=1000)
            assert {tuple(e.id for e in p.edges) for p in paths} == naive_shortest_paths(
                adj, key, other.casefold(), 3
            )
            for p in paths:
                assert all(set(e.sources) <= anc for e in p.edges)
                c["paths"] += 1
    c["views"] += 1


def run_history(make: Callable[[], Store], hist: History, c: Counter[str]) -> None:
    store, ref = make(), Reference()
    triples: dict[str, tuple[str, str, str]] = {}
    try:
        ops = list(hist.ops)
        arrived: list[str] = []

        def flush(upto: int) -> None:
            while ops and ops[0].after <= upto:
                apply_edge_op(store, ref, ops.pop(0), triples)

        flush(0)
        for i, eid in enumerate(hist.arrival, 1):
            store.add_event(eid, parent=list(hist.parents[eid]) or None, content=eid)
            ref.add_event(eid, hist.parents[eid])
            arrived.append(eid)
            flush(i)
            check_view(store, ref, arrived[-1], triples, c)
        flush(len(hist.arrival))
        for a in arrived:
            check_view(store, ref, a, triples, c)
        for a in arrived[::-1]:  # again, nothing written: every answer from the kept state
            check_view(store, ref, a, triples, c)
        # A scope chain: an edge once, from the first anchor that sees it.
        chain = arrived[-2:]
        assert [e.id for e in store.graph(at=chain).edges()] == sorted(
            {rid for rid, _ in ref.chain(chain)}, key=[r.id for r in ref.records].index
        )
    finally:
        store.close()


def test_graph_matches_reference(make_store: Callable[[], Store], backend_name: str) -> None:
    c: Counter[str] = Counter()
    n = examples(backend_name, 150)

    @settings(
        max_examples=n,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(hist=histories(max_events=12, max_ops=12))
    def check(hist: History) -> None:
        run_history(make_store, hist, c)

    check()
    assert c["views"] >= n and c["paths"] >= 50, c
