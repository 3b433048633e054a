"""What other connections committed to some namespaces (`OtherWriters` on
PostgreSQL): the namespaces' write counters, less this object's own raises.

Every write transaction raises the write counter of each namespace it
locked, as it commits (`conn.WROTE`), and it holds that namespace's lock from
its first statement there: so the value its raise gives is known before the
commit is sent, one past the counter read with the lock (`conn.TOPS`). Of
the namespaces someone watches, `OwnRaises` keeps those values, from just
before the commit goes out (a look at the counters in between may already
see it) until it fails (then the value was not ours: another writer may give
it next). What others committed up to a counter value ``S`` is ``S`` less our
own values up to ``S``: exact whenever the look was made, since no value is
ours until we hold the lock and no one else can give it while we do.

A failed commit that still reached the server (the connection broke after it)
is counted as another's: one needless rebuild of what a caller keeps, never
a change missed. Our confirmed values up to a counter some look has seen are
folded into a count, so what is kept stays small; a look that read the
counters before that (another thread's, slower) is asked again.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Iterable, Mapping

FOLD_AT = 64
"""Own values kept per namespace before a commit folds the confirmed ones."""
TRIES = 3


class _Kept:
    __slots__ = ("below", "floor", "mine", "pending")

    def __init__(self) -> None:
        self.floor = 0  # every own value up to it is counted in `below`
        self.below = 0
        # Own values above `floor`, and those whose commit has not answered
        # yet, with how many commits gave each: after a rollback whose answer
        # is not back, another thread's commit may be given the same value.
        self.mine: Counter[int] = Counter()
        self.pending: Counter[int] = Counter()

    def fold(self, upto: int) -> None:
        """Count the own values up to ``upto`` (a committed counter value), but
        for the pending ones and those above them."""
        if self.pending:
            upto = min(upto, min(self.pending) - 1)
        if upto > self.floor:
            for v in [v for v in self.mine if v <= upto]:
                self.below += self.mine.pop(v)
            self.floor = upto

    def drop(self, into: Counter[int], v: int) -> None:
        into[v] -= 1
        if into[v] <= 0:
            del into[v]


class OwnRaises:
    """This connection object's raises of the watched namespaces' counters."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._kept: dict[str, _Kept] = {}
        self._fresh = 0  # the answer when the counters cannot be told apart

    def watched(self, ns: str) -> bool:
        return ns in self._kept

    def begin(self, raised: Mapping[str, int]) -> list[tuple[str, int]]:
        """A commit that gives these counter values (by namespace) goes out
        now; what is returned goes to `end`."""
        if not self._kept:
            return []
        with self._lock:
            out = [(ns, v) for ns, v in raised.items() if ns in self._kept]
            for ns, v in out:
                kept = self._kept[ns]
                kept.mine[v] += 1
                kept.pending[v] += 1
            return out

    def end(self, raised: list[tuple[str, int]], committed: bool) -> None:
        """The commit of `begin` answered: ``committed``, or failed."""
        if not raised:
            return
        with self._lock:
            for ns, v in raised:
                kept = self._kept[ns]
                kept.drop(kept.pending, v)
                if not committed:
                    kept.drop(kept.mine, v)
                elif len(kept.mine) > FOLD_AT:
                    kept.fold(v)

    def restart(self, namespaces: Iterable[str]) -> None:
        """These namespaces were purged whole: their counters are gone and count
        again from zero, so what was kept of them is forgotten. (The purge raised
        the erasure counter too: every cache drops what it kept of them.)"""
        if not namespaces:
            return
        with self._lock:
            for ns in namespaces:
                self._kept.pop(ns, None)

    def others(self, ns: str, stored: int) -> int | None:
        """What others committed to ``ns`` up to its counter ``stored`` (read
        after `watch`); ``None`` for a read older than what is folded: read again."""
        with self._lock:
            kept = self._kept[ns]
            if stored < kept.floor:
                return None
            mine = kept.below + sum(n for v, n in kept.mine.items() if v <= stored)
            kept.fold(stored)
            return stored - mine

    def version(self, namespaces: Iterable[str], read: Callable[[list[str]], list[int]]) -> int:
        """`OtherWriters.others_version` for ``namespaces``, their counters
        read by ``read`` (one round trip): the sum of what others committed
        to each, which only grows, and grows with each commit of another."""
        nss = sorted(set(namespaces))
        with self._lock:
            for ns in nss:
                self._kept.setdefault(ns, _Kept())  # counted from before the read
        for _ in range(TRIES):
            seen = [self.others(ns, s) for ns, s in zip(nss, read(nss), strict=True)]
            if None not in seen:
                return sum(s for s in seen if s is not None)
        with self._lock:  # (never seen here: a new number, read again by the caller)
            self._fresh -= 1
            return self._fresh
