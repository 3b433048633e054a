"""Turns read with their neighbours: an episodic hit shares its score with the turns beside it.

A question about a conversation often shares words with one turn while the
answer is in the next one (or the one before): "what did the doctor say
about the trip?" matches the turn that asks, and the reply holds the
answer. So each episodic record among the ranked ones gains `SHARE` of the
score of its best-ranked neighbour, and a neighbour the ranking left out
enters with `SHARE` of that score. Its confidence (what the cut-off reads)
is the higher of its own and the ratio cut-off's share (`cutoff.RATIO`) of
that neighbour's: the turns beside the best hit stay, those beside weaker
hits only on their own merit.

A record's neighbours are the episodic records written just before and
just after it among the search's candidates (by ``seq``; records of other
kinds in between are stepped over, at most `SPAN` of them), unless more
than `GAP` seconds lie between the two (another session). Records of the
other kinds (facts, preferences, procedures) neither give nor take: what
stands next to a fact is not its context. Summaries are episodic (they
tell what happened) and count as turns. Neighbours are found only among the candidates,
so the gate holds: nothing off the anchor's path, nothing a filter removed.
The candidates of one anchor are in ``seq`` order; where they are not (a
scope chain of several anchors), a record not found in that order has no
neighbours.

The share was chosen on public sets (docs/retrieval.md, "Neighbouring
turns"): on REALTALK's long conversations recall@10 rises by 0.02, on
PrefEval (whose episodic records are unrelated conversations, one after the
other) it moves by 0.003 or less.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import replace
from operator import attrgetter

from ..model import Memory
from . import cutoff
from .fusion import Scored, recency
from .recency_order import EPISODIC

SHARE = 0.2
"""Part of a neighbour's score a record gains (its confidence: see the module)."""

GAP = 3 * 3600.0
"""Seconds between two records' times beyond which they are not neighbours."""

SPAN = 8
"""Records of other kinds stepped over, each way, to find a neighbour."""

REACH = 10
"""A search for ``k`` hits ranks ``REACH * k`` records for the lift: a turn
beside the 50th gains too, not only those beside the first ``2k``."""

REACH_MAX = 1000
"""At most this many ranked for the lift, however large ``k`` (a search
still ranks its own ``2k``)."""

_SEQ = attrgetter("seq")


def neighbours(cands: Sequence[Memory], m: Memory) -> list[Memory]:
    """The episodic records beside ``m`` among ``cands`` (in ``seq`` order), within `GAP`."""
    if m.kind != EPISODIC:
        return []
    i = bisect_left(cands, m.seq, key=_SEQ)
    if i >= len(cands) or cands[i] is not m:
        return []  # not in seq order here (a scope chain): none
    out = []
    for step in (-1, 1):
        j = i + step
        for _ in range(SPAN + 1):
            if not 0 <= j < len(cands):
                break
            n = cands[j]
            if n.kind == EPISODIC:
                if abs(n.created_at - m.created_at) <= GAP:
                    out.append(n)
                break
            j += step
    return out


def lift(
    pairs: list[tuple[Scored, float]],
    cands: Sequence[Memory],
    now: float,
    half_life: float,
) -> tuple[list[tuple[Scored, float]], dict[str, str]]:
    """``pairs`` (each ranked record and its confidence) with the neighbours'
    share added and the neighbours the ranking left out appended, re-sorted
    best first (stable on ties); and, for each record lifted, the id of the
    neighbour that lifted it."""
    best: dict[str, tuple[Scored, float, Memory]] = {}
    for s, c in pairs:
        for n in neighbours(cands, s.memory):
            held = best.get(n.id)
            if held is None or s.score > held[0].score:
                best[n.id] = (s, c, n)
    if not best:
        return pairs, {}
    keep = cutoff.RATIO  # read now: a caller may set another ratio
    out = []
    for s, c in pairs:
        by = best.get(s.memory.id)
        if by is None:
            out.append((s, c))
        else:
            out.append((replace(s, score=s.score + SHARE * by[0].score), max(c, keep * by[1])))
    ranked = {s.memory.id for s, _ in pairs}
    for nid, (s, c, n) in best.items():
        if nid not in ranked:  # left out by the ranking: its neighbour's share alone
            rec = recency(n.created_at, now, half_life)
            new = Scored(
                n, None, None, None, None, 0.0, n.importance, rec, SHARE * s.score, s.scope
            )
            out.append((new, keep * c))
    order = sorted(range(len(out)), key=lambda i: -out[i][0].score)  # stable on ties
    return [out[i] for i in order], {nid: by[0].memory.id for nid, by in best.items()}


def note(path: str | None, by: str | None) -> str | None:
    """The explanation's scoring line gains the neighbour that lifted the hit."""
    if by is None:
        return path
    line = f"+ {SHARE:g} × the score of its neighbouring turn {by} (retrieval.neighbours)"
    return f"{path}; {line}" if path else line
