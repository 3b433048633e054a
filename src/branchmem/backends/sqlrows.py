"""What the SQL backends share: column lists, and rows to and from objects.

SQLite and PostgreSQL store the same columns in the same encodings (id lists
joined by a separator, meta as JSON text, fork points as JSON), so the code
that turns a fetched row into an `EventRow` or `RecordRow`, and an object into
the values of an ``INSERT``, lives here once. Statement text stays in each
backend, where the dialects differ (placeholders, id lists, upserts).
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from itertools import repeat, starmap
from operator import itemgetter
from typing import Any, TypeVar, cast

from ..branch_types import AuditEntry, HeadMove, Snapshot
from ..model import Memory, make_event, make_memory
from ..validate import readable_meta
from .base import BranchRow, EventRow, Pos, RecordRow

# Id lists (parents, sources) are stored joined by the unit separator: ids are
# printable, so it never occurs inside one, and splitting is far cheaper than JSON.
SEP = "\x1f"

EVENT_COLS = "id, parents, role, content, meta, created_at, seg, seq"
REC_COLS = (
    "seq, id, kind, content, sources, key, importance, meta, target, created_at, seg, pos, extra, "
    "expires_at, valid_from, valid_to"
)
BRANCH_COLS = "name, head, fork_point, parent, created_at, updated_at"
SNAPSHOT_COLS = "name, branch, event, created_at"
MOVE_COLS = "branch, from_head, to_head, why, actor, at"
LIFE_COLS = "id, archived_at, restored_at, uses, last_used"


def chunks(items: Sequence[Any], n: int) -> Iterator[Sequence[Any]]:
    for i in range(0, len(items), n):
        yield items[i : i + n]


def dump_meta(meta: Any) -> str | None:
    return None if meta is None else json.dumps(meta, ensure_ascii=False, sort_keys=True)


def dump_positions(pos: Sequence[Pos]) -> str:
    return json.dumps(pos)


def load_positions(text: str | None) -> tuple[Pos, ...]:
    return tuple((int(a), int(b)) for a, b in json.loads(text)) if text else ()


V = TypeVar("V")


def cached_segments(
    cache: dict[tuple[Any, int], V], key: Any, segs: Iterable[int]
) -> tuple[dict[int, V], list[int]]:
    """What ``cache`` holds for ``segs`` under ``(key, seg)`` (fork points, or
    tips), and the segments still to fetch."""
    out: dict[int, V] = {}
    missing = []
    for s in segs:
        hit = cache.get((key, s))
        if hit is None:
            missing.append(s)
        else:
            out[s] = hit
    return out, missing


def event_from_row(ns: str, r: Sequence[Any]) -> EventRow:
    """A row of `EVENT_COLS`."""
    parents = tuple(r[1].split(SEP)) if r[1] is not None else ()
    meta = readable_meta(r[4]) if r[4] is not None else None
    ev = make_event(r[0], parents, r[2], r[3], ns, meta, r[5])
    return EventRow(ev, (r[6], r[7]) if r[6] is not None else None)


def event_values(r: EventRow) -> tuple[Any, ...]:
    """The values of `EVENT_COLS` for ``r``."""
    e = r.event
    return (
        e.id,
        SEP.join(e.parents) if e.parents else None,
        e.role,
        e.content,
        dump_meta(e.meta),
        e.created_at,
        r.pos[0] if r.pos else None,
        r.pos[1] if r.pos else None,
    )


def record_from_row(ns: str, r: Sequence[Any]) -> RecordRow:
    """A row of `REC_COLS`."""
    (seq, rid, kind, content, sources, key, imp, meta, target, created, seg, pos, extra,
     expires, vfrom, vto) = r  # fmt: skip
    m = make_memory(
        rid,
        content,
        tuple(sources.split(SEP)),
        kind,
        key,
        imp,
        ns,
        readable_meta(meta) if meta is not None else None,
        target,
        created,
        seq,
        expires,
        vfrom,
        vto,
    )
    return RecordRow(m, (seg, pos) if seg is not None else None, load_positions(extra))


class _RowMemory:
    """A row of `REC_COLS` becoming a `Memory` (see `records_from_rows`): the
    same slots as `Memory` on a plain class, set by ordinary attribute stores."""

    __slots__ = Memory.__slots__

    def __init__(
        self, seq: int, rid: str, kind: str, content: str, sources: str, key: str | None,
        imp: float, meta: str | None, target: str | None, created: float, seg: int | None,
        pos: int | None, extra: str | None, expires: float | None, vfrom: float | None,
        vto: float | None,
    ) -> None:  # fmt: skip
        self.id = rid
        self.content = content
        # Most records have one source: a test for the separator costs less than a split.
        self.sources = (sources,) if SEP not in sources else tuple(sources.split(SEP))
        self.kind = kind
        self.key = key
        self.importance = imp
        self.meta = readable_meta(meta) if meta is not None else None
        self.target = target
        self.created_at = created
        self.seq = seq
        self.via = None
        self.expires_at = expires
        self.valid_from = vfrom
        self.valid_to = vto


_set_row_ns = _RowMemory.__dict__["namespace"].__set__
_SEG_POS = itemgetter(10, 11)
_SEG = itemgetter(10)
_EXTRA = itemgetter(12)


def records_from_rows(ns: str, rows: Sequence[Sequence[Any]]) -> list[RecordRow]:
    """`record_from_row` for each of ``rows``, in order, at half the cost (a gate
    read builds one per visible record).

    Each row's fields are set by one call of `_RowMemory`, by plain attribute
    stores where `make_memory` calls a slot's setter per field; then each
    object is made a `Memory` by assigning its class, which Python allows
    between classes with the same slots, and nothing else about it changes.
    """
    out = list(starmap(_RowMemory, rows))
    deque(map(_set_row_ns, out, repeat(ns)), 0)
    deque(map(setattr, out, repeat("__class__"), repeat(Memory)), 0)
    recs = list(map(RecordRow, cast(list[Memory], out), map(_SEG_POS, rows)))
    # Not yet connected, or with sources on several chains: a few rows, if any.
    if None in map(_SEG, rows) or any(map(_EXTRA, rows)):
        for rec, r in zip(recs, rows, strict=True):
            if r[10] is None:
                rec.pos = None
            if r[12]:
                rec.extra = load_positions(r[12])
    return recs


def record_values(m: Memory, r: RecordRow) -> tuple[Any, ...]:
    """The values of `REC_COLS` for memory ``m`` (with its ``seq``) indexed as ``r``."""
    return (
        m.seq,
        m.id,
        m.kind,
        m.content,
        SEP.join(m.sources),
        m.key,
        m.importance,
        dump_meta(m.meta),
        m.target,
        m.created_at,
        r.pos[0] if r.pos else None,
        r.pos[1] if r.pos else None,
        dump_positions(r.extra) if r.extra else None,
        m.expires_at,
        m.valid_from,
        m.valid_to,
    )


def branch_from_row(r: Sequence[Any]) -> BranchRow:
    """A row of `BRANCH_COLS`."""
    return BranchRow(str(r[0]), str(r[1]), r[2], r[3], r[4] or 0.0, r[5] or 0.0)


def branch_values(row: BranchRow) -> tuple[Any, ...]:
    return (row.name, row.head, row.fork_point, row.parent, row.created_at, row.updated_at)


def snapshot_from_row(ns: str, r: Sequence[Any]) -> Snapshot:
    """A row of `SNAPSHOT_COLS`."""
    return Snapshot(r[0], r[1], r[2], ns, r[3])


def move_from_row(ns: str, r: Sequence[Any]) -> HeadMove:
    """A row of `MOVE_COLS`."""
    return HeadMove(r[0], r[1], r[2], r[3], r[4], r[5], ns)


def audit_from_row(ns: str, r: Sequence[Any]) -> AuditEntry:
    """A row of ``seq, at, actor, op, ids``."""
    seq, at, actor, op, ids = r
    return AuditEntry(at, op, tuple(ids.split(SEP)) if ids else (), actor, ns, seq)
