"""Where served store calls run: a bounded pool of worker threads, fair between
namespaces, and the store connections they use.

`FairPool` runs at most ``workers`` calls at once. Calls wait in one queue
per namespace, and a free worker takes the next call of the next namespace
in turn, never running more than ``share`` calls of one namespace at once
(half the workers by default): however many slow calls one namespace sends,
the others always find a worker. A waiting call holds no thread (the route
awaits a future), and one whose client went away before it started never runs.

`InFlight` counts each key's requests in the pool (waiting or running), for
the per-key limit.

`Connections` hands each worker a `Store`: one shared by every worker (the
in-memory backend, whose lock serializes each read or write, or PostgreSQL,
whose connection pool runs them at once), or, for an SQLite file, one
connection of its own per worker, so that reads run side by side (WAL) and
writes queue on the file's write lock. A namespace goes back to the
connection it used last when that one is free, so its caches stay warm.
"""

from __future__ import annotations

import threading
from collections import OrderedDict, deque
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, TypeVar

from ..store import Store
from .errors import ShuttingDown

T = TypeVar("T")


class FairPool:
    """At most ``workers`` calls at once, at most ``share`` of one namespace."""

    def __init__(self, workers: int, share: int | None = None) -> None:
        if workers < 1:
            raise ValueError("a pool needs at least one worker")
        self.workers = workers
        self.share = max(1, min(workers, share if share is not None else workers // 2))
        self._cond = threading.Condition()
        self._queues: dict[str, deque[tuple[Future[Any], Callable[[], Any]]]] = {}
        self._ready: deque[str] = deque()  # namespaces with a call to start, in turn
        self._is_ready: set[str] = set()
        self._running: dict[str, int] = {}
        self._threads: list[threading.Thread] = []
        self._idle = 0
        self._closed = False

    def submit(self, namespace: str, fn: Callable[[], T]) -> Future[T]:
        """Queue ``fn`` as a call of ``namespace``; its future holds the result."""
        fut: Future[T] = Future()
        with self._cond:
            if self._closed:
                raise ShuttingDown()
            self._queues.setdefault(namespace, deque()).append((fut, fn))
            self._mark(namespace)
            if not self._idle and len(self._threads) < self.workers:
                t = threading.Thread(target=self._work, name="branchmem-call", daemon=True)
                self._threads.append(t)
                t.start()
            self._cond.notify()
        return fut

    def running(self, namespace: str) -> int:
        with self._cond:
            return self._running.get(namespace, 0)

    def close(self, timeout: float = 10.0) -> None:
        """Cancel what waits, let running calls finish (up to ``timeout`` s)."""
        with self._cond:
            self._closed = True
            for q in self._queues.values():
                for fut, _ in q:
                    fut.cancel()
            self._queues.clear()
            self._ready.clear()
            self._is_ready.clear()
            self._cond.notify_all()
            threads = list(self._threads)
        for t in threads:
            if t is not threading.current_thread():
                t.join(timeout)

    def _mark(self, ns: str) -> None:
        """Put ``ns`` in turn if it has a call waiting and room under its share."""
        if (
            ns in self._queues
            and ns not in self._is_ready
            and self._running.get(ns, 0) < self.share
        ):
            self._ready.append(ns)
            self._is_ready.add(ns)

    def _work(self) -> None:
        while True:
            with self._cond:
                while not self._ready and not self._closed:
                    self._idle += 1
                    self._cond.wait()
                    self._idle -= 1
                if self._closed:
                    return
                ns = self._ready.popleft()
                self._is_ready.discard(ns)
                q = self._queues[ns]
                fut, fn = q.popleft()
                if not q:
                    del self._queues[ns]
                self._running[ns] = self._running.get(ns, 0) + 1
                self._mark(ns)
            try:
                if fut.set_running_or_notify_cancel():
                    try:
                        fut.set_result(fn())
                    except BaseException as exc:  # handed to the caller, whatever it is
                        fut.set_exception(exc)
            finally:
                with self._cond:
                    left = self._running[ns] - 1
                    if left:
                        self._running[ns] = left
                    else:
                        del self._running[ns]
                    self._mark(ns)
                    self._cond.notify()


class InFlight:
    """Requests in the pool per key, capped at ``limit``."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._lock = threading.Lock()
        self._count: dict[str, int] = {}

    def enter(self, key: str) -> bool:
        """Count one more request of ``key``; False (and nothing counted) at the limit."""
        with self._lock:
            n = self._count.get(key, 0)
            if n >= self.limit:
                return False
            self._count[key] = n + 1
            return True

    def leave(self, key: str) -> None:
        with self._lock:
            n = self._count.get(key, 0) - 1
            if n > 0:
                self._count[key] = n
            else:
                self._count.pop(key, None)

    def now(self, key: str) -> int:
        with self._lock:
            return self._count.get(key, 0)


HOMES = 10_000
"""Namespaces whose last connection is remembered (the least recent are forgotten)."""


class Connections:
    """The stores the workers call: ``shared`` alone, or one of ``own`` per call."""

    def __init__(self, shared: Store, own: list[Store] | None = None) -> None:
        self.shared = shared
        self.own = list(own or [])
        self._lock = threading.Lock()
        self._free = list(range(len(self.own)))
        self._home: OrderedDict[str, int] = OrderedDict()

    def checkout(self, namespace: str) -> tuple[Store, int]:
        """A store for one call of ``namespace`` and the token to give back."""
        if not self.own:
            return self.shared, -1
        with self._lock:
            if not self._free:  # more callers than connections: share the first
                return self.own[0], -1
            home = self._home.pop(namespace, None)
            i = home if home is not None and home in self._free else self._free[-1]
            self._free.remove(i)
            self._home[namespace] = i
            while len(self._home) > HOMES:
                self._home.popitem(last=False)
            return self.own[i], i

    def checkin(self, token: int) -> None:
        if token >= 0:
            with self._lock:
                self._free.append(token)

    def close(self) -> None:
        for s in self.own:
            s.close()
        self.own = []
