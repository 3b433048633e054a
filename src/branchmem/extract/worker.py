"""The worker of the extraction queue: a write never waits for a model.

``add_event(..., extract=True)`` queues the new tip in the store
(`branchmem.ops.jobs`); a `Worker` claims each queued tip once, runs the
extractor on the window there *outside* any transaction (a model may take
seconds), then writes what it proposed and marks the job done in one
transaction. That transaction first checks that the window is still the
one the model read (a purge in between blanked or dropped it: nothing is
written) and that the claim still holds (a claim whose lease lapsed was
taken again by another worker: this one's writes are rolled back). Record
ids come from the proposals, so a job redone after a crash writes nothing
twice. A failing extractor is tried again with a doubling backoff, then
the job is marked failed with the error (`Store.pending` lists it).

Start one in process with `Store.start_worker`, as a thread of ``branchmem
serve --worker``, or as its own process: ``branchmem worker --db ...``.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import uuid
from typing import TYPE_CHECKING

from ..backends.jobs import Job
from ..engine import Engine, engine_of
from ..errors import InvalidInput
from ..model import Event, Memory
from ..ops import jobs as _jobs
from ..validate import show
from .proposal import Extractor, Proposal, checked_proposals
from .writer import extract, window_at

if TYPE_CHECKING:
    from ..api import StoreAPI

log = logging.getLogger("branchmem.extract")


class _Lost(Exception):
    """The claim lapsed and another worker holds the job: roll back."""


class _Waiting(Exception):
    """The tip waits for a parent: there is no path to read yet."""


class _Replay:
    """Gives the writer the proposals the model made, if the window it reads
    now is the one the model read (else none: something was purged)."""

    def __init__(self, seen: list[tuple[str, str]], proposals: list[Proposal]) -> None:
        self.seen = seen
        self.proposals = proposals
        self.changed = False

    def propose(self, window: list[Event], visible: list[Memory]) -> list[Proposal]:
        if [(e.id, e.content) for e in window] != self.seen:
            self.changed = True
            return []
        return self.proposals


class Worker:
    """Extracts at the tips queued in ``store`` with ``extractor`` (default:
    the rules), on a thread once `start` is called, or a job at a time with
    `run_once` / `drain`. ``lease``: seconds a claim holds before another
    worker may take the job again; ``poll``: seconds between looks at an
    empty queue; ``max_attempts`` and ``backoff`` as in `branchmem.ops.jobs`;
    ``nice`` lowers the thread's CPU priority where the system allows.
    ``consolidate_every=N`` runs `Store.consolidate` at the tip of every
    Nth job this worker finishes (its merges and profile, gated as ever).

    >>> from branchmem import Store
    >>> store = Store()
    >>> _ = store.add_event("e1", content="我对花生过敏。", extract=True)
    >>> Worker(store).drain(), [m.content for m in store.memories(at="e1")]
    (1, ['用户对花生过敏'])
    """

    def __init__(
        self,
        store: StoreAPI,
        extractor: Extractor | None = None,
        *,
        window: int = 8,
        lease: float = _jobs.LEASE,
        poll: float = 0.5,
        max_attempts: int = _jobs.MAX_ATTEMPTS,
        backoff: float = _jobs.BACKOFF,
        name: str | None = None,
        nice: int = 10,
        consolidate_every: int | None = None,
    ) -> None:
        if extractor is None:
            from .rules import RuleExtractor

            extractor = RuleExtractor()
        elif not callable(getattr(extractor, "propose", None)):
            raise InvalidInput(
                f"extractor must have propose(window, visible), got {type(extractor).__name__}"
            )
        for what, v in (("lease", lease), ("poll", poll), ("backoff", backoff)):
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not v > 0:
                raise InvalidInput(f"{what} must be a number of seconds > 0, got {show(v)}")
        if isinstance(max_attempts, bool) or not isinstance(max_attempts, int) or max_attempts < 1:
            raise InvalidInput(f"max_attempts must be an integer >= 1, got {show(max_attempts)}")
        self.store = store
        self.extractor = extractor
        self.window = window
        self.lease = float(lease)
        self.poll = float(poll)
        if consolidate_every is not None and (
            isinstance(consolidate_every, bool)
            or not isinstance(consolidate_every, int)
            or consolidate_every < 1
        ):
            raise InvalidInput(
                f"consolidate_every must be an integer >= 1, got {show(consolidate_every)}"
            )
        self.consolidate_every = consolidate_every
        self.consolidations = 0  # consolidations this worker ran
        self.max_attempts = max_attempts
        self.backoff = float(backoff)
        self.nice = nice
        self.name = name or f"{os.getpid()}-{uuid.uuid4().hex[:12]}"
        self.done = 0  # jobs this worker finished
        self.failures = 0  # extractor failures (each retried or recorded)
        if not isinstance(getattr(store, "_engine", None), Engine):
            raise InvalidInput("a worker runs beside the store: pass a Store, not a client")
        self._engine = engine_of(store)  # type: ignore[arg-type]
        _jobs.queue(self._engine)  # refuses a backend without a queue, now
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> Worker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------ one job
    def run_once(self) -> bool:
        """Claim one due job and do it; False if none was due."""
        job = _jobs.claim(self._engine, self.name, self.lease)
        if job is None:
            return False
        self.run(job)
        return True

    def drain(self, limit: int | None = None) -> int:
        """Do due jobs until none is left (or ``limit`` of them); how many."""
        n = 0
        while (limit is None or n < limit) and not self._stop.is_set() and self.run_once():
            n += 1
        return n

    def run(self, job: Job) -> None:
        """Do one claimed job (see the module for what is checked)."""
        ns, tip = job.namespace, job.tip
        try:
            events, visible = window_at(self.store, tip, ns, self.window)
            if not events:  # its path is not whole yet: tried again after a backoff
                raise _Waiting(f"event {tip!r} waits for a parent that has not arrived")
            raw = self.extractor.propose(events, visible)
            replay = _Replay(
                [(e.id, e.content) for e in events], checked_proposals(raw, self.extractor)
            )
            with self._engine.backend.transaction():
                extract(self.store, tip, extractor=replay, window=self.window, namespace=ns)
                if not _jobs.done(self._engine, job):
                    raise _Lost(tip)
        except _Lost:
            return
        except Exception as exc:  # the model failed (or the tip is gone): back off
            self.failures += 1
            log.warning("extraction at %r failed (attempt %d): %s", tip, job.attempts, exc)
            _jobs.failed(
                self._engine,
                job,
                f"{type(exc).__name__}: {exc}",
                max_attempts=self.max_attempts,
                backoff=self.backoff,
            )
            return
        self.done += 1
        if replay.changed:
            log.info("extraction at %r wrote nothing: its window changed (a purge)", tip)
        every = self.consolidate_every
        if every is not None and self.done % every == 0:
            try:
                self.store.consolidate(at=tip, namespace=ns)  # type: ignore[attr-defined]
                self.consolidations += 1
            except Exception as exc:  # (the tip purged meanwhile): the next one will do
                log.warning("consolidation at %r failed: %s", tip, exc)

    # ------------------------------------------------------------ thread
    def start(self) -> Worker:
        """Run on a daemon thread until `close`; returns self."""
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._loop, name="branchmem-extract", daemon=True
            )
            self._thread.start()
        return self

    def running(self) -> bool:
        """Is the thread running?"""
        return self._thread is not None and self._thread.is_alive()

    def join(self, timeout: float | None = None) -> None:
        """Wait up to ``timeout`` seconds for the thread to end."""
        if self._thread is not None:
            self._thread.join(timeout)

    def close(self, timeout: float = 5.0) -> bool:
        """Stop taking jobs and wait up to ``timeout`` seconds for the one in
        hand; True if the thread ended (a job cut short is taken again once
        its lease lapses)."""
        self._stop.set()
        t = self._thread
        if t is not None and t is not threading.current_thread():
            t.join(timeout)
            return not t.is_alive()
        return True

    def _loop(self) -> None:
        if self.nice and hasattr(os, "setpriority"):
            with contextlib.suppress(OSError):
                os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), self.nice)
        while not self._stop.is_set():
            try:
                took = self.run_once()
            except Exception as exc:  # the store failed: look again later
                log.warning("extraction worker: %s", exc)
                took = False
            if not took:
                self._stop.wait(self.poll)
