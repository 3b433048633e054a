"""`RecordLog` on the PostgreSQL backend: a namespace's records by ``seq``
from a given one on, so that a search's kept candidates are extended by the
records written since instead of reading the gate again
(`branchmem.retrieval.candidates.extend`).

Sound here as on SQLite: a namespace's writers hold its advisory lock from
their first statement to commit and number records under it from the
highest committed ``seq``, so ``seq`` order is commit order, and a read view
that saw ``seq`` up to N will find every later record above N. A purge may
give a number again, but it raises the erasure counter, and `extend` then
reads the gate again.
"""

from __future__ import annotations

from ..base import RecordRow, Stamp
from ..sqlrows import SEP
from .meta import PgMeta


class PgRecordLog(PgMeta):
    """`record_top`, `records_since` and `record_stamps`, one statement each."""

    def record_top(self, ns: str) -> int:
        row = self._q("SELECT coalesce(max(seq), 0) FROM records WHERE ns = %(ns)s", {"ns": ns})
        return int(row[0][0])

    def records_since(self, ns: str, seq: int) -> list[RecordRow]:
        return self._records("seq > %(seq)s ORDER BY seq", {"ns": ns, "seq": seq})

    def record_stamps(self, ns: str, kinds: tuple[str, ...]) -> dict[str, Stamp]:
        sql = (
            "SELECT id, seq, created_at, content, sources, target FROM records "
            "WHERE ns = %(ns)s AND kind = ANY(%(kinds)s)"
        )
        return {
            r[0]: (int(r[1]), r[2], r[3], tuple(r[4].split(SEP)), r[5])
            for r in self._q(sql, {"ns": ns, "kinds": list(kinds)})
        }
