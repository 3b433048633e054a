# ruff: noqa: E501  (one result line per print reads better unsplit)
"""Benchmark the relation graph: gated graph reads against a plain dict
adjacency built from the visible edges (the floor), side by side.

    python bench/graph.py            # 100,000 edges over 10,000 entities, with forks
    python bench/graph.py --smoke    # the smallest size (seconds)
    python bench/graph.py --backend postgres --pg postgresql://postgres@127.0.0.1:5432/test

History: a chain of messages; every 20th message also starts a side branch of
5 messages that is abandoned (an edit). Edges join random entities; each is
sourced from one message: the visible ones from the main chain, and, in the
"forked" store, as many again from the abandoned side branches. Timed at the
tip, on memory and SQLite:

- ``neighbors``: ``store.graph(at=tip).neighbors(x)`` (``graph`` called per
  query, as a caller writes it) against ``list(adj[x])``; while nothing is
  written ``graph`` hands back the view kept at the anchor after one counter
  check (``graph/memo.py``), so this is a repeated read; ``neighbors, held
  view`` asks one view made before the pass; ``neighbors, first at a state``
  drops what views kept before each pass (the first read of each entity
  after a write: the gate paid again);
- 3-hop ``paths``: ``graph(at=tip).paths(a, b, max_hops=3)`` (with no
  ``max_edges`` cut, as the floor has none: from 20,000 edges the default
  budget of 10,000 edges looked at stops short) against the same
  breadth-first search (shortest paths, up to 10) over the dict;
- abandoned volume: the same reads on the store without the abandoned edges
  (the ratio should stay near 1: reads touch the anchor's segments only);
- ingest: ``add_edge`` against ``add_memory`` per record, on the same events.

Every figure is a ratio of two timings taken in this run; medians of repeats.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from branchmem import Store
from branchmem.graph.model import MAX_EDGES as ALL


def history(n_main: int) -> tuple[list[dict[str, Any]], list[str], list[str]]:
    """Events: the main chain and abandoned side branches."""
    events: list[dict[str, Any]] = []
    main: list[str] = []
    side: list[str] = []
    prev = None
    for i in range(n_main):
        eid = f"m{i}"
        events.append({"id": eid, "parent": prev, "content": f"message {i}"})
        main.append(eid)
        if i % 20 == 19:
            sp = prev
            for j in range(5):
                sid = f"s{i}_{j}"
                events.append({"id": sid, "parent": sp, "content": f"edit {i}.{j}"})
                side.append(sid)
                sp = sid
        prev = eid
    return events, main, side


def edges_for(
    rng: random.Random, n: int, n_entities: int, sources: list[str]
) -> list[tuple[str, str, str, str]]:
    out = []
    for _ in range(n):
        a = rng.randrange(n_entities)
        b = rng.randrange(n_entities - 1)
        b = b + 1 if b >= a else b
        out.append(
            (
                f"ent{a}",
                rng.choice(["uses", "depends on", "member of"]),
                f"ent{b}",
                rng.choice(sources),
            )
        )
    return out


SCHEMAS: list[str] = []  # made on PostgreSQL by this run, dropped at its end


def open_store(path: str | None) -> Store:
    """``path``: a SQLite file, a PostgreSQL URL (a fresh schema there) or None (memory)."""
    if path is None:
        return Store()
    if path.startswith("postgresql://"):
        from branchmem.backends.postgres import PostgresBackend

        schema = "bmg_" + uuid.uuid4().hex[:12]
        SCHEMAS.append(schema)
        return Store(backend=PostgresBackend(path, schema=schema))
    return Store(path, durability="normal")


def build(
    path: str | None, events: list[dict[str, Any]], edges: list[tuple[str, str, str, str]]
) -> Store:
    store = open_store(path)
    for i in range(0, len(events), 2000):
        store.add_events(events[i : i + 2000])
    for s, p, o, src in edges:
        store.add_edge(s, p, o, sources=[src])
    return store


def floor_paths(
    adj: dict[str, list[tuple[str, str]]], a: str, z: str, hops: int, limit: int = 10
) -> list[list[str]]:
    """The same search as `GraphView.paths` over a dict: shortest paths, up to ``limit``."""
    if a == z:
        return [[]]
    dist = {a: 0}
    preds: dict[str, list[tuple[str, str]]] = {}
    level = [a]
    for d in range(1, hops + 1):
        nxt = []
        for x in level:
            for eid, y in adj.get(x, ()):
                seen = dist.get(y)
                if seen is None:
                    dist[y] = d
                    nxt.append(y)
                    seen = d
                if seen == d:
                    preds.setdefault(y, []).append((x, eid))
        if z in dist or not nxt:
            break
        level = nxt
    if z not in dist:
        return []
    out: list[list[str]] = []

    def back(x: str, edges: list[str]) -> None:
        if len(out) >= limit:
            return
        if x == a:
            out.append(edges[::-1])
            return
        for prev, eid in preds.get(x, ()):
            back(prev, [*edges, eid])

    back(z, [])
    return out


def median_us(
    fn: Callable[[Any], object],
    args: list[Any],
    repeats: int,
    before: Callable[[], object] | None = None,
) -> float:
    runs = []
    for _ in range(repeats):
        if before is not None:
            before()
        t = time.perf_counter()
        for x in args:
            fn(x)
        runs.append((time.perf_counter() - t) / len(args) * 1e6)
    return statistics.median(runs)


def run(
    backend: str, n_edges: int, n_entities: int, queries: int, repeats: int, tmp: str, pg: str
) -> None:
    rng = random.Random(7)
    n_main = max(50, n_edges // 10)
    events, main, side = history(n_main)
    visible = edges_for(rng, n_edges, n_entities, main)
    abandoned = edges_for(rng, n_edges, n_entities, side)
    tip = main[-1]
    paths = [where(backend, tmp, f"g{i}.db", pg) for i in range(2)]
    plain = build(paths[0], events, visible)
    forked = build(paths[1], events, visible + abandoned)
    adj: dict[str, list[tuple[str, str]]] = {}
    for e in forked.graph(at=tip).edges():
        adj.setdefault(e.subject, []).append((e.id, e.object))
        adj.setdefault(e.object, []).append((e.id, e.subject))
    assert sum(len(v) for v in adj.values()) == 2 * len(visible)
    names = rng.sample(sorted(adj), min(queries, len(adj)))
    pairs = [(rng.choice(names), rng.choice(names)) for _ in range(max(5, queries // 5))]
    # The same answers, or the timing means nothing.
    g = forked.graph(at=tip)
    for x in names[:20]:
        assert sorted(e.id for e in g.neighbors(x)) == sorted(eid for eid, _ in adj[x])
    for a, z in pairs[:10]:
        got = {
            tuple(e.id for e in p.edges)
            for p in g.paths(a, z, max_hops=3, limit=1000, max_edges=ALL)
        }
        assert got == {tuple(p) for p in floor_paths(adj, a, z, 3, 1000)}

    def nb(store: Store) -> Callable[[str], object]:
        return lambda x: store.graph(at=tip).neighbors(x)

    def ps(store: Store) -> Callable[[tuple[str, str]], object]:
        return lambda p: store.graph(at=tip).paths(p[0], p[1], max_hops=3, max_edges=ALL)

    def drop(store: Store) -> Callable[[], object]:
        # What views at the tip kept (graph/memo.py): a pass after it is the first
        # read of each entity at a new state, as after any write.
        return lambda: (m := store._engine.find("graph-views")) is not None and m.clear()

    floor_n = median_us(lambda x: list(adj[x]), names, repeats)
    ours_n = median_us(nb(forked), names, repeats)
    held = forked.graph(at=tip)
    held_n = median_us(lambda x: held.neighbors(x), names, repeats)
    cold_n = median_us(nb(forked), names, repeats, before=drop(forked))
    plain_n = median_us(nb(plain), names, repeats)
    floor_p = median_us(lambda p: floor_paths(adj, p[0], p[1], 3), pairs, repeats)
    ours_p = median_us(ps(forked), pairs, repeats)
    plain_p = median_us(ps(plain), pairs, repeats)
    print(
        f"{backend}: {len(visible):,} visible + {len(abandoned):,} abandoned edges, {n_entities:,} entities"
    )
    print(
        f"  neighbors      {ours_n:9.1f} us vs dict adjacency {floor_n:7.2f} us   ratio {ours_n / floor_n:6.1f}x"
    )
    print(
        f"  neighbors, held view {held_n:7.2f} us vs dict adjacency {floor_n:7.2f} us   ratio {held_n / floor_n:6.1f}x"
    )
    print(
        f"  neighbors, first at a state {cold_n:7.1f} us vs dict adjacency {floor_n:7.2f} us   ratio {cold_n / floor_n:6.1f}x"
    )
    print(
        f"  3-hop paths    {ours_p:9.1f} us vs dict BFS       {floor_p:7.1f} us   ratio {ours_p / floor_p:6.1f}x"
    )
    print(
        f"  abandoned volume: neighbors {ours_n / plain_n:.2f}x, paths {ours_p / plain_p:.2f}x of the store without it"
    )
    # Ingest: add_edge vs add_memory per record, on fresh stores of the same events.
    k = min(2000, n_edges)
    ipaths = [where(backend, tmp, f"i{i}.db", pg) for i in range(2)]
    a = build(ipaths[0], events, [])
    b = build(ipaths[1], events, [])
    t = time.perf_counter()
    for s, p, o, src in visible[:k]:
        a.add_edge(s, p, o, sources=[src])
    t_edge = time.perf_counter() - t
    t = time.perf_counter()
    for s, p, o, src in visible[:k]:
        b.add_memory(f"{s} {p} {o}", sources=[src])
    t_mem = time.perf_counter() - t
    print(
        f"  ingest         add_edge {t_edge / k * 1e6:7.1f} us vs add_memory {t_mem / k * 1e6:7.1f} us   ratio {t_edge / t_mem:6.2f}x"
    )
    for st in (plain, forked, a, b):
        st.close()
    for p in paths + ipaths:
        if p and backend == "sqlite":
            for suffix in ("", "-wal", "-shm"):
                if os.path.exists(p + suffix):
                    os.remove(p + suffix)


def where(backend: str, tmp: str, name: str, pg: str) -> str | None:
    return os.path.join(tmp, name) if backend == "sqlite" else pg if backend == "postgres" else None


def drop_schemas(url: str) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        for schema in SCHEMAS:
            conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--smoke", action="store_true", help="the smallest size (seconds)")
    ap.add_argument("--edges", type=int, default=100_000)
    ap.add_argument("--entities", type=int, default=10_000)
    ap.add_argument("--backend", choices=["memory", "sqlite", "both", "postgres"], default="both")
    ap.add_argument("--pg", default="", help="a PostgreSQL URL, for --backend postgres")
    args = ap.parse_args()
    if args.backend == "postgres" and not args.pg:
        ap.error("--backend postgres needs --pg URL")
    n_edges, n_entities, queries, repeats = args.edges, args.entities, 300, 5
    if args.smoke:
        n_edges, n_entities, queries, repeats = 1500, 150, 40, 3
    backends = ["memory", "sqlite"] if args.backend == "both" else [args.backend]
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for b in backends:
                run(b, n_edges, n_entities, queries, repeats, tmp, args.pg)
    finally:
        if SCHEMAS:
            drop_schemas(args.pg)


if __name__ == "__main__":
    main()
