"""The mention walk as first written (`branchmem.retrieval.spread` before its
walk index and its fast paths): the reference its property test compares with.

The mention walk of ``search(..., hops=N)``: records linked by the entities they name.

A search's candidates are the gate's answer. Each candidate's entities
(`graph.entities`, memoised by namespace and record id with its text) link it to the
other candidates that name the same entity: nothing else is ever walked, so a
record on another branch that names the same entity is never reached.

Spreading activation from the seeds (the ranked hits with their scores, and
the query with the best hit's score), ``hops`` times: a record's activation
passes to each entity it names times that entity's weight, and on to every
other candidate naming it times ``DECAY``, shared among them (``FAN``); an
entity a visible written edge names also passes its activation to the
entity at the edge's other end within the same step (so mention links and
``add_edge`` edges chain). A record keeps its best activation and the path
that gave it.

The weight inhibits an entity that links too much: ``log((N+1)/df) /
log(N+1)`` over the N candidates, ``df`` of which name it, and 0 when more
than ``FANOUT`` of them do (at least ``FANOUT_MIN``): a name most records
hold says nothing about which belong together.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from branchmem.errors import UnknownEntity
from branchmem.graph.entities import EntityCache, entities
from branchmem.graph.model import norm
from branchmem.graph.view import GraphView
from branchmem.model import Memory
from branchmem.retrieval.spread import DECAY, FAN, FANOUT, FANOUT_MIN, MAX_LEVELS, Reached


def weights(names: Sequence[frozenset[str]]) -> dict[str, float]:
    """Each entity's weight over candidates naming ``names``.

    >>> w = weights([frozenset({"a", "x"}), frozenset({"a", "y"}), frozenset({"a"}),
    ...              frozenset({"a", "y"}), frozenset(), frozenset(), frozenset(),
    ...              frozenset(), frozenset(), frozenset(), frozenset(), frozenset()])
    >>> sorted(w), round(w["y"], 3), round(w["x"], 3)
    (['x', 'y'], 0.73, 1.0)
    """
    df: dict[str, int] = {}
    for ns in names:
        for key in ns:
            df[key] = df.get(key, 0) + 1
    n = len(names)
    cap = max(FANOUT_MIN, FANOUT * n)
    norm_ = math.log(n + 1)
    return {k: math.log((n + 1) / d) / norm_ for k, d in df.items() if d <= cap and norm_ > 0}


def walk(
    mems: Sequence[Memory],
    seeds: Sequence[tuple[str, float]],
    query: str,
    top: float,
    hops: int,
    view: GraphView | None,
    decay: float | None = None,
    names_of: EntityCache | None = None,
    edge_decay: float = 1.0,
    beam: int | None = None,
) -> dict[int, Reached]:
    """The candidates (by index into ``mems``) ``hops`` mention links reach from
    ``seeds`` (record id, score) and ``query`` (with score ``top``); seeds
    themselves only where reached with a higher score."""
    decay = DECAY if decay is None else decay
    memo = names_of if names_of is not None else EntityCache()
    names = [memo.get(m.namespace, m.id, m.content) for m in mems]
    w = weights(names)
    by_name: dict[str, list[int]] = {}
    for i, ns in enumerate(names):
        for key in ns:
            if key in w:
                by_name.setdefault(key, []).append(i)
    pos = {m.id: i for i, m in enumerate(mems)}
    seed_score = {pos[rid]: s for rid, s in seeds if rid in pos}
    # (record index or -1 for the query) -> (activation, path so far, seed label)
    frontier: dict[int, tuple[float, str, str]] = {
        i: (s, mems[i].id, f"hit {mems[i].id}") for i, s in seed_score.items()
    }
    frontier[-1] = (top, "the query", "the query")
    query_names = entities(query, use_jieba=memo.use_jieba)
    best: dict[int, Reached] = {}
    total = dict(seed_score)
    for level in range(1, min(hops, MAX_LEVELS) + 1):
        # entity -> its two strongest (activation, path, seed, source record)
        ents: dict[str, list[tuple[float, str, str, int]]] = {}
        items = sorted(frontier.items())
        if beam is not None and len(items) > beam:  # the strongest only (ties: lower index)
            items = sorted(sorted(items, key=lambda it: (-it[1][0], it[0]))[:beam])
        for i, (s, path, seed) in items:
            for key in sorted(query_names if i < 0 else names[i]):  # ties: by name
                a = s * w.get(key, 1.0 if i < 0 and key in by_name else 0.0)
                if a > 0:
                    _offer(ents, key, (a, f"{path} -[{key}]-", seed, i))
        if view is not None:
            _along_edges(view, ents, w, edge_decay)
        incoming: dict[int, tuple[float, str, str]] = {}
        for key, tops in sorted(ents.items()):
            named = by_name.get(key, [])
            share = 1.0 / max(1, len(named) - 1) ** FAN  # among the others naming it
            for j in named:
                got = next((t for t in tops if t[3] != j), None)
                if got is None:
                    continue
                a, path, seed, _ = got
                s, p, sd = incoming.get(j, (0.0, f"{path} {mems[j].id}", seed))
                incoming[j] = (s + a * decay * share, p, sd)
        for j, (inc, p, sd) in incoming.items():
            total[j] = total.get(j, 0.0) + inc
            first = best.get(j)
            best[j] = Reached(
                j,
                total[j],
                first.hops if first else level,
                first.path if first else p,
                first.seed if first else sd,
            )
        frontier = incoming
        if not frontier:
            break
    return dict(sorted(best.items()))


def _offer(
    ents: dict[str, list[tuple[float, str, str, int]]],
    key: str,
    got: tuple[float, str, str, int],
) -> None:
    """Keep ``got`` among ``key``'s two strongest activations from distinct records."""
    tops = [t for t in ents.get(key, []) if t[3] != got[3] or t[0] > got[0]]
    if any(t[3] == got[3] for t in tops):
        return
    tops.append(got)
    tops.sort(key=lambda t: -t[0])
    ents[key] = tops[:2]


def _along_edges(
    view: GraphView,
    ents: dict[str, list[tuple[float, str, str, int]]],
    w: dict[str, float],
    edge_decay: float,
) -> None:
    """Pass each activated entity's activation one visible written edge on
    (times ``edge_decay``, the edge walk's decay per hop)."""
    for key, tops in sorted(ents.items()):
        a, path, seed, src = tops[0]
        try:
            if not view.linked(key):
                continue
            edges = view.neighbors(key)
        except UnknownEntity:
            continue
        for e in edges:
            for end in (norm(e.subject), norm(e.object)):
                b = a * edge_decay * w.get(end, 1.0)
                if end != key:
                    _offer(ents, end, (b, f"{path} {e} -[{end}]-", seed, src))
