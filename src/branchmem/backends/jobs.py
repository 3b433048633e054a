"""The extraction queue kept in the store: one row per (namespace, tip).

A job asks for an extraction at one event (the tip a write made). The rows
live beside the events, so the queue survives a crash of the writer and is
shared by every process that opens the store; `JobQueue` is the optional
protocol a backend offers for it (found with ``isinstance``; memory, SQLite
and PostgreSQL have it). A worker takes a job with `JobQueue.claim_job`, a
compare-and-set in one statement, so two workers never hold the same job; a
claim carries a lease, and a job whose worker died is taken again once the
lease has passed. The rules (what is retried, when) are `branchmem.ops.jobs`'s.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any, Protocol, runtime_checkable

QUEUED = "queued"
RUNNING = "running"
DONE = "done"
FAILED = "failed"
STATES = (QUEUED, RUNNING, DONE, FAILED)


@dataclass(frozen=True, slots=True)
class Job:
    """One queued extraction: at event ``tip`` of ``namespace``.

    ``state`` is one of `STATES`; ``attempts`` counts the claims so far;
    ``not_before`` is when it may be taken (a retry waits); ``lease_until``
    when a running job's claim lapses; ``worker`` names the claim holder;
    ``error`` the last failure's message."""

    namespace: str
    tip: str
    state: str
    attempts: int = 0
    not_before: float = 0.0
    lease_until: float | None = None
    worker: str | None = None
    error: str | None = None
    created_at: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@runtime_checkable
class JobQueue(Protocol):
    """Optional (found with ``isinstance``): the extraction queue's rows.
    `Backend.drop_namespace` deletes a namespace's jobs with it."""

    def enqueue_jobs(self, ns: str, tips: list[str], now: float) -> int:
        """Queue a job per tip (inside `transaction`, or on its own); a tip
        already queued, running, done or failed keeps its row. How many were new."""
        ...

    def claim_job(self, now: float, lease_until: float, worker: str) -> Job | None:
        """Take one job, in one statement (never inside a transaction of the
        caller): a queued one due by ``now`` (oldest first), or a running one
        whose lease ended before ``now``. It is marked running, held by
        ``worker`` until ``lease_until``, its ``attempts`` raised; None if
        there is none."""
        ...

    def finish_job(
        self, ns: str, tip: str, worker: str, state: str, error: str | None, not_before: float
    ) -> bool:
        """Set the job's ``state`` (done, failed, or queued again until
        ``not_before``) only while ``worker`` still holds it; whether it did."""
        ...

    def list_jobs(self, ns: str | None, states: Iterable[str]) -> list[Job]:
        """Jobs in ``states`` (of ``ns``, or of every namespace), oldest first."""
        ...

    def job_states(self, ns: str, tips: Iterable[str]) -> dict[str, str]:
        """The state of each of ``tips`` that has a job."""
        ...
