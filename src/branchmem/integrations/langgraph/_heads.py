"""One thread head's items (`HeadView`), read at a checkpoint or derived from
the last one by a step's writes, and the store's thread heads."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ...errors import UnknownAnchor, UnknownBranch
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


def indexable(v: Any) -> bool:
    """Is ``v`` a filter value (or a value's field) that `LongTerm.eq` keys
    on: a scalar whose equality is the dict's (``nan`` equals nothing). Not
    ``None``: a filter's ``None`` also matches an item without the field."""
    t = type(v)
    return t is str or t is int or t is bool or (t is float and v == v)


def thread_heads(store: Store, ns: str) -> Iterator[tuple[str, str]]:
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


def others_version(store: Store, ns: str) -> int | None:
    """The backend's `OtherWriters.others_version` for what the long-term view
    of ``ns`` reads (``None`` where it has none: the memory backend, whose
    only writer is its `Store`): ``ns`` (checkpoint events and items) and its
    registry (the threads). A thread's head is a branch of the thread's own
    namespace, not watched: it moves only in the transaction that adds the
    checkpoint event to ``ns`` (`_checkpoints.write_checkpoint`), and a thread
    deleted leaves the registry first (`BranchmemSaver.delete_thread`)."""
    look = getattr(store._engine.backend, "others_version", None)
    return None if look is None else int(look([ns, k.registry_namespace(ns)]))


def head_event(thread: str, cid: str) -> str:
    return k.checkpoint_event(thread, "", cid)


# -------------------------------------------------------------- the registry
