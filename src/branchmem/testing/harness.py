"""What every check of the contract works with: stores opened on fresh
backends from the caller's factory (closed when the check ends), the number of
Hypothesis examples, and "changes nothing" as one comparable value."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from ..backends.base import Backend
from ..errors import NotFound
from ..store import Store

MakeBackend = Callable[[], Backend]
"""Returns a new, empty backend at each call."""
RawState = Callable[[Backend], object]
"""Everything a backend stores, as one comparable value."""


class Stores:
    """Opens the stores of one check; `close` closes them all."""

    def __init__(
        self, make_backend: MakeBackend, raw_state: RawState | None = None, scale: float = 1.0
    ) -> None:
        self._make = make_backend
        self._raw = raw_state
        self._scale = scale
        self._opened: list[Store] = []

    def open(self, **kw: Any) -> Store:
        """A store on a new backend; ``kw`` go to `Store` (``clock=``, ``policy=``)."""
        store = Store(backend=self._make(), **kw)
        self._opened.append(store)
        return store

    def done(self, store: Store) -> None:
        """Close ``store`` now, before the check ends: a check that opens a
        store per case then holds one at a time (a backend on a server may
        cost a schema each)."""
        self._opened.remove(store)
        store.close()

    def examples(self, n: int) -> int:
        """Hypothesis examples for a property written for ``n``, scaled (at least 1)."""
        return max(1, round(n * self._scale))

    def state(self, store: Store, namespaces: Iterable[str], probes: Iterable[str] = ()) -> object:
        """What ``store`` holds in ``namespaces``: through the public API (every
        event, path, memory, retraction, branch and audit line, at every stored
        event and each of ``probes``), and the backend's rows if the caller
        gave ``raw_state``."""
        shown = public_state(store, namespaces, probes)
        if self._raw is None:
            return shown
        return shown, self._raw(store._engine.backend)

    def close(self) -> None:
        opened, self._opened = self._opened, []
        errors = []
        for store in opened:
            try:
                store.close()
            except Exception as exc:  # close them all; report the first failure
                errors.append(exc)
        if errors:
            raise errors[0]


def public_state(store: Store, namespaces: Iterable[str], probes: Iterable[str] = ()) -> object:
    out: dict[str, object] = {}
    for ns in namespaces:
        events = store.events(namespace=ns, limit=100_000)
        seen: dict[str, object] = {}
        for anchor in [*(e.id for e in events), *probes]:
            try:
                seen[anchor] = (
                    [e.id for e in store.path(anchor, ns)],
                    store.memories(at=anchor, namespace=ns),
                    store.memories(at=anchor, namespace=ns, kind="retraction"),
                )
            except NotFound:
                seen[anchor] = "unknown"
        out[ns] = (events, seen, store.branches(namespace=ns), store.audit(ns))
    return out
