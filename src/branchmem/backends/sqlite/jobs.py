"""The SQLite backend's extraction queue (`backends.jobs`): the ``jobs`` table.

A claim is one ``UPDATE ... RETURNING`` in a write transaction: SQLite admits
one writer at a time, so no two connections (of this process or another)
take the same row."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ..jobs import DONE, FAILED, QUEUED, RUNNING, Job
from .parts import SQLiteParts, chunks, marks

_COLS = "ns, tip, state, attempts, not_before, lease_until, worker, error, created_at"

CLAIM = (
    "UPDATE jobs SET state=?, lease_until=?, worker=?, attempts=attempts+1 "
    "WHERE rowid = (SELECT rowid FROM jobs WHERE (state=? AND not_before<=?) "
    "OR (state=? AND lease_until<?) ORDER BY not_before LIMIT 1) "
    f"RETURNING {_COLS}"
)


class SQLiteJobs(SQLiteParts):
    """Mixed into `SQLiteBackend`."""

    if TYPE_CHECKING:  # the backend's

        def transaction(self) -> Any: ...

        def reading(self) -> Any: ...

    def _no_queue(self) -> bool:
        """A store older than version 11 opened read-only has no ``jobs`` table
        (`schema.READS_AS_IS`): nothing is queued in it."""
        if not getattr(self, "readonly", False):
            return False
        sql = "SELECT 1 FROM sqlite_master WHERE type='table' AND name='jobs'"
        return self._db.execute(sql).fetchone() is None

    def _job(self, row: tuple[Any, ...], name: str) -> Job:
        _, tip, state, attempts, not_before, lease, worker, error, created = row
        return Job(name, tip, state, int(attempts), float(not_before), lease, worker, error,
                   float(created))  # fmt: skip

    def enqueue_jobs(self, ns: str, tips: list[str], now: float) -> int:
        with self.transaction():
            nid = self._wns(ns)
            before = self._db.total_changes
            self._db.executemany(
                "INSERT OR IGNORE INTO jobs (ns, tip, state, attempts, not_before, created_at) "
                "VALUES (?,?,?,0,?,?)",
                [(nid, t, QUEUED, now, now) for t in tips],
            )
            return self._db.total_changes - before

    def claim_job(self, now: float, lease_until: float, worker: str) -> Job | None:
        with self.transaction():
            row = self._db.execute(
                CLAIM, (RUNNING, lease_until, worker, QUEUED, now, RUNNING, now)
            ).fetchone()
            if row is None:
                return None
            name = self._db.execute("SELECT name FROM namespaces WHERE id=?", (row[0],)).fetchone()
            return self._job(row, str(name[0]))

    def finish_job(
        self, ns: str, tip: str, worker: str, state: str, error: str | None, not_before: float
    ) -> bool:
        with self.transaction():
            nid = self._ns(ns)
            if nid is None:
                return False
            kept = worker if state in (DONE, FAILED) else None
            cur = self._db.execute(
                "UPDATE jobs SET state=?, error=?, not_before=?, lease_until=NULL, worker=? "
                "WHERE ns=? AND tip=? AND state=? AND worker=?",
                (state, error, not_before, kept, nid, tip, RUNNING, worker),
            )
            return cur.rowcount == 1

    def list_jobs(self, ns: str | None, states: Iterable[str]) -> list[Job]:
        want = list(states)
        if self._no_queue():
            return []
        with self.reading():
            names = {int(i): str(n) for i, n in self._db.execute("SELECT id, name FROM namespaces")}
            sql = f"SELECT {_COLS} FROM jobs WHERE state IN ({marks(len(want))})"
            args: list[Any] = list(want)
            if ns is not None:
                nid = self._ns(ns)
                if nid is None:
                    return []
                sql += " AND ns=?"
                args.append(nid)
            rows = self._db.execute(sql + " ORDER BY created_at, rowid", args).fetchall()
        return [self._job(r, names.get(int(r[0]), "")) for r in rows]

    def job_states(self, ns: str, tips: Iterable[str]) -> dict[str, str]:
        want = list(tips)
        out: dict[str, str] = {}
        if self._no_queue():
            return out
        with self.reading():
            nid = self._ns(ns)
            if nid is None:
                return out
            for part in chunks(want):
                sql = f"SELECT tip, state FROM jobs WHERE ns=? AND tip IN ({marks(len(part))})"
                out.update((str(t), str(s)) for t, s in self._db.execute(sql, (nid, *part)))
        return out
