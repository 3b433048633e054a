"""A clock a test moves by hand, for `Store(clock=...)` (minutes, as TTLs count)."""

from __future__ import annotations


class Clock:
    """A clock the test moves by hand (minutes, as TTLs count)."""

    def __init__(self) -> None:
        self.t = 1_700_000_000.0

    def __call__(self) -> float:
        return self.t

    def minutes(self, n: float) -> None:
        self.t += n * 60.0
