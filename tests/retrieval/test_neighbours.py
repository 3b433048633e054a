"""Turns read with their neighbours (`retrieval.neighbours`): against a plain
reference, and through `search` on every backend (the gate holds)."""

from __future__ import annotations

from collections.abc import Callable

from hypothesis import given, settings
from hypothesis import strategies as st

from branchmem import HashingEmbedder, Store
from branchmem.model import Memory
from branchmem.retrieval import cutoff
from branchmem.retrieval import neighbours as nb
from branchmem.retrieval.fusion import Scored, Weights
from branchmem.retrieval.search import _scoring

KINDS = ["episodic", "episodic", "semantic", "procedural"]


@st.composite
def candidates(draw: st.DrawFn) -> list[Memory]:
    """Records in ``seq`` order (as one anchor's candidates are), or shuffled."""
    n = draw(st.integers(0, 14))
    seqs = sorted(draw(st.sets(st.integers(1, 200), min_size=n, max_size=n)))
    out = [
        Memory(
            id=f"m{s}",
            content="x",
            sources=("e1",),
            kind=draw(st.sampled_from(KINDS)),
            created_at=float(draw(st.sampled_from([0, 60, 3 * 3600, 5 * 3600, 86400]))),
            seq=s,
        )
        for s in seqs
    ]
    return draw(st.permutations(out)) if draw(st.booleans()) else out


def reference(cands: list[Memory], m: Memory) -> list[Memory]:
    """Plainly, for candidates in seq order: the nearest episodic record on
    each side with at most SPAN others between, within GAP of ``m``."""
    if m.kind != "episodic":
        return []
    i = next(n for n, c in enumerate(cands) if c is m)
    out = []
    for side in (cands[:i][::-1], cands[i + 1 :]):
        near = [n for n, c in enumerate(side) if c.kind == "episodic"]
        if near and near[0] <= nb.SPAN and abs(side[near[0]].created_at - m.created_at) <= nb.GAP:
            out.append(side[near[0]])
    return out


@settings(max_examples=300, deadline=None)
@given(cands=candidates(), data=st.data())
def test_neighbours_match_the_reference(cands: list[Memory], data: st.DataObject) -> None:
    if not cands:
        return
    m = data.draw(st.sampled_from(cands))
    got = nb.neighbours(cands, m)
    assert all(any(n is c for c in cands) and n is not m for n in got)  # candidates only
    assert all(n.kind == "episodic" and abs(n.created_at - m.created_at) <= nb.GAP for n in got)
    if [c.seq for c in cands] == sorted(c.seq for c in cands):
        assert got == reference(cands, m)


def scored(m: Memory, score: float) -> Scored:
    return Scored(m, 1.0, 0.5, 1, 1, score, m.importance, 1.0, score)


@settings(max_examples=300, deadline=None)
@given(cands=candidates(), data=st.data())
def test_lift_matches_the_reference(cands: list[Memory], data: st.DataObject) -> None:
    cands.sort(key=lambda c: c.seq)
    picked = data.draw(st.lists(st.sampled_from(cands), unique_by=id)) if cands else []
    pairs = [
        (scored(m, float(data.draw(st.integers(1, 9)))), data.draw(st.sampled_from([0.05, 1.0])))
        for m in picked
    ]
    pairs.sort(key=lambda p: -p[0].score)  # ranked: best first
    got, by = nb.lift(pairs, cands, now=0.0, half_life=86400.0)
    # Plainly: each record beside a ranked one gains SHARE of its best ranked
    # neighbour's score (one the ranking left out starts from 0), and keeps
    # the higher of its own confidence and the cut-off ratio's of that neighbour's.
    own = {s.memory.id: (s.score, c) for s, c in pairs}
    lifter: dict[str, tuple[float, float]] = {}
    for s, c in pairs:
        for n in reference(cands, s.memory):
            if s.score > lifter.get(n.id, (0.0, 0.0))[0]:
                lifter[n.id] = (s.score, c)
    want = {
        i: (
            own.get(i, (0.0, 0.0))[0] + nb.SHARE * lifter[i][0] if i in lifter else own[i][0],
            max(own.get(i, (0.0, 0.0))[1], cutoff.RATIO * lifter[i][1])
            if i in lifter
            else own[i][1],
        )
        for i in {*own, *lifter}
    }
    assert {s.memory.id: (round(s.score, 9), c) for s, c in got} == {
        i: (round(x, 9), c) for i, (x, c) in want.items()
    }
    assert {i: own[j][0] for i, j in by.items()} == {i: x for i, (x, _) in lifter.items()}
    scores = [s.score for s, _ in got]
    assert scores == sorted(scores, reverse=True)
    for s, _ in got:  # one the ranking left out says so in its explanation
        line = _scoring(s, Weights())
        assert ("not ranked on its own" in line) == (s.memory.id not in own), line


FILLER = [
    "we should repaint the kitchen cabinets green",
    "the printer jammed again this morning",
    "my sister adopted two kittens last spring",
    "football practice moved to thursday evenings",
    "the bakery on main street closed down",
    "I finally fixed the squeaky bicycle brake",
    "our neighbour plays the trumpet at night",
    "the garden tomatoes are ripening slowly",
]


def conversation(
    open_store: Callable[..., Store], kind: str, gap: float = 0.0
) -> tuple[Store, str, str]:
    """A store of turns e0..e13 on one chain (the question's turn e5, its
    answer e6) and a branch from e5 whose reply e6b says something else
    (each turn ``gap`` seconds after the one before); the two tips."""
    clock = [0.0]
    store = open_store(clock=lambda: clock[0])
    turns = [
        *FILLER[:5],
        "What did the doctor tell you about the Lisbon trip?",
        "Rest for a fortnight, no flying until March.",
        *FILLER[5:],
    ]
    store.add_events(
        [{"id": f"e{i}", "parent": f"e{i - 1}" if i else None} for i in range(len(turns))]
    )
    store.add_event("e6b", parent="e5")
    for i, t in enumerate(turns):
        clock[0] = i * gap
        store.add_memory(t, sources=[f"e{i}"], kind=kind, id=f"t{i}")
    clock[0] = 5 * gap
    store.add_memory("Totally fine to fly next week.", sources=["e6b"], kind=kind, id="t6b")
    clock[0] = len(turns) * gap
    return store, f"e{len(turns) - 1}", "e6b"


def top(store: Store, at: str, k: int = 3) -> list[str]:
    hits = store.search("doctor Lisbon trip", at=at, k=k, embedder=HashingEmbedder())
    return [h.memory.id for h in hits]


def test_the_reply_beside_the_question_is_found(open_store: Callable[..., Store]) -> None:
    store, tip, other = conversation(open_store, "episodic")
    got = top(store, tip)
    assert got[0] == "t5" and "t6" in got and "t6b" not in got
    # On the other branch the other reply is the neighbour, never this one.
    got = top(store, other)
    assert "t6b" in got and "t6" not in got
    hit = next(
        h
        for h in store.search(
            "doctor Lisbon trip", at=tip, k=3, embedder=HashingEmbedder(), explain=True
        )
        if h.memory.id == "t6"
    )
    assert hit.explanation is not None
    assert "neighbouring turn t5 (retrieval.neighbours)" in hit.explanation.scoring
    assert hit.explanation.cutoff.startswith("kept")  # the reply survives the cut-off
    store.close()


def test_facts_are_not_lifted(open_store: Callable[..., Store]) -> None:
    store, tip, _ = conversation(open_store, "semantic")
    assert "t6" not in top(store, tip)
    store.close()


def test_turns_hours_apart_are_not_neighbours(open_store: Callable[..., Store]) -> None:
    store, tip, _ = conversation(open_store, "episodic", gap=nb.GAP + 1)
    assert "t6" not in top(store, tip)
    store.close()
