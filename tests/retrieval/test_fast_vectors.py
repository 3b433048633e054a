"""The numpy paths of ranking's inputs against the plain Python ones.

`unit_vectors` normalises a batch in numpy when it is installed; the plain
`unit_vector` is the reference. A search ranks the same with numpy and without.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from branchmem import HashingEmbedder, Store
from branchmem.errors import EmbeddingError
from branchmem.retrieval import vectors
from branchmem.retrieval.vectors import unit_vector, unit_vectors

np = pytest.importorskip("numpy")


class Fixed:
    """An embedder of given vectors (only its name and dim are used here)."""

    name = "fixed"

    def __init__(self, dim: int) -> None:
        self.dim = dim


FLOATS = st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False, width=32)


@settings(max_examples=200, deadline=None)
@given(
    st.integers(1, 12).flatmap(
        lambda d: st.lists(st.lists(FLOATS, min_size=d, max_size=d), min_size=0, max_size=40)
    )
)
def test_batch_unit_vectors_match_the_plain_ones(vs: list[list[float]]) -> None:
    dim = len(vs[0]) if vs else 3
    emb = Fixed(dim)
    got = unit_vectors(vs, emb)  # type: ignore[arg-type]
    want = [unit_vector(v, emb) for v in vs]  # type: ignore[arg-type]
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert g.typecode == w.typecode == "f" and len(g) == len(w)
        for a, b in zip(g, w, strict=True):
            assert math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-6)


def test_a_bad_batch_fails_as_the_plain_path_does() -> None:
    emb = Fixed(2)
    with pytest.raises(EmbeddingError, match="length 3"):
        unit_vectors([[1.0, 2.0]] * 20 + [[1.0, 2.0, 3.0]], emb)  # type: ignore[arg-type]
    with pytest.raises(EmbeddingError, match="non-finite"):
        unit_vectors([[1.0, 2.0]] * 20 + [[1e200, 1e200]], emb)  # type: ignore[arg-type]


WORDS = st.sampled_from(
    ["用户", "喜欢", "杭州", "成都", "花生", "过敏", "blue", "cat", "flight", "tuesday"]
)
TEXTS = st.lists(st.lists(WORDS, min_size=1, max_size=6).map(" ".join), min_size=1, max_size=90)


@settings(max_examples=25, deadline=None)
@given(TEXTS, st.lists(WORDS, min_size=1, max_size=3).map(" ".join))
def test_search_ranks_the_same_with_numpy_and_without(texts: list[str], query: str) -> None:
    def ranked(use_numpy: bool) -> list[tuple[str, float]]:
        saved = vectors._numpy
        vectors._numpy = None if use_numpy else False
        try:
            s = Store(clock=lambda: 1000.0)  # the recency prior fixed: only numpy differs
            s.add_event("e1")
            s.add_memories(
                [{"content": t, "sources": ["e1"], "id": f"m{i}"} for i, t in enumerate(texts)]
            )
            hits = s.search(query, at="e1", embedder=HashingEmbedder(), k=len(texts), now=1000.0)
            return [(h.memory.id, round(h.score, 9)) for h in hits]
        finally:
            vectors._numpy = saved

    assert ranked(True) == ranked(False)
