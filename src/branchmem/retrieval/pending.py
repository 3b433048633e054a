"""A search's vectors within its embedding budget (``max_embed``).

`ready` finds the candidates the search's vector state does not hold yet
that have no vector anywhere (in process or stored) and embeds them, outside
every lock, when they are at most the budget. When there are more, it embeds
none if a `BackgroundEmbedder` with the search's embedder is attached to the
store (a few out of many would cost the search seconds and change little;
the worker makes them), else the budget's worth, newest first (so repeated
searches make progress). When some are left, the
search ranks by vector only the candidates that have one (`cosines_of_known`)
and the rest by keyword alone; a vector-only search cannot, and raises
`EmbeddingPending`. The records left are queued for the store's
`BackgroundEmbedder`, when one is attached with the search's embedder.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import TYPE_CHECKING, Any

from ..engine import Engine
from ..errors import EmbeddingPending
from ..model import Memory
from .background import background_for
from .cache import BULK, Found, RankCache
from .embed import Embedder
from .vectors import cosines, numpy_or_none

if TYPE_CHECKING:
    from array import array


def budget_of(engine: Engine, emb: Embedder, max_embed: int | None) -> tuple[int | None, bool]:
    """``max_embed``, or the attached background embedder's budget (None: no
    limit), and whether such an embedder will make what the search leaves."""
    bg = background_for(engine)
    behind = bg is not None and bg.embedder.name == emb.name
    if max_embed is not None:
        return max_embed, behind
    return (bg.budget if bg is not None and behind else None), behind


def ready(
    cache: RankCache,
    emb: Embedder,
    key: tuple[Hashable, str],
    cands: Sequence[Memory],
    backend: object,
    epoch: int | None,
    budget: int | None,
    behind: bool = False,
    found: Found | None = None,
) -> list[Memory]:
    """Embed the candidates without a vector if they are at most ``budget``
    (else none, when ``behind`` a background embedder, or the newest
    ``budget``); returns those still without one."""
    new = cache.states.unheld(key, emb.dim, cands)
    if not new:
        return []
    # A large set read whole from the store goes to the caller's map (the
    # search's state will hold it), not into the per-record cache.
    into = found if found is not None and len(new) >= BULK else None
    have = cache.known_vectors(emb, new, backend, epoch, into)
    missing = [m for m, v in zip(new, have, strict=True) if v is None]
    if not missing:
        return []
    within = budget is None or len(missing) <= budget
    n = len(missing) if within else 0 if behind else int(budget or 0)
    if n:
        cache.passage_vectors(emb, missing[len(missing) - n :], backend, epoch)
    return missing[: len(missing) - n]


def stored_whole(
    cache: RankCache,
    emb: Embedder,
    key: tuple[Hashable, str],
    cands: Sequence[Memory],
    backend: object,
) -> bytes | None:
    """The stored vectors of all of ``cands`` as one block (`RankCache.stored_block`),
    when they are at least `BULK` and the search's vector state holds none of
    them (a new process's first search); else None."""
    if len(cands) < BULK or len(cache.states.unheld(key, emb.dim, cands)) != len(cands):
        return None
    return cache.stored_block(emb, cands, backend)


def left_over(
    engine: Engine, emb: Embedder, ns: str, missing: list[Memory], vector_only: bool
) -> None:
    """Queue ``missing`` for the background embedder; a vector-only search raises."""
    bg = background_for(engine)
    if bg is not None and bg.embedder.name == emb.name:
        bg.submit(ns, [m.id for m in missing])
    if vector_only:
        retry = bg.retry_after(ns) if bg is not None else 1.0
        raise EmbeddingPending(ns, len(missing), retry)


def cosines_of_known(
    cache: RankCache,
    emb: Embedder,
    cands: Sequence[Memory],
    backend: object,
    epoch: int | None,
    q: array[float],
    large: bool,
) -> tuple[Any, frozenset[str]]:
    """The cosine of each candidate that has a vector, NaN for the others, and
    the ids of the others. ``large``: ``(positions, cosines, ranks)`` as numpy
    arrays for `fastfuse.fuse_sparse` (a rank of 0: none); else a list."""
    vecs = cache.known_vectors(emb, cands, backend, epoch)
    have = [i for i, v in enumerate(vecs) if v is not None]
    pending = frozenset(cands[i].id for i, v in enumerate(vecs) if v is None)
    found = cosines(q, [v for v in vecs if v is not None])
    if not large:
        out = [float("nan")] * len(cands)
        for i, c in zip(have, found, strict=True):
            out[i] = c
        return out, pending
    from .fastfuse import competition_ranks

    np = numpy_or_none()
    n = len(cands)
    at = np.asarray(have, dtype=np.int64)
    cos = np.full(n, np.nan, dtype=np.float64)
    ranks = np.zeros(n, dtype=np.int64)
    if len(at):
        cos[at] = np.asarray(found, dtype=np.float64)
        ranks[at] = competition_ranks(cos[at])
    return (np.arange(n), cos, ranks), pending
