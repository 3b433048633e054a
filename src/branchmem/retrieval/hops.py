"""``search(..., hops=N)``: rank as usual, then follow the visible relation graph.

The seeds are the ranked hits and the query itself. The entities they mention
(names that a visible edge names, `graph.mentions`) start a breadth-first walk
of at most ``hops`` visible edges (`GraphView.reach`). What the walk reaches
joins the hits with the seed's score times ``DECAY`` per hop (equal scores:
ranked hits first, then what the walk reached, records before edges): the records
among the search's own candidates that mention a reached entity, and the edge
records of the path (a ranked hit reached with a higher score takes it).
Nothing off the anchors' paths is walked or returned: the
candidates are the gate's answer and the walk sees visible edges only.

Then the mention walk (`retrieval.spread`): the candidates that name the same
entity as a hit or the query (`graph.entities`) are linked, no edge needed.
"""

from __future__ import annotations

import heapq
from typing import Any, TypeVar

from ..engine import Engine
from ..errors import InvalidInput
from ..graph.entities import EntityCache
from ..graph.mentions import Mentions
from ..graph.model import MAX_HOPS, Path
from ..graph.read import graph
from ..graph.view import GraphView
from ..model import Memory
from ..ops.reads import explain as explain_at
from ..validate import show
from . import spread
from .candidates import Candidates
from .hit import Hit, HitExplanation

DECAY = 1.0
"""A reached record's score: its seed's score times this per hop. Chosen on the
tune split of the multihop set (0.5: 13/29 assertions pass at hops=2, 0.97:
15, 0.99: 16, 1.0: 18): a reached record ranks just below its seed."""

MAX_WALK = 20_000
"""The most edges one search's walk looks at."""


def check_hops(hops: object) -> int:
    """``hops`` as given to `search`: an integer in 0..MAX_HOPS."""
    if isinstance(hops, bool) or not isinstance(hops, int) or not 0 <= hops <= MAX_HOPS:
        raise InvalidInput(f"hops must be an integer in 0..{MAX_HOPS}, got {show(hops)}")
    return hops


def expand(
    engine: Engine,
    query: str,
    hits: list[Hit],
    gathered: Candidates,
    anchors: list[str],
    ns: str,
    hops: int,
    k: int,
    now: float | None,
    explain: bool,
) -> list[Hit]:
    """``hits`` joined by what ``hops`` visible edges from their entities reach,
    best first, at most ``k``."""
    if not anchors or hops <= 0:
        return hits
    view = graph(engine, at=anchors[0] if len(anchors) == 1 else anchors, namespace=ns, now=now)
    top = hits[0].score if hits else 1.0
    top_conf = hits[0].confidence if hits else 1.0
    found, conf_of = _along_edges(view, query, hits, gathered, hops, top, top_conf)
    # The mention walk: from the hits, what the edges reached, and the query.
    seeds = [(h.memory.id, h.score) for h in hits]
    # (What the edges reached seeds nothing: measured worse on the multihop tune split.)
    conf = {h.memory.id: h.confidence for h in hits} | {
        f[3].id: conf_of.get(f[2], 0.0) * DECAY ** f[1].hops for f in found.values()
    }
    have = {h.memory.id: h.score for h in hits}
    mentioned: dict[str, tuple[float, spread.Reached, Memory, int]] = {}
    names = engine.cache("entities", EntityCache)
    reached = spread.walk(
        gathered.mems, seeds, query, top, hops, view, names_of=names, edge_decay=DECAY
    )
    for r in reached.values():
        m = gathered.mems[r.index]
        if max(have.get(m.id, -1.0), found[m.id][0] if m.id in found else -1.0) < r.score:
            mentioned[m.id] = (r.score, r, m, gathered.via[r.index])
            found.pop(m.id, None)
    seed_conf = {f"hit {k_}": c for k_, c in conf.items()} | {"the query": top_conf}
    # Hits are made only for what can still rank in the top k (a walk may reach
    # every candidate): of each kind, the k best, ties kept in their order.
    found, mentioned = _best(found, k), _best(mentioned, k)
    extra = [
        _hit(
            engine,
            ns,
            anchors[via],
            m,
            s,
            path,
            why,
            explain,
            conf_of.get(why, 0.0) * DECAY**path.hops,
        )
        for s, path, why, m, via in found.values()
    ] + [
        _mention_hit(
            engine,
            ns,
            anchors[via],
            m,
            r,
            explain,
            seed_conf.get(r.seed, 0.0) * spread.DECAY**r.hops,
        )
        for _, r, m, via in mentioned.values()
    ]
    out = [h for h in hits if h.memory.id not in found and h.memory.id not in mentioned] + extra
    out.sort(key=lambda h: -h.score)  # stable: among equal scores, ranked hits first
    return out[:k]


V = TypeVar("V", bound=tuple[Any, ...])


def _best(items: dict[str, V], k: int) -> dict[str, V]:
    """The ``k`` entries with the highest score (their value's first field),
    in their order: those that can rank in a stable sort's top ``k``."""
    if len(items) <= k:
        return items
    keep = heapq.nsmallest(k, enumerate(items), key=lambda t: (-items[t[1]][0], t[0]))
    return {key: items[key] for _, key in sorted(keep)}


def _along_edges(
    view: GraphView,
    query: str,
    hits: list[Hit],
    gathered: Candidates,
    hops: int,
    top: float,
    top_conf: float,
) -> tuple[dict[str, tuple[float, Path, str, Memory, int]], dict[str, float]]:
    """What ``hops`` written edges from the entities the query and the hits
    name reach: record id -> (score, path, seed, record, via), and each
    seed's confidence."""
    # entity -> (score, what mentioned it, its confidence)
    seeds: dict[str, tuple[float, str, float]] = {}
    for name in view.mentioned(query):
        seeds[name] = (top, "the query", top_conf)
    for h in hits:
        for name in view.mentioned(h.memory.content):
            if name not in seeds or seeds[name][0] < h.score:
                seeds[name] = (h.score, f"hit {h.memory.id}", h.confidence)
    found: dict[str, tuple[float, Path, str, Memory, int]] = {}
    conf_of: dict[str, float] = {}
    if not seeds:
        return found, conf_of
    # entity -> best (score, path, seed); a reached record takes its seed's confidence
    reached: dict[str, tuple[float, Path, str]] = {}
    for name, (score, why, conf) in sorted(seeds.items(), key=lambda x: -x[1][0]):
        for far, path in view.reach([name], max_hops=hops, max_edges=MAX_WALK).items():
            s = score * DECAY**path.hops
            if path.hops and (far not in reached or reached[far][0] < s):
                reached[far] = (s, path, why)
                conf_of[why] = conf
    if not reached:
        return found, conf_of
    have = {h.memory.id: h.score for h in hits}

    def offer(m: Memory, via: int, score: float, path: Path, why: str) -> None:
        # A ranked hit that the walk reaches with a higher score takes that score.
        if have.get(m.id, -1.0) < score and (m.id not in found or found[m.id][0] < score):
            found[m.id] = (score, path, why, m, via)

    keys = {k_: far for far in reached for k_ in view.names_of(far)}
    match = Mentions(keys)
    for m, via in zip(gathered.mems, gathered.via, strict=True):
        for key in match.find(m.content):
            s, path, why = reached[keys[key]]
            offer(m, via, s, path, why)
    for s, path, why in reached.values():
        for e in path.edges:
            i = view.via(e.id)
            if i is not None:
                offer(view.record(e.id), i, s, path, why)
    return found, conf_of


def _mention_hit(
    engine: Engine,
    ns: str,
    via: str,
    m: Memory,
    r: spread.Reached,
    explain: bool,
    confidence: float,
) -> Hit:
    parts = {"graph": r.score, "hops": float(r.hops), "mention": 1.0}
    expl = None
    if explain:
        expl = HitExplanation(
            explain_at(engine, m.id, at=via, namespace=ns, now=None),
            f"score {r.score:.4f} = the score of {r.seed} × each entity's weight × "
            f"{spread.DECAY:g} per hop ({r.hops}; reached through the entities "
            f"records name: {r.path})",
            path=r.path,
        )
    return Hit(m, r.score, via, parts, expl, min(1.0, confidence))


def _hit(
    engine: Engine,
    ns: str,
    via: str,
    m: Memory,
    score: float,
    path: Path,
    why: str,
    explain: bool,
    confidence: float,
) -> Hit:
    parts = {"graph": score, "hops": float(path.hops)}
    expl = None
    if explain:
        expl = HitExplanation(
            explain_at(engine, m.id, at=via, namespace=ns, now=None),
            f"score {score:.4f} = the score of {why} × {DECAY:g}^{path.hops} "
            f"(reached along the graph: {path})",
            path=str(path),
        )
    return Hit(m, score, via, parts, expl, min(1.0, confidence))
