"""Scope chains: one read through several anchors in priority order.

``memories(at=["chat", "user/main", "org/main"])`` returns every record
visible from at least one anchor, once, tagged with ``via``: the first anchor
(in the given order) from which it is visible. A record is visible from an
anchor exactly as in a single-anchor read: every source is on that anchor's
path and no retraction of it is. So a retraction on the conversation hides a
record there but not where the conversation cannot see it: if ``user/main``
still holds the record, it comes back ``via`` ``user/main`` (promote the
correction by merging it into ``user/main`` to make it hold there too).

Anchors are read in order, each fetching only the part of its ancestor
ranges that no earlier anchor covered: a record is fetched and checked once,
in the first view whose ranges hold its index position, exactly as a
single-anchor read checks it. The few that view does not show (a source off
its path, or retracted there) wait and are offered to the later views. A
single-anchor read is the chain of one. So a chain costs one pass over the
union of its anchors' records, where the single reads together pass over
their shared ancestry once per anchor (see bench/branches.py). In memory,
where stored objects are shared, carrying ``via`` means a copy of each
record; `ViaCopies` keeps them, so only the first read of a scope pays.
"""

from __future__ import annotations

from collections.abc import Sequence
from operator import attrgetter, is_
from typing import TYPE_CHECKING, Any

from .backends.base import Generation, RecordRow
from .branch_types import CONFLICT
from .errors import InvalidInput
from .lifecycle import anchor_as_of
from .lineage import row_in_ranges
from .model import RETRACTION, Memory, memory_with
from .validate import show

if TYPE_CHECKING:
    from .store import Store


_SEQ = attrgetter("seq")
_set = object.__setattr__


def with_via(m: Memory, via: str) -> Memory:
    """A copy of ``m`` with ``via`` set (stored rows are shared, so never mutated)."""
    return memory_with(m, via=via)


class ViaCopies:
    """Tagged copies of shared stored records, kept for the next chain read.

    A backend that shares its stored objects (memory) needs a copy of each
    record to carry ``via``. Copying costs about twice a record's gate check,
    and the same scopes are read again and again (a user's and an org's branch
    change far less often than the conversation), so each anchor's last
    answer is kept: the stored objects it was made from and their copies. A
    copy is reused only for that very stored object, so a purged or replaced
    record is never served. Everything is dropped when more than ``limit``
    copies are held.
    """

    def __init__(self, limit: int = 200_000) -> None:
        self.limit = limit
        self._size = 0
        self._erasures: int | None = None
        # (namespace, anchor) -> (the stored objects of its last answer, their copies)
        self._last: dict[tuple[str, str], tuple[list[Memory], list[Memory]]] = {}

    def clear(self) -> None:
        """Forget every copy (a purge must not leave erased content in memory)."""
        self._last.clear()
        self._size = 0

    def sync(self, gen: Generation) -> None:
        """Drop every copy if something was erased since the last read."""
        if gen.erasures != self._erasures:
            self.clear()
            self._erasures = gen.erasures

    def tag(self, items: list[Memory], via: str, ns: str) -> list[Memory]:
        """Copies of ``items`` with ``via`` set (read in namespace ``ns``)."""
        last = self._last.get((ns, via))
        if last is None:
            out = [with_via(m, via) for m in items]
        else:
            stored, copies = last
            done = len(stored)
            if len(items) >= done and all(map(is_, stored, items)):
                # The last answer, maybe with newer records after it (a read sorts
                # by write order): no Python loop over what it already had.
                if len(items) == done:
                    return copies[:]
                out = copies + [with_via(m, via) for m in items[done:]]
            else:
                # ``stored`` keeps its objects alive, so an equal id is the same object.
                kept = dict(zip(map(id, stored), copies, strict=True))
                out = [c if (c := kept.get(id(m))) is not None else with_via(m, via) for m in items]
            self._size -= done
        if self._size + len(out) > self.limit:
            self.clear()
        self._last[ns, via] = (items[:], out[:])
        self._size += len(out)
        return out


def tag_fresh(items: list[Memory], via: str) -> list[Memory]:
    """Set ``via`` on records built for this read alone (nobody else holds them)."""
    for m in items:
        _set(m, "via", via)
    return items


def check_anchors(at: Any) -> list[str]:
    if not isinstance(at, (list, tuple)):
        raise InvalidInput(
            f"`at` must be an event id, a branch name, or a list of them; got {show(at)}"
        )
    for a in at:
        if not isinstance(a, str) or not a:
            raise InvalidInput(
                f"every anchor in `at` must be an event id or a branch name, got {show(a)}"
            )
    return list(dict.fromkeys(at))


def read_chain(
    s: Store,
    ns: str,
    anchors: Sequence[str],
    kind: str | None,
    *,
    as_of: float | None = None,
    tag: bool = True,
) -> list[Memory]:
    """Records visible from any of ``anchors``; earlier anchors' records first.

    ``as_of`` keeps only what was written by then (anchors resolved as they
    were then); ``tag=False`` leaves ``via`` unset (a single-anchor read).
    """
    if not anchors:
        return []
    with s._b.reading():
        views = _views(s, ns, anchors, as_of)
        groups, _ = read_views(s, ns, [r for _, r in views], kind, as_of)
        if not tag:
            return groups[0] if len(groups) == 1 else [m for g in groups for m in g]
        out: list[Memory] = []
        for (name, _), g in zip(views, groups, strict=True):
            if s._b.shares_rows:  # under the read lock: a purge clears the copies after
                s._via_copies.sync(s._b.generation())
                out += s._via_copies.tag(g, name, ns)
            else:
                out += tag_fresh(g, name)
        return out


def read_views(
    s: Store,
    ns: str,
    views: list[dict[int, int]],
    kind: str | None,
    as_of: float | None = None,
) -> tuple[list[list[Memory]], list[set[str]]]:
    """For each view (ancestor ranges), the records it is the first to show,
    oldest first; and the ids that retractions visible in it hide there.
    The caller holds the backend's read (or write) transaction."""
    want_retractions = kind == RETRACTION
    groups: list[list[Memory]] = []
    hidden_in: list[set[str]] = []
    covered: dict[int, int] = {}  # the union of the views read so far
    retractions: list[RecordRow] = []  # every retraction fetched so far
    waiting: list[RecordRow] = []  # fetched, not yet visible from any view
    last = len(views) - 1
    for i, ranges in enumerate(views):
        fresh = {g: u for g, u in ranges.items() if u > covered.get(g, -1)} if i else ranges
        rows = s._b.records_in_ranges(ns, fresh, covered) if fresh else ()
        if as_of is not None:
            rows = (r for r in rows if r.memory.created_at <= as_of)
        live: list[Memory] = []
        if waiting:  # fetched for an earlier view: visible from this one?
            still = []
            for row in waiting:
                if row_in_ranges(row, ranges):
                    live.append(row.memory)
                else:
                    still.append(row)
            waiting = still
        # Each fresh row's ``pos`` is in this view and in no earlier one. The
        # inlined checks are a single-anchor read's; this loop is the whole cost.
        earlier = len(retractions)
        hidden: set[str] = set()
        for row in rows:
            m = row.memory
            extra = row.extra
            if m.target is not None:
                retractions.append(row)  # later views may see it too
                if extra and not all(ranges.get(a, -1) >= b for a, b in extra):
                    if want_retractions:
                        waiting.append(row)
                else:
                    hidden.add(m.target)
                    if want_retractions:
                        live.append(m)
            elif want_retractions or (m.kind != kind if kind is not None else m.kind == CONFLICT):
                continue
            elif extra and not all(ranges.get(a, -1) >= b for a, b in extra):
                waiting.append(row)
            else:
                live.append(m)
        if want_retractions:
            hidden = set()  # retractions are listed, not applied
        else:
            if earlier:
                hidden.update(
                    r.memory.target or "" for r in retractions[:earlier] if row_in_ranges(r, ranges)
                )
            if hidden:
                live, gone = _split(live, hidden)
                waiting += s._b.get_records(ns, gone).values()
        live.sort(key=_SEQ)
        groups.append(live)
        hidden_in.append(hidden)
        if i < last:
            covered.update(fresh)
    return groups, hidden_in


def _views(
    s: Store, ns: str, anchors: Sequence[str], as_of: float | None
) -> list[tuple[str, dict[int, int]]]:
    """Each anchor with its ancestor ranges (as it stood at ``as_of``); anchors
    that see nothing yet are left out."""
    views = []
    for a in anchors:
        event = a if as_of is None else anchor_as_of(s, ns, a, as_of)
        if event is not None and (r := s._ranges(ns, event)) is not None:
            views.append((a, r))
    return views


def _split(live: list[Memory], hidden: set[str]) -> tuple[list[Memory], list[str]]:
    """``live`` without the ids in ``hidden``, and the ids taken out."""
    keep = [m for m in live if m.id not in hidden]
    if len(keep) == len(live):
        return live, []
    return keep, [m.id for m in live if m.id in hidden]
