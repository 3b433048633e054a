"""`BranchmemStore`: LangGraph's `BaseStore` on branchmem, gated by checkpoint lineage.

An item is a branchmem record. Inside a graph run, a ``put`` or ``delete`` made
by a task is sourced from that task's event (see `BranchmemSaver`), so it is
on the lineage of every later checkpoint of the branch that made it and of no
checkpoint of a branch forked from before it; a ``delete`` (or an overwrite) is
a gated retraction, so the old value survives on other branches.

With ``shared=True`` (the default) the store is long-term memory across
threads. A thread's *head* is its newest checkpoint, and what a thread wrote
counts for the others while it is on that thread's current lineage:

- a bare ``get``, ``search`` or ``list_namespaces`` (outside a run) sees the
  union of every thread's current lineage (`_longterm`), plus what was put
  outside a run; a delete or overwrite on any current lineage takes the old
  value out;
- inside a run, a task sees the scope chain ``[its checkpoint, every other
  thread's head]``: its own lineage first (on the same key, its own value
  wins), never through its own thread's head (a run resumed from an old
  checkpoint does not see the branch it left);
- a fork or rewind moves a head, so what the abandoned branch wrote leaves
  every view at once, and comes back with the branch.

With ``shared=False`` each run sees its own lineage only, and a bare read
raises `InvalidInput` (use ``store.at(config)``).

A run of a graph compiled without a checkpointer has no checkpoint to gate by
(nor any to rewind to): its store calls are bare calls, its writes sourced from
the shared event. A checkpointer other than `BranchmemSaver` is refused at once.

Gating happens at the root graph's checkpoints: a subgraph's tasks read and
write as the root task that runs the subgraph (LangGraph gives a subgraph task
the root checkpoint in ``checkpoint_map``, and its writes are sourced from the
root task's event).
"""

from __future__ import annotations

import heapq
import json
import math
from collections.abc import Iterable, Mapping
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.config import get_config
from langgraph.store.base import (
    BaseStore,
    GetOp,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchOp,
    TTLConfig,
    validate_op_namespace,
)
from langgraph.store.memory import _compare_values

from ...errors import InvalidInput, UnknownEvent
from ...model import Memory
from ...redact.scrub import Scrub
from ...store import Store
from . import _items as it
from . import _keys as k
from . import _ttl
from ._heads import SHARED, Ident
from ._items import item_key
from ._state import check_thread
from ._tasks import link_task, one_transaction, task_of
from ._view import _View
from ._views import task_wrote, view_of, wait_saved
from .saver import BranchmemSaver

__all__ = ["BranchmemStore", "item_key"]

CHECKPOINTER = "__pregel_checkpointer"
"""Where LangGraph puts a run's checkpointer in a task's config (``None``: the
graph has none); its ``langgraph.constants`` name is kept for compatibility only."""


class BranchmemStore(BaseStore):
    """LangGraph's store interface on a branchmem `Store`, gated by checkpoint lineage.

    ``shared`` (default ``True``): what any thread's current lineage holds is
    long-term memory for every thread and for bare reads; ``False`` keeps each
    lineage apart. ``index`` enables ranked ``search(query=...)`` as in
    LangGraph's stores: ``{"dims": 384, "embed": e, "fields": ["text"]}``
    where ``e`` is a LangChain ``Embeddings``, a function of a list of texts,
    ``"provider:model"``, or a branchmem embedder (or its name, ``"hashing"``);
    ``fields`` (default ``["$"]``, the whole value) are paths such as ``"a.b"``
    or ``"arr[*].f"``. Without ``index``, a query ranks by keywords.
    ``ttl`` (`TTLConfig`) sets ``default_ttl`` in minutes and
    ``refresh_on_read`` (default ``True``): an item put with a ttl expires that
    many minutes after its put or its last ``get``/``search`` with
    ``refresh_ttl`` (a refreshing read records a use of the items it returns
    that have a ttl, `Store.touch`; the record itself never changes); an expired
    item is hidden at once, and no read brings it back. Times follow the
    `Store`'s ``clock``. ``namespace`` is the branchmem
    namespace, the same as the `BranchmemSaver`'s. ``wait_s`` bounds how long
    a task waits for its checkpoint to be saved.

    >>> from branchmem import Store
    >>> store = BranchmemStore(Store())
    >>> store.put(("user",), "city", {"city": "杭州"})   # outside a run: long-term
    >>> store.get(("user",), "city").value
    {'city': '杭州'}
    """

    supports_ttl = True

    def __init__(
        self,
        store: Store,
        *,
        shared: bool = True,
        index: Mapping[str, Any] | None = None,
        namespace: str | None = None,
        ttl: TTLConfig | None = None,
        wait_s: float = 10.0,
        _anchor: str | None = None,
        _thread: str | None = None,
        _embed: it.Embed | None = None,
    ) -> None:
        if not isinstance(store, Store):
            raise InvalidInput(
                f"BranchmemStore needs a branchmem Store, got {type(store).__name__}; "
                "pass the same Store as the BranchmemSaver's"
            )
        if index is not None and "embed" not in index:
            raise InvalidInput(
                "index needs an 'embed' entry: a LangChain Embeddings, a function of a "
                "list of texts, 'provider:model', or a branchmem embedder such as "
                "'hashing' (and optionally 'fields': ['text'])"
            )
        self.store = store
        self.shared = bool(shared)
        self.namespace = namespace if namespace is not None else "default"
        self.index = dict(index) if index is not None else None
        self.ttl_config = ttl
        self.wait_s = wait_s
        self._anchor = _anchor
        self._thread = _thread
        self._linked: set[str] = set()
        self._fields = list((self.index or {}).get("fields") or ["$"])
        self._embed = _embed
        if self._embed is None and self.index is not None:
            self._embed = it.Embed(self.index["embed"])
        self._shared_ready = False

    # ------------------------------------------------------------------ anchors
    def at(self, where: RunnableConfig | str) -> BranchmemStore:
        """A view bound to an anchor: a checkpoint config (``thread_id``, and
        ``checkpoint_id``, else the thread's newest checkpoint), which reads as
        a run at that checkpoint would, or a branchmem event id or branch name,
        which sees that anchor's lineage only. Its writes are sourced from that
        anchor.

        >>> from branchmem import Store
        >>> mem = Store()
        >>> _ = mem.add_event("e1")
        >>> view = BranchmemStore(mem).at("e1")
        >>> view.put(("user",), "city", {"city": "杭州"})
        >>> view.get(("user",), "city").value
        {'city': '杭州'}
        """
        thread = None
        if isinstance(where, str):
            anchor = where
        elif isinstance(where, Mapping) and "configurable" in where:
            conf = where["configurable"]
            if conf.get("thread_id") is None:
                raise InvalidInput("store.at(config) needs a config with a thread_id")
            cp_ns = str(conf.get("checkpoint_ns") or "")
            if cp_ns:
                raise InvalidInput(
                    f"store.at() takes a root graph's checkpoint (checkpoint_ns ''), got "
                    f"{cp_ns!r}: items are gated by the root graph's checkpoints"
                )
            tup = BranchmemSaver(self.store, self.namespace).get_tuple(where)
            if tup is None:
                raise InvalidInput(
                    f"no checkpoint for {dict(conf)!r}: run the graph with a "
                    "BranchmemSaver on the same Store first"
                )
            thread = str(conf["thread_id"])
            cid = tup.config["configurable"]["checkpoint_id"]
            anchor = k.checkpoint_event(thread, cp_ns, cid)
        else:
            raise InvalidInput(
                f"store.at() takes a checkpoint config or an anchor id, got {where!r}"
            )
        return BranchmemStore(
            self.store,
            shared=self.shared,
            index=self.index,
            namespace=self.namespace,
            ttl=self.ttl_config,
            wait_s=self.wait_s,
            _anchor=anchor,
            _thread=thread,
            _embed=self._embed,
        )

    def _where(self, *, write: bool) -> tuple[str | None, str | None]:
        """(anchor, thread) of this operation: the anchor it reads at and writes
        from, and the thread whose head it must not read through. ``(None,
        None)``: a bare call on a shared store (the long-term view)."""
        if self._anchor is not None:
            return self._anchor, self._thread
        try:
            config = get_config()
        except RuntimeError:
            config = None
        if config is None or not (config.get("configurable") or {}).get("checkpoint_map"):
            if self.shared:
                return None, None
            raise InvalidInput(
                "BranchmemStore(shared=False) was used outside a LangGraph run, where "
                "there is no checkpoint to read at; use store.at(config) with a "
                "checkpoint config (or a branchmem anchor)"
            )
        if not self._checkpointed(config):
            return None, None  # a run without a checkpointer: as a bare call
        thread, cid, task_id = task_of(config)
        check_thread(self.store.redactor, thread)  # before waiting for its checkpoint
        checkpoint = k.checkpoint_event(thread, "", cid)
        if not wait_saved(self.store, checkpoint, self.namespace, self.wait_s):
            raise InvalidInput(
                f"checkpoint event {checkpoint!r} was not saved within "
                f"{self.wait_s}s: compile the graph with checkpointer="
                "BranchmemSaver(the same Store) and durability 'sync' or 'async'"
            )
        task = k.task_event(thread, cid, task_id)
        if task in self._linked or write:  # (a write links it, in its transaction)
            return task, thread
        try:
            self.store.get_event(task, namespace=self.namespace)
        except UnknownEvent:
            return checkpoint, thread
        self._linked.add(task)
        return task, thread

    def _checkpointed(self, config: RunnableConfig) -> bool:
        """Does the run of ``config`` save its checkpoints with a `BranchmemSaver`?
        ``False`` for a graph compiled without a checkpointer (its store calls
        are bare calls: there is no checkpoint to gate by, nor any to rewind to);
        a checkpointer of another kind is refused at once."""
        conf = config.get("configurable") or {}
        if CHECKPOINTER not in conf:  # (not told: as before, wait for the checkpoint)
            return True
        saver = conf[CHECKPOINTER]
        if saver is None:
            if self.shared:
                return False
            raise InvalidInput(
                "BranchmemStore(shared=False) keeps each checkpoint lineage apart, and "
                "this graph has no checkpointer: compile it with checkpointer="
                "BranchmemSaver(the same Store), or use BranchmemStore(store) (shared)"
            )
        if not isinstance(saver, BranchmemSaver):
            raise InvalidInput(
                f"this graph's checkpointer is a {type(saver).__name__}: BranchmemStore "
                "gates items by the checkpoints of a BranchmemSaver; compile it with "
                "checkpointer=BranchmemSaver(the same Store), or without a checkpointer"
            )
        return True

    # -------------------------------------------------------------------- batch
    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run ``ops`` in order of kind, like LangGraph's in-memory store: reads
        see the state before the batch's writes; of several writes to one key,
        the last wins."""
        ops = list(ops)
        scrub = None if self.store.redactor is None else Scrub(self.store.redactor)
        for op in ops:
            validate_op_namespace(op)
            if isinstance(op, PutOp) and op.value is not None:
                it.check_value(op)
            elif isinstance(op, (SearchOp, ListNamespacesOp)):
                it.check_page(op)
            if isinstance(op, PutOp) and scrub is not None:
                for label in op.namespace:  # they keep one user's items from another's
                    scrub.identifier(label, "namespace label")
        if not ops:
            return []
        writes = any(isinstance(op, PutOp) for op in ops)
        anchor, thread = self._where(write=writes)
        view = _View.of(
            self.store, self.namespace, anchor, thread, shared=self.shared, linked=self._linked
        )
        results: list[Result] = []
        puts: dict[Ident, PutOp] = {}
        refresh: list[str] = []  # the records of the items read that a refresh renews
        for op in ops:
            if isinstance(op, GetOp):
                rec = view.get((tuple(op.namespace), it.stored_key(op.key, scrub)))
                results.append(None if rec is None else it.to_item(rec))
                if rec is not None and op.refresh_ttl and "ttl" in rec.meta[it.MARK]:  # type: ignore[index]
                    refresh.append(rec.id)
            elif isinstance(op, SearchOp):
                page = self._search(op, view, scrub)
                results.append([it.to_item(m, s, search=True) for m, s in page])
                if op.refresh_ttl:
                    refresh += [m.id for m, _ in page if "ttl" in m.meta[it.MARK]]  # type: ignore[index]
            elif isinstance(op, ListNamespacesOp):
                results.append(it.namespaces(op, view.spaces()))
            elif isinstance(op, PutOp):
                puts[(tuple(op.namespace), it.stored_key(op.key, scrub))] = op
                results.append(None)
            else:
                raise InvalidInput(f"unknown store operation {type(op).__name__}")
        if refresh:  # (as of the batch's time, at which these were read unexpired)
            _ttl.refresh(self.store, self.namespace, refresh, view.now)
        if puts:
            # Inside a run, synced by the step's checkpoint (`one_transaction`).
            in_run = self._anchor is None and anchor is not None
            # What each put replaces, read before the transaction: the view's
            # lock is not taken while the backend's is held (a view being
            # built holds its lock while it reads the backend).
            olds = {ident: view.get(ident) for ident in puts}
            with one_transaction(self.store, synced=not in_run):
                if anchor is not None and anchor not in self._linked:
                    self._link(anchor)
                source, added, hid = self._apply(anchor, puts, olds, view.now)
            # once committed:
            if k.task_parent(source) is not None:  # the saver derives the next head from it
                task_wrote(self.store, source, added, hid)
            if self.shared:
                self._tell(source, thread, added, hid)
        return results

    def _link(self, anchor: str) -> None:
        """Create the event of the task ``anchor`` names, if it is one."""
        if anchor.startswith('lg:["task",'):
            _, thread, cid, task_id = json.loads(anchor[3:])
            link_task(self.store, self.namespace, thread, cid, task_id)
            self._linked.add(anchor)

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        return self.batch(ops)

    def _search(
        self, op: SearchOp, view: _View, scrub: Scrub | None
    ) -> list[tuple[Memory, float | None]]:
        # compared with values as stored: redacted
        filt = op.filter if scrub is None or not op.filter else scrub.value(dict(op.filter))
        # In InMemoryStore's order: by namespace (oldest first put among its
        # items), then by each key's first put.
        first: dict[tuple[str, ...], float] = {}
        cands: list[tuple[float, int, tuple[str, ...], Memory]] = []
        late: list[tuple[float, int, tuple[str, ...], Memory]] = []  # expiry to look up
        conds = list(filt.items()) if filt else []
        mark, live = it.MARK, view.live
        prefix = tuple(op.namespace_prefix)
        if conds and view.own is None and view.lt is not None:  # bare: the kept index
            with view.lt.lock:
                found = view.lt.matching(prefix, conds)
                if found is not None:
                    first = {space: view.lt.first(space) for space, _ in found}
            if found is not None:
                for ns, recs in found:
                    for m in recs:
                        d = m.meta[mark]  # type: ignore[index]
                        to = cands  # (inline: an item without a ttl has not expired)
                        if m.expires_at is not None or "ttl" in d:
                            if (ok := live(m)) is False:
                                continue
                            to = cands if ok else late
                        value = d["value"]
                        if all(_compare_values(value.get(key), want) for key, want in conds):
                            to.append((d["created_at"], m.seq, ns, m))
                return self._page(op, view, cands, late, first)
        for ns, recs in view.groups(prefix):
            low = math.inf
            for m in recs:
                d = m.meta[mark]  # type: ignore[index]
                c = d["created_at"]
                if c < low:
                    low = c
                to = cands  # (inline: an item without a ttl has not expired)
                if m.expires_at is not None or "ttl" in d:
                    if (ok := live(m)) is False:
                        continue
                    to = cands if ok else late
                if conds:
                    value = d["value"]
                    if not all(_compare_values(value.get(key), want) for key, want in conds):
                        continue
                to.append((c, m.seq, ns, m))
            if low < first.get(ns, math.inf):
                first[ns] = low
        return self._page(op, view, cands, late, first)

    def _page(
        self,
        op: SearchOp,
        view: _View,
        cands: list[tuple[float, int, tuple[str, ...], Memory]],
        late: list[tuple[float, int, tuple[str, ...], Memory]],
        first: dict[tuple[str, ...], float],
    ) -> list[tuple[Memory, float | None]]:
        if late:  # ttl items past their first ttl: alive if read since
            view.settle(x[3] for x in late)
            cands += [x for x in late if view.live(x[3])]
        n = op.offset + op.limit if not op.query else len(cands)
        best = heapq.nsmallest(n, cands, key=lambda x: (first[x[2]], x[0], x[1]))
        return it.rank(op, [x[3] for x in best], self._embed if op.query else None, self._fields)

    def via(self, namespace: tuple[str, ...], key: str) -> str | None:
        """The thread whose current lineage the item ``get`` would return comes
        from (in a run, its own thread for its own lineage); ``None`` for an
        item put outside a run, or no item."""
        anchor, thread = self._where(write=False)
        view = _View.of(
            self.store, self.namespace, anchor, thread, shared=self.shared, linked=self._linked
        )
        scrub = None if self.store.redactor is None else Scrub(self.store.redactor)
        m = view.get((tuple(namespace), it.stored_key(key, scrub)))
        if m is None:
            return None
        if view.own is not None and view.own.items.get(it.ident_of(m)) is m:
            return thread
        holders = view.lt.holders.get(m.id, set()) if view.lt is not None else set()
        others = sorted(h for h in holders if h not in (thread, SHARED))
        return others[0] if others else None

    # ------------------------------------------------------------------ writes
    def _apply(
        self,
        anchor: str | None,
        puts: dict[Ident, PutOp],
        olds: dict[Ident, Memory | None],
        now: float,
    ) -> tuple[str, list[Memory], list[str]]:
        """Write ``puts`` from ``anchor`` (``None``: the shared event) at ``now``;
        the anchor written from, the records added and the ids retracted."""
        s, ns = self.store, self.namespace
        if anchor is None:  # a bare write on a shared store
            anchor = k.SHARED_EVENT
            if not self._shared_ready:
                s.add_event(anchor, role="note", namespace=ns)
                self._shared_ready = True
        added: list[Memory] = []
        hid: list[str] = []
        fresh: list[dict[str, Any]] = []
        for ident, op in puts.items():
            namespace, key = ident
            old = olds[ident]
            if op.value is None:
                if old is not None:
                    s.retract(old.id, sources=[anchor], namespace=ns)
                    hid.append(old.id)
                continue
            value = dict(op.value)  # (the Store redacts it with the rest of the meta)
            created = it.data(old)["created_at"] if old is not None else now
            data = {"namespace": list(namespace), "key": key, "value": value,
                    "created_at": created, "updated_at": now,
                    "index": None if op.index is None else op.index}  # fmt: skip
            if op.ttl is not None:  # (kept in the item, not as the record's expiry: `_ttl`)
                data["ttl"] = float(op.ttl)
            fields: dict[str, Any] = {"key": item_key(namespace, key), "meta": {it.MARK: data}}
            text = "\n".join(it.index_texts(value, op.index, self._fields))
            if old is not None:
                added.append(s.supersede(old.id, text, sources=[anchor], namespace=ns, **fields))
                hid.append(old.id)
            else:
                fresh.append({"content": text, "sources": [anchor], "namespace": ns, **fields})
        # The new items in one call. `add_memories`, not `add_memory`: the view
        # already told that no item has this key here, and `add_memory`'s
        # "one fact once" would read every record visible at the anchor to
        # find the same (an expired item's record among them).
        if fresh:
            added += s.add_memories(fresh)
        return anchor, added, hid

    def _tell(self, anchor: str, thread: str | None, added: list[Memory], hid: list[str]) -> None:
        """Bring the long-term view up to date after writes from ``anchor``."""
        lt = view_of(self.store, self.namespace)
        if anchor == k.SHARED_EVENT:
            lt.wrote(added, hid)
        elif thread is None:  # a branchmem anchor: any head may descend from it
            lt.reset()
        elif not anchor.startswith("lg:" + '["task"'):
            lt.refresh(thread)  # a checkpoint: on the thread's head's lineage, maybe
        # (a task's writes reach a head when its step's checkpoint is saved)
