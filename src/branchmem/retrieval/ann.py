"""An approximate vector index for large visible sets (extra ``branchmem[ann]``: hnswlib).

The gate stays first. One HNSW index per namespace and embedder holds the
vectors of every record a search has ranked there (it grows as searches see
new records). A search over ``n`` visible records asks it for the vector
neighbours of the query, over-fetching by the share of indexed records that
are visible, and keeps only those in the candidate set the gate just gave
(matched by id and text): an indexed record that is hidden, retracted,
expired or purged is skipped, whatever the index holds. The search falls
back to the exact ranking when the extra is not installed, when fewer than
`Settings.min_visible` records are visible, when they are less than
`Settings.min_share` of the indexed records (the over-fetch would approach a
full scan), when the filtered neighbours do not fill the pool, or when the
keyword matches are more than ``1/far_share`` of the set (computing their
cosines would cost more than ranking everything exactly).

The index is dropped with the rest of the store's ranking cache on any
erasure (`RankCache.sync`, `RankCache.forget`), so it never holds a purged
record's vector for long, and never returns one.

Hybrid ranking needs each record's vector rank. The pool's ranks are exact
among the neighbours found; a keyword match outside the pool gets its exact
cosine, ranked among the pool when it would belong there, else estimated
from an evenly spaced sample of the candidates (at least pool size + 1).
Keyword ranks are always exact. So the result is approximate, and measured
(`bench/search.py`: top-10 recall against the exact ranking).
"""

from __future__ import annotations

import math
import threading
from array import array
from dataclasses import dataclass
from typing import Any

from .candidates import Candidates
from .fastfuse import competition_ranks
from .state import VectorIndex
from .vectors import digest, numpy_or_none


@dataclass
class Settings:
    """When the index is used (module-wide; `SETTINGS`)."""

    enabled: bool = True
    min_visible: int = 100_000
    """Smaller candidate sets are ranked exactly: at 20,000 visible a warm
    search took 8.0 ms exact and 5.9 ms through the index on random vectors,
    8.1 and 15.8 ms on clustered ones (`bench/ann_recall.py`, docs/retrieval.md)."""
    min_share: float = 0.25
    """Visible records below this share of the indexed ones: ranked exactly."""
    pool: int = 256
    """Vector neighbours ranked per query (at least 4 × k)."""
    overfetch: float = 1.5
    """Extra neighbours asked for, beyond what the visible share predicts."""
    far_share: int = 8
    """More keyword matches than 1/far_share of the set: exact (0: never)."""
    sample: int = 2048
    """Candidates sampled to estimate the vector rank of far keyword matches."""
    links: int = 16
    ef_construction: int = 128
    ef_factor: int = 16
    """The graph walk keeps this many times the neighbours asked for (`ef`).
    Top-10 recall after the exact re-rank, 100,000 random 384-d vectors (the
    hardest case): 0.897 at 8×, 0.990 at 16×, 1.000 at 32×; 20,000: 0.75 at
    1×, 0.997 at 8× (clustered: 0.79 at 1×, 1.000 from 4×)."""
    build_in_search: int = 2048
    """A search adds at most this many records to the index itself; when more
    are missing they are added on a thread of the index's own, and searches
    rank exactly until it is done (a first search does not wait for the build)."""


SETTINGS = Settings()

_lib: Any = None


def library() -> Any:
    """The hnswlib module, or None when the extra is not installed."""
    global _lib
    if _lib is None:
        try:
            import hnswlib
        except ImportError:
            _lib = False
        else:
            _lib = hnswlib
    return _lib or None


def wanted(n: int) -> bool:
    """Is the index to be tried for ``n`` visible records (enabled, installed, large)?"""
    return SETTINGS.enabled and n >= SETTINGS.min_visible and library() is not None


class NamespaceIndex:
    """The HNSW index of one namespace's vectors under one embedder."""

    def __init__(self, dim: int) -> None:
        lib = library()
        self.dim = dim
        self.index = lib.Index(space="ip", dim=dim)
        self.index.init_index(
            max_elements=1024, ef_construction=SETTINGS.ef_construction, M=SETTINGS.links
        )
        self.index.set_num_threads(1)  # one thread: the same graph every time
        self.ids: list[str] = []  # label -> record id
        self.texts: list[str] = []  # label -> digest of the text its vector was made from
        self.labels: dict[str, int] = {}  # record id -> its latest label
        self.covered: set[int] = set()  # id() of candidate sets fully added
        self._keep: list[Candidates] = []  # ... kept alive while their id() is noted
        self.lock = threading.Lock()
        self.building = False  # a thread is adding records (`build_later`)

    def __len__(self) -> int:
        return len(self.ids)

    def missing(self, cands: Candidates) -> list[int]:
        """Positions of the records of ``cands`` the index does not hold (made
        from the same text). The caller holds `lock`."""
        if id(cands) in self.covered:
            return []
        # Grown from a covered set: only its added records can be missing.
        base = cands.base
        start = len(base.mems) if base is not None and id(base) in self.covered else 0
        new = []
        for i, m in enumerate(cands.mems[start:], start):
            lab = self.labels.get(m.id)
            if lab is None or self.texts[lab] != digest(m.content):
                new.append(i)
        return new

    def cover(self, cands: Candidates, vecs: VectorIndex, new: list[int] | None = None) -> None:
        """Add the records of ``cands`` not yet indexed (rows of ``vecs``, its
        matrix; ``new``: their positions when `missing` gave them). The caller
        holds `lock`."""
        new = self.missing(cands) if new is None else new
        if new:
            np = numpy_or_none()
            rows = vecs.matrix()[np.asarray(new, dtype=np.int64)]
            self.add([cands.mems[i] for i in new], rows)
        self.covered.add(id(cands))
        self._keep.append(cands)
        del self._keep[:-8]
        self.covered.intersection_update(id(c) for c in self._keep)

    def add(self, mems: list[Any], rows: Any) -> None:
        """Index ``mems`` with their vectors ``rows``. The caller holds `lock`."""
        np = numpy_or_none()
        need = len(self.ids) + len(mems)
        if need > self.index.get_max_elements():
            self.index.resize_index(max(need, 2 * self.index.get_max_elements()))
        labels = np.arange(len(self.ids), need, dtype=np.int64)
        self.index.add_items(rows, labels)
        for m, lab in zip(mems, labels.tolist(), strict=True):
            self.ids.append(m.id)
            self.texts.append(digest(m.content))
            self.labels[m.id] = lab

    def build_later(self, cands: Candidates, vecs: VectorIndex, new: list[int]) -> None:
        """Add the records at ``new`` on a thread of the index's own (one at a
        time). The vectors are copied now, while the caller holds the search
        state's lock; the thread takes `lock` for the build, and searches
        that find it taken rank exactly."""
        if self.building:
            return
        np = numpy_or_none()
        rows = np.array(vecs.matrix()[np.asarray(new, dtype=np.int64)])  # a copy
        mems = [cands.mems[i] for i in new]
        self.building = True

        def build() -> None:
            try:
                with self.lock:
                    self.add(mems, rows)
            finally:
                self.building = False

        threading.Thread(target=build, name="branchmem-ann-build", daemon=True).start()

    def neighbours(self, q: array[float], n: int) -> list[int]:
        """Labels of (about) the ``n`` nearest vectors to ``q``, nearest first."""
        np = numpy_or_none()
        n = min(n, len(self.ids))
        self.index.set_ef(max(SETTINGS.ef_factor * n, 64))
        try:
            labels, _ = self.index.knn_query(np.frombuffer(q.tobytes(), dtype=np.float32), k=n)
        except RuntimeError:  # the graph walk found fewer than n: the caller ranks exactly
            return []
        out: list[int] = labels[0].tolist()
        return out


def vector_pool(
    index: NamespaceIndex,
    cands: Candidates,
    vecs: VectorIndex,
    q: array[float],
    keyword_at: Any,
    limit: int,
) -> tuple[Any, Any, Any] | None:
    """(pool positions, their cosines, their vector ranks) for ``cands``, from
    the index; None to rank exactly instead. ``keyword_at``: the positions of
    keyword matches (numpy), which join the pool."""
    np = numpy_or_none()
    n = len(cands.mems)
    if len(keyword_at) * SETTINGS.far_share > n:  # cheaper to rank every candidate exactly
        return None
    if not index.lock.acquire(blocking=False):  # a build holds it: rank exactly
        return None
    try:
        new = index.missing(cands)
        if len(new) > SETTINGS.build_in_search:
            index.build_later(cands, vecs, new)
            return None
        index.cover(cands, vecs, new)
        if n < SETTINGS.min_share * len(index):
            return None
        want = min(n, max(SETTINGS.pool, 4 * limit))
        fetch = math.ceil(want * len(index) / n * SETTINGS.overfetch) + limit
        labels = index.neighbours(q, fetch)
        ids, texts = index.ids, index.texts
    finally:
        index.lock.release()
    where = cands.positions()
    mems = cands.mems
    found: list[int] = []
    taken: set[int] = set()
    for lab in labels:
        i = where.get(ids[lab])
        if i is not None and i not in taken and digest(mems[i].content) == texts[lab]:
            found.append(i)  # gated, and made from the same text
            taken.add(i)
            if len(found) == want:
                break
    if len(found) < want:
        return None
    return ranked_pool(np.asarray(found, dtype=np.int64), cands, vecs, q, keyword_at, want)


def ranked_pool(
    top: Any, cands: Candidates, vecs: VectorIndex, q: array[float], keyword_at: Any, want: int
) -> tuple[Any, Any, Any]:
    """(pool positions, their cosines, their vector ranks) from ``top``, the
    positions of the ``want`` nearest candidates found by an index, and the
    keyword matches outside it (see the module's docstring)."""
    np = numpy_or_none()
    n = len(cands.mems)
    top_cos = vecs.rows_cosines(q, top)
    top_rank = competition_ranks(top_cos)
    far = np.setdiff1d(keyword_at, top, assume_unique=True)
    if not len(far):
        return top, top_cos, top_rank
    far_cos = vecs.rows_cosines(q, far)
    asc = np.sort(top_cos)
    among = len(top_cos) - np.searchsorted(asc, far_cos, side="right") + 1
    step = max(1, n // SETTINGS.sample)
    sample = np.sort(vecs.rows_cosines(q, np.arange(0, n, step)))
    above = len(sample) - np.searchsorted(sample, far_cos, side="right")
    guess = np.maximum(want + 1, 1 + (above * n) // len(sample))
    far_rank = np.where(far_cos >= asc[0], among, guess)
    return (
        np.concatenate([top, far]),
        np.concatenate([top_cos, far_cos]),
        np.concatenate([top_rank, far_rank]),
    )
