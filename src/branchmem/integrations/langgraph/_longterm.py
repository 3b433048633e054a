"""The long-term view of a namespace: what every thread's current lineage holds.

A thread's *head* is its newest root checkpoint; its current lineage is that
checkpoint and its ancestors. The long-term view of a branchmem namespace is
the union of the items visible at every head (plus the items written outside
any run, sourced from one shared event), where an item is left out if a
retraction of it (a delete or an overwrite) is visible at any head. On the
same key, the newest item wins.

The view is kept per process and per `Store`, incrementally: when a head
moves (the saver stores a thread's newer checkpoint), only that head's items
are read again and only the keys whose item changed are recomputed, so the
cost of a move or a read does not grow with the number of threads. The first
use of a view reads every thread's head once (`LongTerm.build`), and so does
the first use after another connection committed what the view reads
(another `Store` on the same SQLite file or PostgreSQL database, another
process: the backend's `OtherWriters`, asked for the namespace and its
registry by `_heads.others_version`; on SQLite any commit to the file
counts, on PostgreSQL only those to these two namespaces). The memory
backend has none: its view follows the writes of its `Store` (two `Store`s
on one `MemoryBackend` object do not follow each other).
Beside the current items, an index by (field, scalar value) serves a bare
filtered search.

`heads_moved` is what the saver calls; `saved`/`wait_saved` let a task wait
for its checkpoint without polling the backend (which, on SQLite, contends
for the lock the saver holds while it commits).
"""

from __future__ import annotations

import math
import threading
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from ...errors import UnknownAnchor, UnknownBranch
from ...model import Memory
from ...store import Store
from . import _keys as k
from ._heads import (
    MARK,
    SHARED,
    HeadView,
    Ident,
    Writes,
    derive,
    head_event,
    ident_of,
    indexable,
    others_version,
    read_view,
    thread_heads,
)


class LongTerm:
    """The long-term view of one branchmem namespace of one `Store`."""

    def __init__(self, store: Store, ns: str) -> None:
        self.store = store
        self.ns = ns
        self.lock = threading.RLock()
        self.built = False
        self.heads: dict[str, HeadView] = {}
        self.holders: dict[str, set[str]] = {}  # record id -> threads whose head shows it
        self.hiders: dict[str, set[str]] = {}  # record id -> threads whose head retracts it
        self.by_ident: dict[Ident, dict[str, Memory]] = {}  # records some head shows
        self.idents: dict[str, Ident] = {}  # record id -> its key, for records shown
        self.current: dict[tuple[str, ...], dict[str, Memory]] = {}  # ns -> key -> item
        self.shared_live: dict[Ident, dict[str, Memory]] = {}  # every live shared record
        self.shared_ids: dict[str, Ident] = {}
        # Kept with `current`, for a filtered search (`matching`): by namespace,
        # (field, value) -> key -> item for each top-level field of an item's
        # value that holds a scalar, and the namespace's oldest ``created_at``
        # (``None``: to be found again, after its oldest item went).
        self.eq: dict[tuple[str, ...], dict[tuple[str, Any], dict[str, Memory]]] = {}
        self.low: dict[tuple[str, ...], float | None] = {}
        self.others: int | None = None  # the backend's `others_version` when built

    def reset(self) -> None:
        """Forget everything; the next use reads every head again."""
        with self.lock:
            self.__init__(self.store, self.ns)  # type: ignore[misc]

    # ------------------------------------------------------------ keeping it
    def build(self) -> None:
        """Read every thread's head (on first use, and again once another
        connection wrote to the store: `OtherWriters`)."""
        others = others_version(self.store, self.ns)  # (before the lock: a writer holds
        # the backend's while it reads the view)
        with self.lock:
            if self.built and others != self.others:
                self.reset()  # (what another Store or process wrote: read it all again)
            if self.built:
                return
            self.others = others
            for thread, cid in thread_heads(self.store, self.ns):
                self._set(thread, read_view(self.store, self.ns, head_event(thread, cid)))
            self._set(SHARED, self._read_shared())
            self.built = True

    def move(
        self,
        thread: str,
        anchor: str | None,
        parents: Iterable[str] = (),
        tasks: Mapping[str, Writes] | None = None,
    ) -> None:
        """``thread``'s head is now ``anchor`` (``None``: the thread is gone).
        Where its ``parents`` are the old head, or tasks run on it whose writes
        ``tasks`` holds, the new view is derived without a read."""
        with self.lock:
            if not self.built:
                return
            new = None
            if anchor is not None:
                new = self._derived(thread, anchor, list(parents), tasks or {})
                if new is None:
                    new = read_view(self.store, self.ns, anchor)
            self._set(thread, new)

    def _derived(
        self, thread: str, anchor: str, parents: list[str], tasks: Mapping[str, Writes]
    ) -> HeadView | None:
        old = self.heads.get(thread)
        if old is None or not parents:
            return None
        if parents == [old.anchor]:
            return HeadView(anchor, old.items, old.hides, old.extra)
        writes: Writes = []
        for p in parents:
            if k.task_parent(p) != old.anchor or p not in tasks:
                return None
            writes += tasks[p]
        return derive(old, anchor, writes)

    def refresh(self, thread: str) -> None:
        """Read ``thread``'s head again (after a write at one of its checkpoints)."""
        with self.lock:
            if self.built and (old := self.heads.get(thread)) is not None:
                self._set(thread, read_view(self.store, self.ns, old.anchor))

    def wrote(self, added: Iterable[Memory], hid: Iterable[str]) -> None:
        """Writes sourced from the shared event (bare puts and deletes): the new
        records and the ids retracted. The shared head is a single event, so
        what it sees follows from these alone (every live record per key is
        kept, for when the newest is deleted)."""
        with self.lock:
            if not self.built:
                return
            live = self.shared_live
            touched: set[Ident] = set()
            hid = list(hid)
            for rid in hid:
                if (ident := self.shared_ids.pop(rid, None)) is not None:
                    live[ident].pop(rid, None)
                    touched.add(ident)
            for m in added:
                ident = ident_of(m)
                live.setdefault(ident, {})[m.id] = m
                self.shared_ids[m.id] = ident
                touched.add(ident)
            old = self.heads.get(SHARED)
            items = dict(old.items) if old else {}
            for ident in touched:
                recs = live.get(ident)
                if recs:
                    items[ident] = max(recs.values(), key=lambda r: r.seq)
                else:
                    items.pop(ident, None)
                    live.pop(ident, None)
            hides = set(old.hides) if old else set()
            hides.update(hid)
            self._set(SHARED, HeadView(k.SHARED_EVENT, items, hides))

    def _read_shared(self) -> HeadView:
        view = read_view(self.store, self.ns, k.SHARED_EVENT)
        try:
            recs = self.store.memories(at=k.SHARED_EVENT, namespace=self.ns)
        except (UnknownAnchor, UnknownBranch):
            recs = []
        for m in recs:
            if (m.meta or {}).get(MARK) is not None:
                ident = ident_of(m)
                self.shared_live.setdefault(ident, {})[m.id] = m
                self.shared_ids[m.id] = ident
        return view

    def _set(self, thread: str, new: HeadView | None) -> None:
        old = self.heads.pop(thread, None)
        if new is not None:
            self.heads[thread] = new
        old_items = old.items if old else {}
        new_items = new.items if new else {}
        old_hides = old.hides if old else set()
        new_hides = new.hides if new else set()
        if (
            old is not None
            and new is not None
            and new_items is old_items
            and new_hides is old_hides
        ):
            return  # the same view at a new anchor (a step that wrote nothing)
        keys: Iterable[Ident] = old_items.keys() | new_items.keys()
        gone: Iterable[str] = old_hides - new_hides
        came: Iterable[str] = new_hides - old_hides
        if new is not None and new.base is not None:
            if new.base is old:  # derived from the old head: only what it changed
                keys, gone, came = new.changed, (), new.hid - old_hides
            new.base = None
        changed: set[Ident] = set()
        for ident in keys:
            m, n = old_items.get(ident), new_items.get(ident)
            if m is not None and (n is None or n.id != m.id):
                self._unhold(thread, ident, m)
                changed.add(ident)
            if n is not None and (m is None or m.id != n.id):
                self.holders.setdefault(n.id, set()).add(thread)
                self.by_ident.setdefault(ident, {})[n.id] = n
                self.idents[n.id] = ident
                changed.add(ident)
        for rid in gone:
            if (s := self.hiders.get(rid)) is not None:
                s.discard(thread)
                if not s:
                    del self.hiders[rid]
            if (hit := self.idents.get(rid)) is not None:
                changed.add(hit)
        for rid in came:
            self.hiders.setdefault(rid, set()).add(thread)
            if (hit := self.idents.get(rid)) is not None:
                changed.add(hit)
        for ident in changed:
            self._recompute(ident)

    def _unhold(self, thread: str, ident: Ident, m: Memory) -> None:
        s = self.holders.get(m.id)
        if s is not None:
            s.discard(thread)
            if not s:
                del self.holders[m.id]
                recs = self.by_ident.get(ident)
                if recs is not None:
                    recs.pop(m.id, None)
                    if not recs:
                        del self.by_ident[ident]
                self.idents.pop(m.id, None)

    def _recompute(self, ident: Ident) -> None:
        best = self.best(ident)
        space = self.current.get(ident[0])
        old = space.get(ident[1]) if space is not None else None
        if old is not None and (best is None or best.id != old.id):
            self._unindex(ident, old)
        if best is None:
            if space is not None:
                space.pop(ident[1], None)
                if not space:
                    del self.current[ident[0]]
                    self.eq.pop(ident[0], None)
                    self.low.pop(ident[0], None)
        else:
            self.current.setdefault(ident[0], {})[ident[1]] = best
            if old is None or old.id != best.id:
                self._index(ident, best)

    def _index(self, ident: Ident, m: Memory) -> None:
        space, key = ident
        d = m.meta[MARK]  # type: ignore[index]
        eq = self.eq.setdefault(space, {})
        for field, v in d["value"].items():
            if indexable(v):
                eq.setdefault((field, v), {})[key] = m
        low = self.low.get(space, math.inf)
        if low is not None and d["created_at"] < low:
            self.low[space] = d["created_at"]

    def _unindex(self, ident: Ident, m: Memory) -> None:
        space, key = ident
        d = m.meta[MARK]  # type: ignore[index]
        eq = self.eq.get(space)
        if eq is not None:
            for field, v in d["value"].items():
                bucket = eq.get((field, v)) if indexable(v) else None
                if bucket is not None and (held := bucket.get(key)) is not None and held.id == m.id:
                    del bucket[key]
                    if not bucket:
                        del eq[(field, v)]
        low = self.low.get(space)
        if low is not None and d["created_at"] <= low:
            self.low[space] = None

    # ---------------------------------------------------------------- reading
    def best(
        self,
        ident: Ident,
        without: str | None = None,
        hidden: set[str] | frozenset[str] = frozenset(),
    ) -> Memory | None:
        """The newest record of ``ident`` that some head other than ``without``
        shows and no head other than ``without`` retracts (nor ``hidden`` names)."""
        out: Memory | None = None
        for rid, m in (self.by_ident.get(ident) or {}).items():
            if rid in hidden or (out is not None and m.seq < out.seq):
                continue
            held = self.holders.get(rid, ())
            if without is not None and not (set(held) - {without}):
                continue
            hid = self.hiders.get(rid)
            if hid and (without is None or set(hid) - {without}):
                continue
            out = m
        return out

    def hidden_by_others(self, rid: str, thread: str) -> bool:
        hid = self.hiders.get(rid)
        return hid is not None and bool(hid - {thread})

    def touched(self, thread: str) -> set[Ident]:
        """The keys whose long-term item ``thread``'s head has a say in."""
        view = self.heads.get(thread)
        if view is None:
            return set()
        out = set(view.items)
        out.update(self.idents[r] for r in view.hides if r in self.idents)
        return out

    def matching(
        self, prefix: tuple[str, ...], conds: list[tuple[str, Any]]
    ) -> list[tuple[tuple[str, ...], list[Memory]]] | None:
        """The items under ``prefix`` that may match a search filter's
        ``conds``, by namespace: those equal to the scalar of one condition
        (the caller still checks every condition, and the expiry); ``None``
        where no condition is a scalar. Call with `lock` held."""
        eqs = [(f, w) for f, w in conds if indexable(w)]
        if not eqs:
            return None
        out: list[tuple[tuple[str, ...], list[Memory]]] = []
        for space, _ in self.spaces(prefix):
            index = self.eq.get(space) or {}
            buckets = [b for c in eqs if (b := index.get(c)) is not None]
            if len(buckets) == len(eqs):
                out.append((space, list(min(buckets, key=len).values())))
        return out

    def first(self, space: tuple[str, ...]) -> float:
        """The oldest ``created_at`` of the items of ``space`` (expired ones too).
        Call with `lock` held."""
        low = self.low.get(space)
        if low is None:
            items = self.current.get(space) or {}
            low = min((m.meta[MARK]["created_at"] for m in items.values()), default=math.inf)  # type: ignore[index]
            self.low[space] = low
        return low

    def spaces(
        self, prefix: tuple[str, ...] = ()
    ) -> Iterator[tuple[tuple[str, ...], dict[str, Memory]]]:
        n = len(prefix)
        for space, items in self.current.items():
            if space[:n] == prefix:
                yield space, items
