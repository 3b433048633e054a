"""What a search returns: frozen hits that can explain themselves."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..model import Explanation, Memory


@dataclass(frozen=True)
class HitExplanation:
    """Why a hit is visible (the gate's `Explanation` at its ``via`` anchor)
    and how its score was made (``scoring``, one line). ``vector_pending``: the
    record had no vector yet (past the search's ``max_embed``), so it was
    ranked by keyword alone."""

    visibility: Explanation
    scoring: str
    keyword_rank: int | None = None
    vector_rank: int | None = None
    relevance: float = 0.0
    vector_pending: bool = False
    path: str | None = None
    """For a hit reached along the relation graph (``search(..., hops=N)``): the path."""
    cutoff: str = ""
    """Why the cut-off kept or cut the hit (`retrieval.cutoff`)."""

    def __str__(self) -> str:
        tail = f"\n{self.cutoff}" if self.cutoff else ""
        return f"{self.visibility.reason}\n{self.scoring}{tail}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "visibility": self.visibility.to_dict(),
            "scoring": self.scoring,
            "keyword_rank": self.keyword_rank,
            "vector_rank": self.vector_rank,
            "relevance": self.relevance,
            "vector_pending": self.vector_pending,
            "cutoff": self.cutoff,
        } | ({"path": self.path} if self.path is not None else {})


@dataclass(frozen=True)
class Hit:
    """One search result.

    ``via`` is the anchor that made the record visible (the first anchor of a
    scope chain that sees it). ``parts`` holds the score's ingredients:
    ``keyword`` (BM25 over the gated candidates, 0 when no term matches),
    ``vector`` (cosine, only its rank is used), ``importance`` and
    ``recency`` (both in [0, 1]). ``explanation`` is filled by
    ``search(..., explain=True)``. ``confidence`` (in [0, 1]) is how well
    the record matches in absolute terms, what ``min_score`` and the
    cut-off compare (`retrieval.cutoff`); ``score`` orders the hits.
    """

    memory: Memory
    score: float
    via: str
    parts: dict[str, float] = field(default_factory=dict)
    explanation: HitExplanation | None = None
    confidence: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        """A JSON-friendly dict."""
        d: dict[str, Any] = {
            "memory": self.memory.to_dict(),
            "score": self.score,
            "via": self.via,
            "parts": dict(self.parts),
            "confidence": self.confidence,
        }
        if self.explanation is not None:
            d["explanation"] = self.explanation.to_dict()
        return d


class Hits(list[Hit]):
    """A search's hits, best first; ``cut`` holds the hits the cut-off dropped
    (with ``explain=True``, each explanation's ``cutoff`` says why)."""

    cut: list[Hit]

    def __init__(self, kept: list[Hit] = (), cut: list[Hit] = ()) -> None:  # type: ignore[assignment]
        super().__init__(kept)
        self.cut = list(cut)
