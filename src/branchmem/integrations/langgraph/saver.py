"""`BranchmemSaver`: a LangGraph checkpointer whose checkpoints are branchmem events.

Each checkpoint is an event in the store's namespace whose parent is its parent
checkpoint, so a thread's checkpoints form the same tree LangGraph's time
travel makes (``update_state`` on an old checkpoint, ``invoke(None, config)``).
When a step of the root graph ran tasks that wrote to a `BranchmemStore`, the
step's checkpoint descends from those tasks' events instead (which descend from
the parent checkpoint): that is how what a step wrote becomes visible in every
later checkpoint of its branch, and in none forked from before it.

Checkpoint data, metadata and pending writes are serialized with the saver's
``serde`` and kept in a bookkeeping namespace per thread: a checkpoint is one
row there, the meta of its root event, and its pending writes are records
sourced from that root (`_checkpoints`). On a Store with a redactor, the
state, metadata and writes are redacted first (`_state`).
"""

from __future__ import annotations

import builtins
import hashlib
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    WRITES_IDX_MAP,
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    get_checkpoint_id,
    get_checkpoint_metadata,
    writes_sort_key,
)
from langgraph.checkpoint.serde.base import SerializerProtocol

from ...errors import InvalidInput, UnknownBranch
from ...model import Event, Memory
from ...store import Store
from ...validate import check_int
from . import _keys as k
from . import _state
from . import _views as _lt
from ._checkpoints import CP, ensure_root, has_root, stored_data, write_checkpoint
from ._order import in_put_order
from ._tasks import config_of as _config
from ._tasks import link_task, one_read, one_transaction, step_tasks, task_of
from ._tasks import thread_and_ns as _thread_and_ns

_WRITE = "write"
_PAGE = 1000


class BranchmemSaver(BaseCheckpointSaver[str]):
    """A LangGraph checkpointer on a branchmem `Store` (sync and async).

    ``namespace`` is the branchmem namespace the checkpoint events go in (default
    ``"default"``); a `BranchmemStore` gated by these checkpoints must use the
    same one.

    >>> from branchmem import Store
    >>> saver = BranchmemSaver(Store())
    >>> saver.get_tuple({"configurable": {"thread_id": "t1"}}) is None
    True
    """

    def __init__(
        self,
        store: Store,
        namespace: str | None = None,
        *,
        serde: SerializerProtocol | None = None,
    ) -> None:
        if not isinstance(store, Store):
            raise InvalidInput(
                f"BranchmemSaver needs a branchmem Store, got {type(store).__name__}; "
                "pass Store('agent.db') or Store()"
            )
        super().__init__(serde=serde)
        self.store = store
        self.namespace = namespace if namespace is not None else "default"
        self._known_threads: set[str] = set()

    # ------------------------------------------------------------ serialization
    def _dump(self, value: Any) -> builtins.list[str]:
        return _state.dump(self.serde, value)

    def _load(self, stored: builtins.list[str]) -> Any:
        return _state.load(self.serde, stored)

    def _redact(self, value: Any) -> Any:
        """State, metadata or a pending write as stored: redacted before it is
        serialised, where the Store has a redactor (docs/redaction.md)."""
        return _state.redacted(self.store.redactor, value)

    def _writes_to(self, config: RunnableConfig) -> tuple[str, str]:
        """The thread and checkpoint namespace a write goes to; on a redacting
        Store, a thread id holding personal data is refused (it is in every id)."""
        thread, cp_ns = _thread_and_ns(config)
        _state.check_thread(self.store.redactor, thread)
        return thread, cp_ns

    # ------------------------------------------------------------------ writes
    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Store ``checkpoint`` as an event under its parent (``config``'s checkpoint)."""
        thread, cp_ns = self._writes_to(config)
        cid = checkpoint["id"]
        parent = get_checkpoint_id(config)
        meta = get_checkpoint_metadata(config, metadata)
        s, ns = self.store, self.namespace
        root = k.checkpoint_root(cp_ns, cid)
        self._register(thread)  # (once per thread, in transactions of its own)
        if self.store.redactor is not None:
            values = self._redact(checkpoint.get("channel_values"))
            checkpoint = {**checkpoint, "channel_values": values}
            meta = self._redact(meta)
        data = {
            "type": CP,
            "checkpoint_ns": cp_ns,
            "checkpoint_id": cid,
            "checkpoint": self._dump(checkpoint),
            "metadata": self._dump(meta),
            "parent": parent,
        }
        # One transaction for the reads and the writes (a commit is most of a
        # small write's cost); the long-term view and waiting tasks are told
        # once it commits. Its first statement reads the caller's namespace,
        # which a store write locks first too (`write_checkpoint`).
        with one_transaction(s):
            lineage: builtins.list[str] = []
            if parent is not None:
                lineage = [k.checkpoint_event(thread, cp_ns, parent)]
                if cp_ns == "" and meta.get("source") == "loop":
                    # The step ran from `parent`; the tasks that wrote to the
                    # store sit between it and this checkpoint.
                    lineage = step_tasks(s, ns, thread, parent) or lineage
            newest = write_checkpoint(s, ns, thread, cp_ns, cid, root, lineage, data)
        event = k.checkpoint_event(thread, cp_ns, cid)
        if newest and cp_ns == "":  # the thread's head moved: the long-term view follows
            _lt.head_moved(s, ns, thread, event, lineage)
        _lt.saved(s, event)  # a task may be waiting for it
        return _config(thread, cp_ns, cid)

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Store a task's pending writes on ``config``'s checkpoint. A regular write
        already stored for the same task and index is kept; special ones
        (errors, interrupts, resumes) replace the stored one."""
        thread, cp_ns = self._writes_to(config)
        cid = get_checkpoint_id(config)
        if cid is None:
            raise InvalidInput("put_writes needs a config with a checkpoint_id")
        # One commit for the call; regular writes are synced by the step's
        # checkpoint that follows them, special ones (an error, an interrupt:
        # no checkpoint may follow for a while) at once.
        synced = any(channel in WRITES_IDX_MAP for channel, _ in writes)
        with one_transaction(self.store, synced=synced):
            tns = k.thread_namespace(self.namespace, thread)
            root = k.checkpoint_root(cp_ns, cid)
            ensure_root(self.store, tns, root)  # (writes may come before their checkpoint)
            records = self._records(tns, root)
            stored = {
                (m.meta["task_id"], m.meta["idx"]): m
                for m in records
                if m.meta and m.meta.get("type") == _WRITE
            }
            # The call's writes by (task, index), like the stored ones: a regular
            # write keeps the first value, a special one the last.
            wanted: dict[tuple[str, int], dict[str, Any]] = {}
            for idx, (channel, value) in enumerate(writes):
                widx = WRITES_IDX_MAP.get(channel, idx)
                key = (task_id, widx)
                if widx >= 0 and (key in stored or key in wanted):
                    continue
                wanted[key] = {
                    "type": _WRITE,
                    "task_id": task_id,
                    "idx": widx,
                    "channel": channel,
                    "task_path": task_path,
                    "value": self._dump(self._redact(value)),
                }
            new = []
            for key, data in wanted.items():
                old = stored.get(key)
                if old is None:
                    new.append({"content": "", "sources": [root], "kind": "working",
                                "namespace": tns, "meta": data})  # fmt: skip
                else:
                    self.store.supersede(old.id, "", sources=[root], namespace=tns, meta=data)
            if new:
                self.store.add_memories(new)

    def link_task(self, config: RunnableConfig) -> str:
        """The event a root-graph task's store writes are sourced from, created on
        first use (its parent is the checkpoint the task runs on). Called by
        `BranchmemStore`; ``config`` is the task's."""
        thread, cid, task_id = task_of(config)
        return link_task(self.store, self.namespace, thread, cid, task_id)

    # ------------------------------------------------------------------- reads
    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """The checkpoint ``config`` names, or the thread's newest one in its
        checkpoint namespace; ``None`` if there is none."""
        thread, cp_ns = _thread_and_ns(config)
        tns = k.thread_namespace(self.namespace, thread)
        with one_read(self.store):
            cid = get_checkpoint_id(config) or self._latest(tns, cp_ns)
            if cid is None:
                return None
            tup = self._tuple(thread, tns, cp_ns, cid)
        if tup is not None:  # a run that starts here need not ask the backend again
            _lt.saved(self.store, k.checkpoint_event(thread, cp_ns, cid))
        return tup

    def _tuple(self, thread: str, tns: str, cp_ns: str, cid: str) -> CheckpointTuple | None:
        root = k.checkpoint_root(cp_ns, cid)
        try:
            meta = self.store.get_event(root, namespace=tns).meta
        except KeyError:  # UnknownEvent: no such checkpoint
            return None
        recs = self._records(tns, root)
        # Data at the root is newer than the root's own (`_checkpoints`).
        data = [m.meta for m in stored_data(recs) if m.meta]
        d = data[-1] if data else meta if meta and meta.get("type") == CP else None
        if d is None:
            return None
        writes = sorted(
            (m.meta for m in recs if m.meta and m.meta.get("type") == _WRITE),
            key=lambda w: writes_sort_key(w["task_path"], w["task_id"], w["idx"]),
        )
        parent = d["parent"]
        return CheckpointTuple(
            config=_config(thread, cp_ns, cid),
            checkpoint=self._load(d["checkpoint"]),
            metadata=self._load(d["metadata"]),
            parent_config=_config(thread, cp_ns, parent) if parent else None,
            pending_writes=[(w["task_id"], w["channel"], self._load(w["value"])) for w in writes],
        )

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        """Checkpoints newest first (per thread and checkpoint namespace), narrowed
        by ``config`` (thread, namespace, id), metadata ``filter`` equality,
        ``before`` (ids older than its checkpoint) and ``limit``."""
        if config is not None:
            threads = [config["configurable"]["thread_id"]]
            want_ns = config["configurable"].get("checkpoint_ns")
            want_id = get_checkpoint_id(config)
        else:
            threads, want_ns, want_id = self._threads(), None, None
        before_id = get_checkpoint_id(before) if before else None
        if filter:  # compared with metadata as stored: redacted
            filter = self._redact(dict(filter))
        left = None if limit is None else check_int(limit, "limit")
        for thread in threads:
            tns = k.thread_namespace(self.namespace, thread)
            for cp_ns, cid in self._checkpoints(tns):
                if want_ns is not None and cp_ns != want_ns:
                    continue
                if (want_id and cid != want_id) or (before_id and cid >= before_id):
                    continue
                if left is not None and left <= 0:
                    return
                tup = self._tuple(thread, tns, cp_ns, cid)
                if tup is None:
                    continue
                if filter and not all(tup.metadata.get(q) == v for q, v in filter.items()):
                    continue
                if left is not None:
                    left -= 1
                yield tup

    def _checkpoints(self, tns: str) -> builtins.list[tuple[str, str]]:
        """A thread's (checkpoint_ns, checkpoint_id) pairs: by namespace in the
        order of their first put, newest id first within each (`in_put_order`):
        the roots that hold their data and the listing records."""
        roots: builtins.list[tuple[float, tuple[str, str]]] = []
        offset = 0
        while page := self._events(tns, offset):
            offset += len(page)
            roots += [
                (e.created_at, (e.meta["checkpoint_ns"], e.meta["checkpoint_id"]))
                for e in page
                if e.meta and e.meta.get("type") == CP
            ]
        listed = [
            (m.created_at, (m.meta["checkpoint_ns"], m.meta["checkpoint_id"]))
            for m in self._records(tns, k.THREAD_ROOT)
            if m.meta
        ]
        return in_put_order(roots, listed)

    def _events(self, tns: str, offset: int, limit: int = _PAGE) -> builtins.list[Event]:
        try:
            return self.store.events(namespace=tns, offset=offset, limit=limit)
        except KeyError:  # nothing stored in the namespace yet
            return []

    def _records(self, ns: str, at: str) -> builtins.list[Memory]:
        try:
            return self.store.memories(at=at, namespace=ns, include_archived=True)
        except KeyError:  # UnknownAnchor: nothing stored there yet
            return []

    def _latest(self, tns: str, cp_ns: str) -> str | None:
        try:
            head = self.store.branch_head(k.latest_branch(cp_ns), namespace=tns)
        except UnknownBranch:
            return None
        return k.checkpoint_of_root(head)

    def _threads(self) -> builtins.list[str]:
        reg = k.registry_namespace(self.namespace)
        return [m.meta["thread_id"] for m in self._records(reg, k.THREADS_ROOT) if m.meta]

    def _register(self, thread: str) -> None:
        if thread in self._known_threads:
            return
        reg = k.registry_namespace(self.namespace)
        tns = k.thread_namespace(self.namespace, thread)
        # Listed before anything is written in its namespace: a whole-namespace
        # purge finds every thread namespace from the list (`branchmem.derived`).
        self.store.add_event(k.THREADS_ROOT, role="note", namespace=reg)
        self.store.add_memory(
            "", sources=[k.THREADS_ROOT], kind="working", namespace=reg,
            id=k.thread_record(thread), meta={"thread_id": thread},
        )  # fmt: skip
        self.store.add_event(k.THREAD_ROOT, role="note", namespace=tns)
        self._known_threads.add(thread)

    # --------------------------------------------------------------- deletion
    def delete_thread(self, thread_id: str) -> None:
        """Forget a thread's checkpoints and writes. The lineage events stay (they
        hold only ids), so store memories written on the thread keep their gate."""
        # The thread's namespace first, then its listing: a thread namespace
        # is never left unlisted (`branchmem.derived`).
        tns = k.thread_namespace(self.namespace, thread_id)
        if self._events(tns, 0, limit=1):
            self.store.purge(whole_namespace=True, namespace=tns)
        reg = k.registry_namespace(self.namespace)
        tid = k.thread_record(thread_id)
        if any(m.id == tid for m in self._records(reg, k.THREADS_ROOT)):
            self.store.purge(memories=[tid], namespace=reg)
        self._known_threads.discard(thread_id)
        _lt.head_moved(self.store, self.namespace, thread_id, None)

    def _drop(self, thread: str, pairs: builtins.list[tuple[str, str]]) -> None:
        """Forget some checkpoints of a thread: their data, writes and listing
        (their roots are blanked: the data some of them hold goes with it)."""
        tns = k.thread_namespace(self.namespace, thread)
        roots: builtins.list[str] = []
        doomed: builtins.list[str] = []
        listed = {m.id for m in self._records(tns, k.THREAD_ROOT)}
        for cp_ns, cid in pairs:
            root = k.checkpoint_root(cp_ns, cid)
            if has_root(self.store, tns, root):
                roots.append(root)
                doomed += [m.id for m in self._records(tns, root)]
            if (ls := k.listing_record(cp_ns, cid)) in listed:
                doomed.append(ls)
        if roots or doomed:
            self.store.purge(events=roots, memories=doomed, namespace=tns)

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        """Forget every checkpoint whose metadata ``run_id`` is one of ``run_ids``."""
        runs = set(run_ids)
        if not runs:
            return
        for thread in self._threads():
            tns = k.thread_namespace(self.namespace, thread)
            doomed = [
                (cp_ns, cid)
                for cp_ns, cid in self._checkpoints(tns)
                if (t := self._tuple(thread, tns, cp_ns, cid)) is not None
                and t.metadata.get("run_id") in runs
            ]
            self._drop(thread, doomed)

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """``"keep_latest"`` keeps each checkpoint namespace's newest checkpoint of
        each thread; ``"delete"`` forgets the threads."""
        if strategy not in ("keep_latest", "delete"):
            raise InvalidInput(
                f"unknown prune strategy {strategy!r}; use 'keep_latest' or 'delete'"
            )
        for thread in thread_ids:
            if strategy == "delete":
                self.delete_thread(thread)
                continue
            tns = k.thread_namespace(self.namespace, thread)
            seen: set[str] = set()
            doomed = []
            for cp_ns, cid in self._checkpoints(tns):
                if cp_ns in seen:
                    doomed.append((cp_ns, cid))
                seen.add(cp_ns)
            self._drop(thread, doomed)

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Copy every checkpoint (with its parent link) and pending write of one
        thread to another, oldest first."""
        src = k.thread_namespace(self.namespace, source_thread_id)
        for cp_ns, cid in reversed(self._checkpoints(src)):
            tup = self._tuple(source_thread_id, src, cp_ns, cid)
            if tup is None:
                continue
            parent = get_checkpoint_id(tup.parent_config) if tup.parent_config else None
            cfg = _config(target_thread_id, cp_ns, parent)
            self.put(cfg, tup.checkpoint, tup.metadata, {})
            by_task: dict[str, list[tuple[str, Any]]] = {}
            for task_id, channel, value in tup.pending_writes or ():
                by_task.setdefault(task_id, []).append((channel, value))
            for task_id, writes in by_task.items():
                self.put_writes(_config(target_thread_id, cp_ns, cid), writes, task_id)

    # ------------------------------------------------------------------- async
    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return self.get_tuple(config)

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        for tup in self.list(config, filter=filter, before=before, limit=limit):
            yield tup

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        return self.put(config, checkpoint, metadata, new_versions)

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        self.put_writes(config, writes, task_id, task_path)

    async def adelete_thread(self, thread_id: str) -> None:
        self.delete_thread(thread_id)

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        self.delete_for_runs(run_ids)

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        self.copy_thread(source_thread_id, target_thread_id)

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        self.prune(thread_ids, strategy=strategy)

    def get_next_version(self, current: str | None, channel: None) -> str:
        """Versions that sort as strings: a zero-padded counter and a hash."""
        n = 0 if current is None else int(str(current).split(".")[0])
        tail = hashlib.sha1(f"{n}".encode()).hexdigest()[:16]
        return f"{n + 1:032}.{tail}"
