"""Children and siblings of PostgreSQL events (mixed into `PostgresBackend`).

Keys are the ``arrival`` numbers events get as they are written (schema
version 6). ``events_parents`` on ``(ns, parents, arrival)`` finds the events
under one parent (or the roots, whose ``parents`` is NULL) in arrival order;
merge events, the rare ones with several parents, are found through the
partial index ``events_merges`` and filtered here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..base import EventRow
from ..sqlrows import EVENT_COLS, SEP, event_from_row

# The partial index's own condition, written alike so the planner can use it.
_MERGE = "strpos(parents, E'\\x1f') > 0"
_COLS = f"arrival, {EVENT_COLS}"


class PgTree:
    if TYPE_CHECKING:

        def _q(self, sql: str, params: Any, *, defer: bool = False) -> list[tuple[Any, ...]]: ...

    def _single(
        self, ns: str, parent: str | None, after: int, limit: int | None
    ) -> list[tuple[Any, ...]]:
        cond = "parents IS NULL" if parent is None else "parents = %(p)s"
        sql = (
            f"SELECT {_COLS} FROM events WHERE ns = %(ns)s AND {cond} "
            "AND arrival > %(after)s ORDER BY arrival"
        )
        if limit is not None:
            sql += " LIMIT %(limit)s"
        return self._q(sql, {"ns": ns, "p": parent, "after": after, "limit": limit})

    def _merges(self, ns: str, eid: str, after: int) -> list[tuple[Any, ...]]:
        sql = (
            f"SELECT {_COLS} FROM events WHERE ns = %(ns)s AND {_MERGE} "
            "AND arrival > %(after)s AND %(p)s = ANY (string_to_array(parents, E'\\x1f')) "
            "ORDER BY arrival"
        )
        return self._q(sql, {"ns": ns, "p": eid, "after": after})

    @staticmethod
    def _rows(ns: str, got: list[tuple[Any, ...]]) -> list[tuple[int, EventRow]]:
        return [(int(r[0]), event_from_row(ns, r[1:])) for r in got]

    def child_events(
        self, ns: str, parent: str | None, after: int, limit: int
    ) -> list[tuple[int, EventRow]]:
        if limit <= 0:
            return []
        got = self._single(ns, parent, after, limit)
        if parent is not None:
            got = sorted(got + self._merges(ns, parent, after)[:limit])[:limit]
        return self._rows(ns, got)

    def _merge_siblings(self, ns: str, parents: tuple[str, ...], after: int) -> list[Any]:
        want = set(parents)
        return [r for r in self._merges(ns, min(parents), after) if set(r[2].split(SEP)) == want]

    def sibling_events(
        self, ns: str, parents: tuple[str, ...], after: int, limit: int
    ) -> list[tuple[int, EventRow]]:
        if limit <= 0:
            return []
        if len(set(parents)) > 1:
            return self._rows(ns, self._merge_siblings(ns, parents, after)[:limit])
        return self._rows(ns, self._single(ns, parents[0] if parents else None, after, limit))

    def sibling_count(self, ns: str, parents: tuple[str, ...], upto: int | None) -> int:
        if len(set(parents)) > 1:
            got = self._merge_siblings(ns, parents, 0)
            return sum(1 for r in got if upto is None or r[0] <= upto)
        parent = parents[0] if parents else None
        cond = "parents IS NULL" if parent is None else "parents = %(p)s"
        sql = f"SELECT count(*) FROM events WHERE ns = %(ns)s AND {cond}"
        if upto is not None:
            sql += " AND arrival <= %(upto)s"
        return int(self._q(sql, {"ns": ns, "p": parent, "upto": upto})[0][0])

    def sibling_before(self, ns: str, parents: tuple[str, ...], key: int) -> str | None:
        if len(set(parents)) > 1:
            before = [r for r in self._merge_siblings(ns, parents, 0) if r[0] < key]
            return str(before[-1][1]) if before else None
        parent = parents[0] if parents else None
        cond = "parents IS NULL" if parent is None else "parents = %(p)s"
        sql = (
            f"SELECT id FROM events WHERE ns = %(ns)s AND {cond} AND arrival < %(key)s "
            "ORDER BY arrival DESC LIMIT 1"
        )
        got = self._q(sql, {"ns": ns, "p": parent, "key": key})
        return str(got[0][0]) if got else None

    def sibling_key(self, ns: str, event_id: str) -> int | None:
        sql = "SELECT arrival FROM events WHERE ns = %(ns)s AND id = %(id)s"
        got = self._q(sql, {"ns": ns, "id": event_id})
        return int(got[0][0]) if got else None
