"""The memory backend's extraction queue (`backends.jobs`): a dict under the
backend's lock, so the compare-and-set of a claim is one locked step."""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import replace

from .jobs import DONE, FAILED, QUEUED, RUNNING, Job


class MemoryJobs:
    """Mixed into `MemoryBackend`: its ``_jobs`` by (namespace, tip), in arrival order."""

    _lock: threading.RLock
    _jobs: dict[tuple[str, str], Job]

    def enqueue_jobs(self, ns: str, tips: list[str], now: float) -> int:
        added = 0
        with self._lock:
            for tip in tips:
                if (ns, tip) not in self._jobs:
                    self._jobs[ns, tip] = Job(ns, tip, QUEUED, created_at=now, not_before=now)
                    added += 1
        return added

    def claim_job(self, now: float, lease_until: float, worker: str) -> Job | None:
        with self._lock:
            best: Job | None = None
            for job in self._jobs.values():
                due = (job.state == QUEUED and job.not_before <= now) or (
                    job.state == RUNNING and (job.lease_until or 0.0) < now
                )
                if due and (best is None or job.not_before < best.not_before):
                    best = job
            if best is None:
                return None
            taken = replace(
                best,
                state=RUNNING,
                lease_until=lease_until,
                worker=worker,
                attempts=best.attempts + 1,
            )
            self._jobs[best.namespace, best.tip] = taken
            return taken

    def finish_job(
        self, ns: str, tip: str, worker: str, state: str, error: str | None, not_before: float
    ) -> bool:
        with self._lock:
            job = self._jobs.get((ns, tip))
            if job is None or job.state != RUNNING or job.worker != worker:
                return False
            done = state in (DONE, FAILED)
            self._jobs[ns, tip] = replace(
                job,
                state=state,
                error=error,
                not_before=not_before,
                lease_until=None,
                worker=worker if done else None,
            )
            return True

    def list_jobs(self, ns: str | None, states: Iterable[str]) -> list[Job]:
        want = set(states)
        with self._lock:
            jobs = [
                j
                for j in self._jobs.values()
                if j.state in want and (ns is None or j.namespace == ns)
            ]
        return sorted(jobs, key=lambda j: j.created_at)

    def job_states(self, ns: str, tips: Iterable[str]) -> dict[str, str]:
        with self._lock:
            return {t: j.state for t in tips if (j := self._jobs.get((ns, t))) is not None}

    def _drop_jobs(self, ns: str) -> None:
        with self._lock:
            for key in [k for k in self._jobs if k[0] == ns]:
                del self._jobs[key]
