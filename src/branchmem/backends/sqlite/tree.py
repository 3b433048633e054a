"""Children and siblings of SQLite events (mixed into `SQLiteBackend`).

Keys are rowids: events append in arrival order. ``events_parents`` on
``(ns, parents)`` finds the events under one parent (or the roots, whose
``parents`` is NULL) in rowid order; merge events, the rare ones with several
parents, are found through the partial index ``events_merges`` and filtered
here, so a merge costs a look at the namespace's merges, not its events.
"""

from __future__ import annotations

from typing import Any

from ..base import EventRow
from ..sqlrows import EVENT_COLS, SEP
from .parts import SQLiteParts

# The partial index's own condition, written alike so SQLite can use it.
_MERGE = "instr(parents, char(31)) > 0"
_COLS = f"rowid, {EVENT_COLS}"


def _contains(parents: str, eid: str) -> bool:
    return eid in parents.split(SEP)


class TreeTables(SQLiteParts):
    def _single(
        self, nid: int, parent: str | None, after: int, limit: int | None
    ) -> list[tuple[Any, ...]]:
        cond = "parents IS NULL" if parent is None else "parents = ?"
        args: list[Any] = [nid] + ([] if parent is None else [parent]) + [after]
        sql = (
            f"SELECT {_COLS} FROM events INDEXED BY events_parents "
            f"WHERE ns = ? AND {cond} AND rowid > ? ORDER BY rowid"
        )
        if limit is not None:
            sql += " LIMIT ?"
            args.append(limit)
        return list(self._db.execute(sql, args))

    def _merges(self, nid: int, eid: str, after: int) -> list[tuple[Any, ...]]:
        # Every merge of the namespace past ``after`` that lists ``eid``.
        sql = (
            f"SELECT {_COLS} FROM events INDEXED BY events_merges "
            f"WHERE ns = ? AND {_MERGE} AND rowid > ? "
            "AND instr(char(31) || parents || char(31), char(31) || ? || char(31)) > 0 "
            "ORDER BY rowid"
        )
        return [r for r in self._db.execute(sql, (nid, after, eid)) if _contains(r[2], eid)]

    def _rows(self, ns: str, got: list[tuple[Any, ...]]) -> list[tuple[int, EventRow]]:
        return [(int(r[0]), self._event(ns, r[1:])) for r in got]

    def child_events(
        self, ns: str, parent: str | None, after: int, limit: int
    ) -> list[tuple[int, EventRow]]:
        nid = self._ns(ns)
        if nid is None or limit <= 0:
            return []
        got = self._single(nid, parent, after, limit)
        if parent is not None:
            got = sorted(got + self._merges(nid, parent, after)[:limit])[:limit]
        return self._rows(ns, got)

    def _merge_siblings(self, nid: int, parents: tuple[str, ...], after: int) -> list[Any]:
        want = set(parents)
        got = self._merges(nid, min(parents), after)
        return [r for r in got if set(r[2].split(SEP)) == want]

    def sibling_events(
        self, ns: str, parents: tuple[str, ...], after: int, limit: int
    ) -> list[tuple[int, EventRow]]:
        nid = self._ns(ns)
        if nid is None or limit <= 0:
            return []
        if len(set(parents)) > 1:
            return self._rows(ns, self._merge_siblings(nid, parents, after)[:limit])
        return self._rows(ns, self._single(nid, parents[0] if parents else None, after, limit))

    def sibling_count(self, ns: str, parents: tuple[str, ...], upto: int | None) -> int:
        nid = self._ns(ns)
        if nid is None:
            return 0
        if len(set(parents)) > 1:
            got = self._merge_siblings(nid, parents, 0)
            return sum(1 for r in got if upto is None or r[0] <= upto)
        sql = "SELECT count(*) FROM events INDEXED BY events_parents WHERE ns = ? AND parents IS ?"
        args: list[Any] = [nid, parents[0] if parents else None]
        if upto is not None:
            sql += " AND rowid <= ?"
            args.append(upto)
        return int(self._db.execute(sql, args).fetchone()[0])

    def sibling_before(self, ns: str, parents: tuple[str, ...], key: int) -> str | None:
        nid = self._ns(ns)
        if nid is None:
            return None
        if len(set(parents)) > 1:
            before = [r for r in self._merge_siblings(nid, parents, 0) if r[0] < key]
            return str(before[-1][1]) if before else None
        row = self._db.execute(
            "SELECT id FROM events INDEXED BY events_parents WHERE ns = ? AND parents IS ? "
            "AND rowid < ? ORDER BY rowid DESC LIMIT 1",
            (nid, parents[0] if parents else None, key),
        ).fetchone()
        return None if row is None else str(row[0])

    def sibling_key(self, ns: str, event_id: str) -> int | None:
        nid = self._ns(ns)
        if nid is None:
            return None
        row = self._db.execute(
            "SELECT rowid FROM events WHERE ns = ? AND id = ?", (nid, event_id)
        ).fetchone()
        return None if row is None else int(row[0])
