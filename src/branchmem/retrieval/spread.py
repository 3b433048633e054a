"""The mention walk of ``search(..., hops=N)``: records linked by the entities they name.

A search's candidates are the gate's answer. Each candidate's entities
(`graph.entities`, memoised by namespace and record id with its text) link it to the
other candidates that name the same entity: nothing else is ever walked, so a
record on another branch that names the same entity is never reached.

Spreading activation from the seeds (the ranked hits with their scores, and
the query with the best hit's score), ``hops`` times: a record's activation
passes to each entity it names times that entity's weight, and on to every
other candidate naming it times ``DECAY``, shared among them (`FAN`); an
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
from dataclasses import dataclass

from ..errors import UnknownEntity
from ..graph.entities import EntityCache, entities
from ..graph.model import norm
from ..graph.view import GraphView
from ..model import Memory

DECAY = 1.0
"""A record reached through an entity: the activation of the record that
named it times the entity's weight times this, per hop. Chosen on the tune
split of the multihop set (docs/retrieval.md, "Mention links")."""

FANOUT = 0.25
"""An entity named by more than this share of the candidates links nothing."""

FANOUT_MIN = 3

"""...but one named by this many or fewer always may."""

FAN = 0.5
"""The fan effect: what an entity passes on is shared among the other
candidates naming it, each getting ``1 / (named - 1) ** FAN`` of it. On a long
chat a name recurs in dozens of lines, and each line that names it took the
full activation of the hit, ahead of the search's own hits (REALTALK, hashing:
R@10 0.615 without hops, 0.394 with ``hops=2``; 0.572 with this share). 0.5
kept the multihop tune split's pass rate (20/29 hybrid); 1 dropped it to 16
(docs/retrieval.md, "Mention links")."""

MAX_LEVELS = 2
"""The most mention links one walk follows, whatever ``hops`` (3 measured worse)."""

BEAM = 64
"""The most records whose entities pass activation on, per step: the
strongest (a weaker one's share of any record it reaches is smaller still).
Bounds a walk on a large store, where two steps reach nearly every candidate."""


@dataclass(frozen=True, slots=True)
class Reached:
    """A candidate the walk reached: its activation, hops, and the path."""

    index: int
    score: float
    hops: int
    path: str
    seed: str


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


@dataclass(frozen=True, slots=True)
class WalkIndex:
    """What a walk over one candidate list reads, whatever its seeds: each
    candidate's entity names (sorted), the weights, the candidates naming each
    weighted name, and each id's position. Kept for the list while it is the
    list searched (`index_for`), so a warm search walks from its seeds only."""

    names: list[tuple[str, ...]]
    weights: dict[str, float]
    by_name: dict[str, list[int]]
    pos: dict[str, int]


def build_index(mems: Sequence[Memory], memo: EntityCache) -> WalkIndex:
    got = memo.get
    sets = [got(m.namespace, m.id, m.content) for m in mems]
    w = weights(sets)
    by_name: dict[str, list[int]] = {}
    for i, ns in enumerate(sets):
        for key in ns:
            if key in w:
                by_name.setdefault(key, []).append(i)
    names = [tuple(sorted(ns)) for ns in sets]
    return WalkIndex(names, w, by_name, {m.id: i for i, m in enumerate(mems)})


def index_for(mems: Sequence[Memory], memo: EntityCache) -> WalkIndex:
    """`build_index` of ``mems``, kept in ``memo`` for the very list (a
    search's candidates are the same list object until something changes)."""
    held = memo.held(mems)
    if isinstance(held, WalkIndex):
        return held
    index = build_index(mems, memo)
    memo.hold(mems, index)
    return index


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
) -> dict[int, Reached]:
    """The candidates (by index into ``mems``) ``hops`` mention links reach from
    ``seeds`` (record id, score) and ``query`` (with score ``top``); seeds
    themselves only where reached with a higher score."""
    decay = DECAY if decay is None else decay
    memo = names_of if names_of is not None else EntityCache()
    index = index_for(mems, memo)
    names, w, by_name, pos = index.names, index.weights, index.by_name, index.pos
    seed_score = {pos[rid]: s for rid, s in seeds if rid in pos}
    # (record index or -1 for the query) -> (activation, path so far, seed label)
    frontier: dict[int, tuple[float, str, str]] = {
        i: (s, mems[i].id, f"hit {mems[i].id}") for i, s in seed_score.items()
    }
    frontier[-1] = (top, "the query", "the query")
    query_names = tuple(sorted(entities(query, use_jieba=memo.use_jieba)))
    best: dict[int, Reached] = {}
    total = dict(seed_score)
    wget = w.get
    for level in range(1, min(hops, MAX_LEVELS) + 1):
        # entity -> its two strongest (activation, path, seed, source record)
        ents: dict[str, list[Entry]] = {}
        for i, (s, path, seed) in _strongest(frontier, BEAM):
            for key in query_names if i < 0 else names[i]:  # ties: by name
                a = s * wget(key, 0.0)
                if a > 0:
                    _offer_lazy(ents, key, a, path, seed, i)
        if view is not None:
            _along_edges(view, ents, w, edge_decay)
        incoming: dict[int, tuple[float, str, str]] = {}
        for key, tops in sorted(ents.items()):
            first = tops[0]
            second = tops[1] if len(tops) > 1 else None
            named = by_name.get(key, ())
            share = 1.0 / max(1, len(named) - 1) ** FAN
            for j in named:
                got = first if first[3] != j else second
                if got is None:
                    continue
                a, path, seed, _ = got
                had = incoming.get(j)
                if had is None:
                    incoming[j] = (a * decay * share, f"{path} {mems[j].id}", seed)
                else:
                    incoming[j] = (had[0] + a * decay * share, had[1], had[2])
        for j, (inc, p, sd) in incoming.items():
            total[j] = total.get(j, 0.0) + inc
            first_reach = best.get(j)
            best[j] = Reached(
                j,
                total[j],
                first_reach.hops if first_reach else level,
                first_reach.path if first_reach else p,
                first_reach.seed if first_reach else sd,
            )
        frontier = incoming
        if not frontier:
            break
    return dict(sorted(best.items()))


def _strongest(
    frontier: dict[int, tuple[float, str, str]], n: int
) -> list[tuple[int, tuple[float, str, str]]]:
    """The ``n`` strongest of the frontier (ties: the lower index), in index order."""
    items = sorted(frontier.items())
    if len(items) <= n:
        return items
    keep = sorted(items, key=lambda it: (-it[1][0], it[0]))[:n]
    return sorted(keep)


Entry = tuple[float, str, str, int]
"""An entity's activation from one record: (activation, path, seed, source record)."""


def _offer_lazy(
    ents: dict[str, list[Entry]], key: str, a: float, path: str, seed: str, src: int
) -> None:
    """`_offer` of ``(a, f"{path} -[{key}]-", seed, src)``, the path made only
    when the activation is kept: an offer weaker than the two kept from other
    records (or equal: the sort is stable, so the later one goes) is dropped."""
    tops = ents.get(key)
    if (
        tops is not None
        and len(tops) == 2
        and a <= tops[1][0]
        and tops[0][3] != src
        and tops[1][3] != src
    ):
        return
    _offer(ents, key, (a, f"{path} -[{key}]-", seed, src))


def _offer(ents: dict[str, list[Entry]], key: str, got: Entry) -> None:
    """Keep ``got`` among ``key``'s two strongest activations from distinct records."""
    tops = [t for t in ents.get(key, []) if t[3] != got[3] or t[0] > got[0]]
    if any(t[3] == got[3] for t in tops):
        return
    tops.append(got)
    tops.sort(key=lambda t: -t[0])
    ents[key] = tops[:2]


def _along_edges(
    view: GraphView,
    ents: dict[str, list[Entry]],
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
