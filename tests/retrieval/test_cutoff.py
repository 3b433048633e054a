"""The relevance cut-off: a calibrated confidence per hit, ``min_score`` and the
adaptive rule (`branchmem.retrieval.cutoff`), checked against a plain reference."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from branchmem import InvalidInput, Store
from branchmem.retrieval import cutoff

WORDS = ["杭州", "花生", "过敏", "python", "budget", "coffee", "成都", "猫"]


def seeded(contents: list[str]) -> Store:
    store = Store()
    store.add_events([{"id": "e1"}])
    for i, c in enumerate(contents):
        store.add_memory(c, sources=["e1"], id=f"m{i}")
    return store


def test_noise_is_cut_and_k_is_a_maximum() -> None:
    store = seeded(["用户对花生过敏", "用户对花生过敏，吃了会起疹子", "公司通知：周五消防演练"])
    hits = store.search("花生过敏", at="e1", k=3, embedder="hashing")
    assert [h.memory.id for h in hits] == ["m0", "m1"] or [h.memory.id for h in hits] == [
        "m1",
        "m0",
    ]
    assert [h.memory.id for h in hits.cut] == ["m2"]
    off = store.search("花生过敏", at="e1", k=3, embedder="hashing", cutoff="off")
    assert len(off) == 3 and off.cut == []
    for h in off:
        assert 0.0 <= h.confidence <= 1.0


def test_min_score_and_explain_says_why() -> None:
    store = seeded(["用户对花生过敏", "用户喜欢喝咖啡"])
    hits = store.search("花生", at="e1", embedder="hashing", explain=True, cutoff="off")
    assert hits[0].memory.id == "m0" and hits[0].explanation is not None
    assert hits[0].explanation.cutoff.startswith("kept: confidence")
    strict = store.search("花生", at="e1", embedder="hashing", min_score=1.0, explain=True)
    assert all(h.confidence >= 1.0 for h in strict)
    assert all(
        h.explanation is not None and "min_score" in h.explanation.cutoff for h in strict.cut
    )
    assert {h.memory.id for h in strict} | {h.memory.id for h in strict.cut} == {"m0", "m1"}


@pytest.mark.parametrize(
    "bad",
    [
        {"min_score": -0.1},
        {"min_score": 2},
        {"min_score": True},
        {"cutoff": "elbow"},
        {"cutoff": 0.5},
    ],
)
def test_bad_cutoff_values_are_refused(bad: dict[str, object]) -> None:
    store = seeded(["用户对花生过敏"])
    with pytest.raises(InvalidInput):
        store.search("花生", at="e1", embedder="hashing", **bad)  # type: ignore[arg-type]


def reference_threshold(confs: list[float], rule: str, floor: float) -> float:
    """The rule as the docs state it, written out plainly."""
    if not confs:
        return floor
    top = max(confs)
    adaptive = 0.0
    if rule == "ratio":
        adaptive = cutoff.RATIO * top
    elif rule == "knee":
        desc = sorted(confs, reverse=True)
        best_gap, at = 0.0, None
        for i in range(len(desc) - 1):
            if desc[i] - desc[i + 1] > best_gap:
                best_gap, at = desc[i] - desc[i + 1], i
        if at is not None and best_gap >= cutoff.KNEE * top:
            adaptive = (desc[at] + desc[at + 1]) / 2
    return max(floor, min(adaptive, top))


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.floats(0, 1), max_size=12),
    st.sampled_from(cutoff.RULES),
    st.floats(0, 1),
)
def test_threshold_matches_the_reference(confs: list[float], rule: str, floor: float) -> None:
    assert cutoff.threshold(confs, rule, floor) == pytest.approx(
        reference_threshold(confs, rule, floor)
    )


@settings(max_examples=30, deadline=None)
@given(
    st.lists(st.lists(st.sampled_from(WORDS), min_size=1, max_size=4), min_size=1, max_size=8),
    st.sampled_from(WORDS),
    st.sampled_from(cutoff.RULES),
    st.sampled_from([None, 0.2, 0.6]),
    st.sampled_from(["hybrid", "keyword", "vector"]),
)
def test_the_cut_keeps_a_subset_of_the_ranking_in_order(
    docs: list[list[str]], query: str, rule: str, floor: float | None, mode: str
) -> None:
    store = seeded([" ".join(d) for d in docs])
    full = store.search(query, at="e1", k=20, embedder="hashing", mode=mode, cutoff="off")
    hits = store.search(
        query, at="e1", k=20, embedder="hashing", mode=mode, cutoff=rule, min_score=floor
    )
    # the same ranking, with what falls under the threshold taken out, in order
    assert [h.memory.id for h in full] == sorted(
        [h.memory.id for h in hits] + [h.memory.id for h in hits.cut],
        key=[h.memory.id for h in full].index,
    )
    confs = [h.confidence for h in full]
    limit = reference_threshold(confs, rule, floor or 0.0)
    want = [h.memory.id for h in full if h.confidence >= limit and (h.confidence > 0 or not floor)]
    assert [h.memory.id for h in hits] == want
    assert all(0.0 <= c <= 1.0 for c in confs)
