"""Unit vectors, cosines and the text digests that name them; numpy when installed.

The lowest layer of ranking: `state`, `ann`, `cache` and the fusion build on
these, and nothing here knows of a store.
"""

from __future__ import annotations

import hashlib
import math
from array import array
from collections.abc import Sequence
from operator import mul
from typing import Any

from ..errors import EmbeddingError
from .embed import Embedder

TermStats = tuple[dict[str, int], int]
"""A record's term frequencies and its length in tokens."""

ROUND = 6
"""Places cosines are rounded to (see `cosines`)."""


_BLANK = hashlib.blake2b(digest_size=12)


def digest(text: str) -> str:
    """Names the text a stored vector was made from: its BLAKE2b of 12 bytes, in hex.

    >>> text = "用户对花生过敏"
    >>> digest(text) == hashlib.blake2b(text.encode(), digest_size=12).hexdigest()
    True
    """
    # A copy of a blank hash costs a third less than making one: the
    # constructor's keyword arguments are parsed on every call, and a large
    # state's first search hashes 100,000 texts.
    h = _BLANK.copy()
    h.update(text.encode("utf-8"))
    return h.hexdigest()


def unit_vector(v: Sequence[float], embedder: Embedder) -> array[float]:
    """``v`` scaled to unit length as float32, after checking its dimension."""
    if len(v) != embedder.dim:
        raise EmbeddingError(
            f"embedder {embedder.name!r} returned a vector of length {len(v)}, "
            f"but says its dim is {embedder.dim}"
        )
    norm = math.sqrt(sum(float(x) * float(x) for x in v))
    if not math.isfinite(norm):
        raise EmbeddingError(f"embedder {embedder.name!r} returned a non-finite vector")
    return array("f", [float(x) / norm for x in v] if norm > 0 else [float(x) for x in v])


BATCH_MIN = 16
"""Vectors from which `unit_vectors` normalises with numpy (when installed)."""


def unit_vectors(vs: Sequence[Sequence[float]], embedder: Embedder) -> list[array[float]]:
    """`unit_vector` of each, as one float64 matrix when numpy is installed:
    the same vectors to within float32 rounding (the norm is summed in
    another order), so cosines rounded to `ROUND` places agree."""
    np = numpy_or_none() if len(vs) >= BATCH_MIN else None
    if np is None or any(len(v) != embedder.dim for v in vs):
        return [unit_vector(v, embedder) for v in vs]  # (the error names the bad one)
    mat = np.asarray(vs, dtype=np.float64)
    norms = np.sqrt(np.einsum("ij,ij->i", mat, mat))
    if not np.isfinite(norms).all():
        raise EmbeddingError(f"embedder {embedder.name!r} returned a non-finite vector")
    norms[norms == 0] = 1.0
    unit = (mat / norms[:, None]).astype(np.float32)
    out = []
    for row in unit:
        a = array("f")
        a.frombytes(row.tobytes())
        out.append(a)
    return out


def dot_python(q: array[float], vecs: Sequence[array[float]]) -> list[float]:
    return [round(sum(map(mul, q, v)), ROUND) for v in vecs]


_numpy: Any = None


def numpy_or_none() -> Any:
    """numpy if installed (imported on first need, so the core still imports
    nothing outside the standard library), else None."""
    global _numpy
    if _numpy is None:
        try:
            import numpy
        except ImportError:
            _numpy = False
        else:
            _numpy = numpy
    return _numpy or None


def cosines(q: array[float], vecs: Sequence[array[float]]) -> list[float]:
    """Cosine of a unit query vector with each unit vector, rounded to `ROUND` places.

    Rounding keeps float noise (numpy or not, one machine or another) from
    reordering two records: equal vectors tie exactly, and write order decides.
    Uses numpy for large sets when it is installed.
    """
    np = numpy_or_none() if len(vecs) >= 64 else None
    if np is None:
        return dot_python(q, vecs)
    mat = np.frombuffer(b"".join(v.tobytes() for v in vecs), dtype=np.float32)
    mat = mat.reshape(len(vecs), len(q))
    prod = mat @ np.frombuffer(q.tobytes(), dtype=np.float32)
    scores: list[float] = np.round(prod.astype(np.float64), ROUND).tolist()
    return scores
