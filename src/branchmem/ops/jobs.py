"""The extraction queue's rules: what is queued, who takes it, what a failure does.

The rows are the backend's (`backends.jobs`); this module decides. A write
with ``extract=True`` queues its new tip in the write's own transaction (so
the job and the event land together). A worker claims a due job with a
lease of `LEASE` seconds; a failure is tried again after a backoff that
doubles (`BACKOFF`, 2x, ...) until `MAX_ATTEMPTS` claims, then the job is
marked failed with the last error. Times are wall-clock seconds (the
engine's clock may be a test's): leases are compared across processes.
"""

from __future__ import annotations

import time
from collections.abc import Iterable

from ..backends.jobs import DONE, FAILED, QUEUED, RUNNING, Job, JobQueue
from ..engine import Engine
from ..errors import InvalidInput
from ..gate import resolve_event
from ..model import Event
from ..validate import check_namespace, show

LEASE = 300.0
"""Seconds a claim holds a job: a worker that died releases it after this."""

MAX_ATTEMPTS = 5
"""Claims of one job before it is marked failed."""

BACKOFF = 1.0
"""Seconds before the first retry of a failed job (each next one waits twice as long)."""

WAITING = (QUEUED, RUNNING, FAILED)
"""The states `pending` lists (done jobs are kept, so a tip is extracted once)."""


def queue(engine: Engine) -> JobQueue:
    """The backend's queue, or `InvalidInput` saying that it has none."""
    b = engine.backend
    if not isinstance(b, JobQueue):
        raise InvalidInput(
            f"this store's backend ({type(b).__name__}) keeps no extraction queue; "
            "use a memory, SQLite or PostgreSQL store"
        )
    return b


def enqueue(engine: Engine, ns: str, tips: Iterable[str]) -> int:
    """Queue an extraction at each of ``tips`` (inside the caller's
    transaction if one is open); how many were new."""
    want = list(dict.fromkeys(tips))
    if not want:
        return 0
    return queue(engine).enqueue_jobs(ns, want, time.time())


def claim(engine: Engine, worker: str, lease: float = LEASE) -> Job | None:
    """Take the next due job for ``worker`` (or None)."""
    now = time.time()
    return queue(engine).claim_job(now, now + lease, worker)


def done(engine: Engine, job: Job) -> bool:
    """Mark ``job`` done; False if its claim had lapsed and another took it."""
    assert job.worker is not None
    return queue(engine).finish_job(job.namespace, job.tip, job.worker, DONE, None, time.time())


def failed(
    engine: Engine,
    job: Job,
    error: str,
    *,
    max_attempts: int = MAX_ATTEMPTS,
    backoff: float = BACKOFF,
) -> bool:
    """Record a failure of ``job``: queued again after a backoff, or failed
    for good after ``max_attempts`` claims."""
    assert job.worker is not None
    now = time.time()
    if job.attempts >= max_attempts:
        state, later = FAILED, now
    else:
        state, later = QUEUED, now + backoff * 2 ** (job.attempts - 1)
    return queue(engine).finish_job(job.namespace, job.tip, job.worker, state, error, later)


def pending(engine: Engine, namespace: str | None) -> list[Job]:
    """`Store.pending`: jobs queued, running or failed, oldest first."""
    ns = None if namespace is None else check_namespace(namespace)
    return queue(engine).list_jobs(ns, WAITING)


def wait_for(engine: Engine, ns: str, at: str, timeout: float) -> bool:
    """Wait up to ``timeout`` seconds until the job at ``at``'s event (a branch
    names its head) is done or failed; True if none is left waiting (none
    was queued, or it ended), False on timeout."""
    timeout = check_wait(timeout)
    q = queue(engine)
    with engine.backend.reading():
        tip = resolve_event(engine, ns, at)
    end = time.monotonic() + timeout
    delay = 0.01
    while True:
        state = q.job_states(ns, [tip]).get(tip)
        if state not in (QUEUED, RUNNING):
            return True
        if time.monotonic() >= end:
            return False
        time.sleep(min(delay, max(0.0, end - time.monotonic())))
        delay = min(delay * 2, 0.2)


def tips_of(events: Iterable[Event]) -> dict[str, list[str]]:
    """The new tips a batch makes, by namespace: its events that no other
    event of the batch names as a parent (a chain queues its last event)."""
    evs = list(events)
    parents = {(e.namespace, p) for e in evs for p in e.parents}
    out: dict[str, list[str]] = {}
    for e in evs:
        if (e.namespace, e.id) not in parents:
            out.setdefault(e.namespace, []).append(e.id)
    return out


def check_extract(extract: object) -> bool:
    if not isinstance(extract, bool):
        raise InvalidInput(f"extract must be True or False, got {show(extract)}")
    return extract


def wait_at(engine: Engine, namespace: str, at: object, wait: float | None) -> None:
    """A read's ``wait=``: wait up to ``wait`` seconds in all for the
    extraction queued at each anchor of ``at`` (one or a chain), then let the
    read take what is there. An ``at`` of another type is left to the read."""
    if wait is None or at is None:
        return
    check_wait(wait)
    anchors = [at] if isinstance(at, str) else list(at) if isinstance(at, (list, tuple)) else []
    ns = check_namespace(namespace)
    end = time.monotonic() + wait
    for a in anchors:
        wait_for(engine, ns, a, max(0.0, end - time.monotonic()))


def check_wait(wait: object) -> float:
    if isinstance(wait, bool) or not isinstance(wait, (int, float)) or not 0 <= wait <= 3600:
        raise InvalidInput(f"wait must be a number of seconds from 0 to 3600, got {show(wait)}")
    return float(wait)
