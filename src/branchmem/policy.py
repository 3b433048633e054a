"""`Policy`: how records age, half-lives and default TTLs per kind, and the use boost.

The decay and expiry rules it parametrises are described in
`branchmem.ops.lifecycle`; the engine holds one for the store.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .backends.base import LifeRow
from .errors import InvalidInput
from .model import Memory, set_fresh
from .validate import show

HOUR = 3600.0
DAY = 24 * HOUR


def _default_half_lives() -> dict[str, float]:
    return {
        "working": 6 * HOUR,
        "episodic": 30 * DAY,
        "semantic": 365 * DAY,
        "procedural": 365 * DAY,
    }


def _finite(x: Any) -> bool:
    """A real number (not a bool) that converts to a finite float."""
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return False
    try:
        return math.isfinite(x)
    except OverflowError:
        return False


@dataclass(frozen=True)
class Policy:
    """How records age: half-lives and default TTLs per kind (seconds), and the use boost.

    >>> Policy(ttls={"working": 3600}).ttls["working"]
    3600
    """

    half_lives: Mapping[str, float] = field(default_factory=_default_half_lives)
    ttls: Mapping[str, float] = field(default_factory=dict)
    boost_per_use: float = 0.1
    max_boost: float = 2.0

    def __post_init__(self) -> None:
        for name, table in (("half_lives", self.half_lives), ("ttls", self.ttls)):
            if not isinstance(table, Mapping):
                raise InvalidInput(f"Policy.{name} must be a dict of kind -> seconds")
            for kind, secs in table.items():
                if not _finite(secs) or secs <= 0:
                    raise InvalidInput(
                        f"Policy.{name}[{show(kind)}] must be a positive, finite number of "
                        f"seconds, got {show(secs)}"
                    )
        if not _finite(self.max_boost) or not _finite(self.boost_per_use):
            raise InvalidInput("Policy.max_boost and boost_per_use must be finite numbers")
        if not self.max_boost >= 1.0 or self.boost_per_use < 0:
            raise InvalidInput("Policy.max_boost must be >= 1 and boost_per_use >= 0")

    def with_ttl(self, m: Memory) -> Memory:
        """``m`` with its kind's default TTL applied, if it has no ``expires_at``."""
        ttl = self.ttls.get(m.kind)
        if ttl is None or m.expires_at is not None:
            return m
        set_fresh(m, expires_at=m.created_at + ttl)
        return m

    def score(self, m: Memory, now: float, life: LifeRow | None = None) -> float:
        """``importance × decay(age) × boost(uses)``; see the module docstring."""
        uses = life.uses if life is not None else 0
        last = life.last_used if life is not None and life.last_used is not None else 0.0
        age = max(0.0, now - max(m.created_at, last))
        half = self.half_lives.get(m.kind, 365 * DAY)
        boost = min(self.max_boost, 1.0 + self.boost_per_use * uses)
        return float(m.importance * 0.5 ** (age / half) * boost)
