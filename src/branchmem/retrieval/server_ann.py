"""The vector side of a large search from the server's index (pgvector's
HNSW on the PostgreSQL backend, `backends.postgres.vector`), the gate still first.

The search has the gate's answer already (the candidates). For at least
`Settings.min_visible` of them that are a large enough share of what the
index scan steps through (`Settings.min_gain`), it asks the server for the namespace's
vectors nearest to the query, restricted in the same statement to records
whose index position lies in the anchors' ranges, with an iterative scan
(``hnsw.iterative_scan``), a few more than the pool it needs
(`Settings.margin`). Of what comes back it keeps only the records that are
among the candidates, made from the same text (matched by id and digest):
whatever the index holds, a record the gate hides is never ranked. When
fewer than the pool (`Settings.pool`) survive, it asks once more for `Settings.grow` times as
many, then falls back to the exact ranking. The pool's cosines are computed
here from the candidates' vectors, exactly, and ranked as `retrieval.ann`
ranks its pool (keyword matches outside it get exact cosines and estimated
ranks). Other candidate sets are ranked exactly in process, which is faster
there (bench/search.py --backend postgres --sweep, 1M records in a
namespace, 2 GB of shared buffers): the scan tests every row of the
namespace's part it meets against the anchors' ranges, so its cost grows as
pool / share, where share is the candidates' part of those rows, while the
exact ranking's grows as the candidates. At 1M records, vector mode, the
scan took 19.6x the exact ranking's time with 20,000 visible (share 0.02),
2.8x with 50,000, 0.94x with 100,000 and 0.33x with 200,000; at 300,000
records, 3.1x with 20,000 (share 0.07), 0.91x with 50,000 and 0.38x with
100,000: break-even where candidates x share is about 10,000.

Which path ran is noted for the search's explanation (`PATH`).
"""

from __future__ import annotations

import math
from array import array
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from ..engine import Engine
from ..gate import ranges
from . import ann
from .candidates import Candidates
from .embed import Embedder
from .state import VectorIndex
from .vectors import digest, numpy_or_none


@dataclass
class Settings:
    """When the server's index is used (module-wide; `SETTINGS`)."""

    enabled: bool = True
    min_visible: int = 50_000
    """Smaller candidate sets are ranked exactly in process."""
    min_gain: float = 10_000
    """Candidates x their share of the rows the index scan steps through
    (the namespace's part of the table) below this: ranked exactly."""
    pool: int = 64
    """Nearest neighbours ranked per query (at least 4 × k): the HNSW scan's
    cost grows with it (``hnsw.ef_search`` follows), recall@10 did not."""
    margin: float = 1.25
    """Neighbours asked for per pool place (some may be filtered out here)."""
    grow: int = 4
    """The second request asks for this many times more."""


SETTINGS = Settings()

PATH: ContextVar[str | None] = ContextVar("vector_path", default=None)
"""How the last search in this context ranked vectors on a pgvector store
(None elsewhere): one line for its explanation."""
PLAN: ContextVar[bool] = ContextVar("vector_plan", default=False)
"""Does the search in this context explain its hits? On the HNSW path it then
also asks the server how it planned the statement (`begin`)."""


def begin(explain: bool) -> None:
    """A search starts: no path yet; with ``explain``, the HNSW path says what
    the server's plan did (an index scan, or what it ran instead)."""
    PATH.set(None)
    PLAN.set(explain)


def source(
    engine: Engine, key: tuple[str, tuple[str, ...], str], emb: Embedder, n: int, large: bool
) -> Any:
    """The pool maker for a search of ``n`` candidates under ``key`` (namespace,
    anchors, filters) on a backend with pgvector, or None to rank as before
    (``large``: the search fuses with numpy, which the pool needs)."""
    b = engine.backend
    has = getattr(b, "pgvector", None)
    if has is None or has() is None:
        return None
    if not SETTINGS.enabled or n < SETTINGS.min_visible or not large:
        PATH.set(f"vectors ranked exactly in process ({n:,} gated, pgvector from "
                 f"{SETTINGS.min_visible:,})")  # fmt: skip
        return None
    ns, anchors = key[0], key[1]
    if SETTINGS.min_gain > 0:
        rows = b.vector_part_rows(ns, emb.name, emb.dim) or n  # type: ignore[attr-defined]
        if n * n / max(rows, n) < SETTINGS.min_gain:
            PATH.set(
                f"vectors ranked exactly in process ({n:,} gated of about {rows:,} rows in the "
                "namespace's pgvector part: too small a share for its index)"
            )
            return None

    def pool(c: Candidates, st: VectorIndex, q: array[float], keyword_at: Any, k: int) -> Any:
        return _pool(engine, ns, anchors, emb, c, st, q, keyword_at, k)

    return pool


def _pool(
    engine: Engine,
    ns: str,
    anchors: tuple[str, ...],
    emb: Embedder,
    c: Candidates,
    st: VectorIndex,
    q: array[float],
    keyword_at: Any,
    k: int,
) -> Any:
    np = numpy_or_none()
    n = len(c.mems)
    if len(keyword_at) * ann.SETTINGS.far_share > n:
        PATH.set(f"vectors ranked exactly: {len(keyword_at):,} keyword matches of {n:,}")
        return None
    rs: dict[int, int] = {}
    for a in anchors:
        got = ranges(engine, ns, a)
        for seg, up in (got or {}).items():
            if rs.get(seg, -1) < up:
                rs[seg] = up
    want = min(n, max(SETTINGS.pool, 4 * k))
    limit = math.ceil(want * SETTINGS.margin) + k
    where, mems = c.positions(), c.mems
    found: list[int] = []
    asked = 0
    for _ in range(2):
        asked = limit
        rows = engine.backend.nearest(ns, emb.name, q, rs, limit)  # type: ignore[attr-defined]
        taken: set[int] = set()
        found = []
        for rid, dig in rows:
            i = where.get(rid)
            if i is not None and i not in taken and digest(mems[i].content) == dig:
                found.append(i)  # gated, and made from the same text
                taken.add(i)
        if len(found) >= want or len(rows) < limit:
            break
        limit *= SETTINGS.grow
    if len(found) < want:
        PATH.set(
            f"vectors ranked exactly: pgvector HNSW gave {len(found)} gated of {asked} "
            f"asked, fewer than the pool of {want}"
        )
        return None
    at = np.asarray(found, dtype=np.int64)
    cos = st.rows_cosines(q, at)
    top = at[np.argsort(-cos, kind="stable")[:want]]
    how = f"{len(found)} gated of {asked} asked, pool {want} of {n:,} gated"
    b: Any = engine.backend
    planned = b.nearest_plan(ns, emb.name, q, rs, asked) if PLAN.get() else None
    if planned is None:
        PATH.set(f"vectors from pgvector HNSW: {how}")
    elif planned[0]:
        PATH.set(f"vectors from pgvector HNSW: {how} (the plan: {planned[1]})")
    else:
        # Where the server's settings did not reach the plan (as they did not
        # reach Citus's workers once), the index went unused: say so.
        PATH.set(f"vectors from pgvector without its HNSW index (the plan: {planned[1]}): {how}")
    return ann.ranked_pool(top, c, st, q, keyword_at, want)
