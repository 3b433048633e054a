"""The PostgreSQL backend's extraction queue (`backends.jobs`): the ``jobs`` table.

One queue for the whole store: every row sits under the store-wide row key
(``ns = ''``, as ``counters`` does) and names its namespace in ``space``, so
that each statement, a worker's claim across namespaces included, stays on
one key (one shard of a distributed PostgreSQL). A claim is one ``UPDATE
... RETURNING`` on its own (autocommitted): the row it takes is chosen ``FOR
UPDATE SKIP LOCKED`` and checked again as it is updated, so workers in any
number of processes never take the same job and never wait on one another."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..jobs import DONE, FAILED, QUEUED, RUNNING, Job
from .conn import STORE_ROW
from .rows import PgRows

_COLS = "space, tip, state, attempts, not_before, lease_until, worker, error, created_at"
_DUE = (
    "((state = %(queued)s AND not_before <= %(now)s) "
    "OR (state = %(running)s AND lease_until < %(now)s))"
)
CLAIM = (
    "UPDATE jobs SET state = %(running)s, lease_until = %(lease)s, worker = %(worker)s, "
    "attempts = attempts + 1 WHERE ns = %(ns)s AND (space, tip) = (SELECT space, tip "
    f"FROM jobs WHERE ns = %(ns)s AND {_DUE} ORDER BY not_before LIMIT 1 "
    f"FOR UPDATE SKIP LOCKED) AND {_DUE} RETURNING {_COLS}"
)


def _job(row: tuple[Any, ...]) -> Job:
    space, tip, state, attempts, not_before, lease, worker, error, created = row
    return Job(space, tip, state, int(attempts), float(not_before), lease, worker, error,
               float(created))  # fmt: skip


class PgJobs(PgRows):
    """Mixed into `PostgresBackend`."""

    def enqueue_jobs(self, ns: str, tips: list[str], now: float) -> int:
        if not tips:
            return 0
        rows = self._q(
            "INSERT INTO jobs (ns, space, tip, state, attempts, not_before, created_at) "
            "SELECT %(ns)s, %(space)s, t, %(queued)s, 0, %(now)s, %(now)s "
            "FROM unnest(%(tips)s::text[]) t ON CONFLICT (ns, space, tip) DO NOTHING RETURNING 1",
            {"ns": STORE_ROW, "space": ns, "tips": list(dict.fromkeys(tips)), "queued": QUEUED,
             "now": now},
        )  # fmt: skip
        return len(rows)

    def claim_job(self, now: float, lease_until: float, worker: str) -> Job | None:
        params = {"ns": STORE_ROW, "queued": QUEUED, "running": RUNNING, "now": now,
                  "lease": lease_until, "worker": worker}  # fmt: skip
        rows = self._q(CLAIM, params)
        return _job(rows[0]) if rows else None

    def finish_job(
        self, ns: str, tip: str, worker: str, state: str, error: str | None, not_before: float
    ) -> bool:
        kept = worker if state in (DONE, FAILED) else None
        rows = self._q(
            "UPDATE jobs SET state = %(state)s, error = %(error)s, not_before = %(nb)s, "
            "lease_until = NULL, worker = %(kept)s WHERE ns = %(ns)s AND space = %(space)s "
            "AND tip = %(tip)s AND state = %(running)s AND worker = %(worker)s RETURNING 1",
            {"ns": STORE_ROW, "space": ns, "tip": tip, "state": state, "error": error,
             "nb": not_before, "kept": kept, "running": RUNNING, "worker": worker},
        )  # fmt: skip
        return bool(rows)

    def list_jobs(self, ns: str | None, states: Iterable[str]) -> list[Job]:
        sql = f"SELECT {_COLS} FROM jobs WHERE ns = %(ns)s AND state = ANY(%(states)s::text[])"
        if ns is not None:
            sql += " AND space = %(space)s"
        rows = self._q(
            sql + " ORDER BY created_at", {"ns": STORE_ROW, "space": ns, "states": list(states)}
        )
        return [_job(r) for r in rows]

    def job_states(self, ns: str, tips: Iterable[str]) -> dict[str, str]:
        rows = self._q(
            "SELECT tip, state FROM jobs WHERE ns = %(ns)s AND space = %(space)s "
            "AND tip = ANY(%(tips)s::text[])",
            {"ns": STORE_ROW, "space": ns, "tips": list(tips)},
        )
        return {str(t): str(s) for t, s in rows}

    def _drop_jobs(self, ns: str) -> None:
        self._q(
            "DELETE FROM jobs WHERE ns = %(ns)s AND space = %(space)s",
            {"ns": STORE_ROW, "space": ns},
            defer=True,
        )
