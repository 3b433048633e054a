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

    def __str__(self) -> str:
        return f"{self.visibility.reason}\n{self.scoring}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "visibility": self.visibility.to_dict(),
            "scoring": self.scoring,
            "keyword_rank": self.keyword_rank,
            "vector_rank": self.vector_rank,
            "relevance": self.relevance,
            "vector_pending": self.vector_pending,
        } | ({"path": self.path} if self.path is not None else {})


@dataclass(frozen=True)
class Hit:
    """One search result.

    ``via`` is the anchor that made the record visible (the first anchor of a
    scope chain that sees it). ``parts`` holds the score's ingredients:
    ``keyword`` (BM25 over the gated candidates, 0 when no term matches),
    ``vector`` (cosine, only its rank is used), ``importance`` and
    ``recency`` (both in [0, 1]). ``explanation`` is filled by
    ``search(..., explain=True)``.
    """

    memory: Memory
    score: float
    via: str
    parts: dict[str, float] = field(default_factory=dict)
    explanation: HitExplanation | None = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-friendly dict."""
        d: dict[str, Any] = {
            "memory": self.memory.to_dict(),
            "score": self.score,
            "via": self.via,
            "parts": dict(self.parts),
        }
        if self.explanation is not None:
            d["explanation"] = self.explanation.to_dict()
        return d
