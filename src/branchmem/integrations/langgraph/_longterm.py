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
the first use after another connection committed to the store (another
`Store` on the same SQLite file, another process: the backend's
`OtherWriters`); a backend without it (PostgreSQL) is not checked, and the
view follows only the writes of this `Store`. Beside the current items, an
index by (field, scalar value) serves a bare filtered search.

`heads_moved` is what the saver calls; `saved`/`wait_saved` let a task wait
for its checkpoint without polling the backend (which, on SQLite, contends
for the lock the saver holds while it commits).
"""

from __future__ import annotations

import math
import threading
import time
import weakref
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from ...errors import UnknownAnchor, UnknownBranch, UnknownEvent
from ...model import RETRACTION, Memory
from ...store import Store
from . import _keys as k

Ident = tuple[tuple[str, ...], str]
MARK = "langgraph_item"
"""The meta key that holds an item's namespace, key, value and times."""
SHARED = "\x00shared"
"""The pseudo-thread of the items written outside any run."""


class HeadView:
    """What one anchor sees: its newest item per key, the keys with more than
    one live record there (``extra``), and the records its visible
    retractions hide."""

    __slots__ = ("anchor", "base", "changed", "extra", "hid", "hides", "items")

    def __init__(
        self,
        anchor: str,
        items: dict[Ident, Memory],
        hides: set[str],
        extra: set[Ident] | None = None,
    ) -> None:
        self.anchor = anchor
        self.items = items
        self.hides = hides
        self.extra = extra if extra is not None else set()
        # Where `derive` made it: the view it came from, the keys whose item
        # may differ from there and the hides it added (it removes none), so
        # that moving a head from ``base`` to it looks at those alone; cleared
        # once used.
        self.base: HeadView | None = None
        self.changed: set[Ident] = set()
        self.hid: set[str] = set()


def read_view(store: Store, ns: str, anchor: str, *, hides: bool = True) -> HeadView:
    """The items visible at ``anchor`` (newest record per key) and, with
    ``hides``, the ids its visible retractions name."""
    try:
        recs = store.memories(at=anchor, namespace=ns)
        rets = store.memories(at=anchor, namespace=ns, kind=RETRACTION) if hides else []
    except (UnknownAnchor, UnknownBranch):
        recs, rets = [], []
    items: dict[Ident, Memory] = {}
    extra: set[Ident] = set()
    for m in recs:
        data = (m.meta or {}).get(MARK)
        if data is None:
            continue
        ident = (tuple(data["namespace"]), data["key"])
        old = items.get(ident)
        if old is not None:
            extra.add(ident)
        if old is None or old.seq < m.seq:
            items[ident] = m
    return HeadView(anchor, items, {r.target for r in rets if r.target is not None}, extra)


Writes = list[tuple[list[Memory], list[str]]]
"""A task's writes, batch by batch: the records added and the ids retracted."""


def derive(base: HeadView, anchor: str, writes: Writes) -> HeadView | None:
    """The view at ``anchor``, whose lineage is ``base``'s plus events that are
    the sources of ``writes`` alone; ``None`` where ``base`` does not say
    enough (a delete of the newest of several live records of a key)."""
    items, hides, extra = dict(base.items), set(base.hides), set(base.extra)
    changed: set[Ident] = set()
    new_hides: set[str] = set()
    for added, hid in writes:
        if hid:
            by_id = {m.id: ident for ident, m in items.items()}
            for rid in hid:
                hides.add(rid)
                new_hides.add(rid)
                if (ident := by_id.get(rid)) is not None:
                    if ident in extra:
                        return None
                    del items[ident]
                    changed.add(ident)
        for m in added:
            ident = ident_of(m)
            if ident in items:
                extra.add(ident)
            items[ident] = m
            changed.add(ident)
    out = HeadView(anchor, items, hides, extra)
    out.base, out.changed, out.hid = base, changed, new_hides
    return out


def ident_of(m: Memory) -> Ident:
    data = (m.meta or {})[MARK]
    return (tuple(data["namespace"]), data["key"])


def live(m: Memory, now: float) -> bool:
    return m.expires_at is None or m.expires_at > now


def indexable(v: Any) -> bool:
    """Is ``v`` a filter value (or a value's field) that `LongTerm.eq` keys
    on: a scalar whose equality is the dict's (``nan`` equals nothing). Not
    ``None``: a filter's ``None`` also matches an item without the field."""
    t = type(v)
    return t is str or t is int or t is bool or (t is float and v == v)


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
        others = _others_version(self.store)  # (before the lock: a writer holds
        # the backend's while it reads the view)
        with self.lock:
            if self.built and others != self.others:
                self.reset()  # (what another Store or process wrote: read it all again)
            if self.built:
                return
            self.others = others
            for thread, cid in _thread_heads(self.store, self.ns):
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


def _thread_heads(store: Store, ns: str) -> Iterator[tuple[str, str]]:
    """Every thread the saver registered, with its newest root checkpoint id
    (the saver's bookkeeping: `_keys`)."""
    try:
        recs = store.memories(at=k.THREADS_ROOT, namespace=k.registry_namespace(ns))
    except (UnknownAnchor, UnknownBranch):
        return
    for m in recs:
        thread = str((m.meta or {}).get("thread_id"))
        try:
            head = store.branch_head(k.latest_branch(""), namespace=k.thread_namespace(ns, thread))
        except UnknownBranch:
            continue
        yield thread, k.checkpoint_of_root(head)


def _others_version(store: Store) -> int | None:
    """The backend's `OtherWriters.others_version` (``None`` where it has none:
    the memory backend, whose only writer is this process's `Store`)."""
    look = getattr(store._engine.backend, "others_version", None)
    return None if look is None else int(look())


def head_event(thread: str, cid: str) -> str:
    return k.checkpoint_event(thread, "", cid)


# -------------------------------------------------------------- the registry
class _PerStore:
    def __init__(self) -> None:
        self.views: dict[str, LongTerm] = {}
        self.saved: dict[str, None] = {}  # recently saved checkpoint events, in order
        self.tasks: dict[str, Writes] = {}  # recent tasks' writes, by task event
        self.cond = threading.Condition()


_REGISTRY: weakref.WeakKeyDictionary[Store, _PerStore] = weakref.WeakKeyDictionary()
_REGISTRY_LOCK = threading.Lock()
_SAVED_KEPT = 4096


def _per(store: Store) -> _PerStore:
    with _REGISTRY_LOCK:
        per = _REGISTRY.get(store)
        if per is None:
            per = _REGISTRY[store] = _PerStore()
        return per


def view_of(store: Store, ns: str) -> LongTerm:
    """The (built) long-term view of ``ns`` in ``store``."""
    per = _per(store)
    with _REGISTRY_LOCK:
        view = per.views.get(ns)
        if view is None:
            view = per.views[ns] = LongTerm(store, ns)
    view.build()
    return view


def head_moved(
    store: Store,
    ns: str,
    thread: str,
    anchor: str | None,
    parents: list[str] = (),  # type: ignore[assignment]
) -> None:
    """Called by the saver: ``thread``'s newest root checkpoint is ``anchor``,
    whose parents are ``parents``."""
    per = _REGISTRY.get(store)
    view = per.views.get(ns) if per is not None else None
    if view is not None:
        view.move(thread, anchor, parents, per.tasks if per is not None else {})


def task_wrote(store: Store, task: str, added: list[Memory], hid: list[str]) -> None:
    """Called by the store: what a task's batch wrote (sourced from ``task``)."""
    per = _per(store)
    with per.cond:
        per.tasks.setdefault(task, []).append((list(added), list(hid)))
        if len(per.tasks) > _SAVED_KEPT:
            del per.tasks[next(iter(per.tasks))]


def view_at(store: Store, ns: str, thread: str, anchor: str, checkpoint: str) -> HeadView | None:
    """The view at a task's ``anchor`` (the task event, or its ``checkpoint``)
    from ``thread``'s kept head where that head is ``checkpoint``, without a
    read; ``None`` where it cannot be told so."""
    per = _REGISTRY.get(store)
    view = per.views.get(ns) if per is not None else None
    if per is None or view is None or not view.built:
        return None
    with view.lock:
        head = view.heads.get(thread)
        if head is None or head.anchor != checkpoint:
            return None
        if anchor == checkpoint:
            return head
        with per.cond:
            writes = list(per.tasks.get(anchor, []))
        return derive(head, anchor, writes)


def saved(store: Store, event: str) -> None:
    """Called by the saver once a checkpoint event is stored."""
    per = _per(store)
    with per.cond:
        per.saved[event] = None
        if len(per.saved) > _SAVED_KEPT:
            del per.saved[next(iter(per.saved))]
        per.cond.notify_all()


def wait_saved(store: Store, event: str, ns: str, timeout: float) -> bool:
    """Wait until ``event`` is stored: told by a saver of this process (which
    also marks the checkpoints it loads), or, failing that for a while (another
    process's saver), found in the backend, checked now and then."""
    per = _per(store)
    deadline = time.monotonic() + timeout
    delay = 0.02
    while True:
        with per.cond:
            if event in per.saved:
                return True
            per.cond.wait(min(delay, max(deadline - time.monotonic(), 0.0)))
            if event in per.saved:
                return True
        if _stored(store, event, ns):
            return True
        if time.monotonic() >= deadline:
            return False
        delay = min(delay * 2, 0.2)


def _stored(store: Store, event: str, ns: str) -> bool:
    try:
        store.get_event(event, namespace=ns)
    except UnknownEvent:
        return False
    return True
