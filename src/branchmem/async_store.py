"""`AsyncStore`: the methods of `Store`, awaitable, for code that runs in an event loop.

Each method is `Store`'s own, generated here from it (same signature, same
docstring, same errors) and run on a worker thread that belongs to the async
store, so the event loop never waits on SQLite, PostgreSQL or the ranker.
That one thread runs the calls one at a time, in the order they were made:
any number of tasks may share one `AsyncStore`, a write never interleaves
with another call on the same connection, and a task's reads see every
write an earlier call made. The store's own answers are returned unchanged.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import os
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Concatenate, ParamSpec, TypeVar

from .redact import Redactor
from .store import Store

P = ParamSpec("P")
T = TypeVar("T")


def _awaitable(
    method: Callable[Concatenate[Any, P], T],
) -> Callable[Concatenate[AsyncStore, P], Coroutine[Any, Any, T]]:
    """`Store`'s ``method``, run on the async store's worker thread and awaited."""

    @functools.wraps(method)
    async def door(self: AsyncStore, /, *args: P.args, **kwargs: P.kwargs) -> T:
        call = functools.partial(method, self._store, *args, **kwargs)
        return await asyncio.get_running_loop().run_in_executor(self._worker, call)

    sig = inspect.signature(method)
    door.__signature__ = sig.replace(return_annotation=f"Awaitable[{sig.return_annotation}]")  # type: ignore[attr-defined]
    return door


class AsyncStore:
    """`Store` for async code: the same arguments, every method awaited.

    ``AsyncStore(path, **options)`` opens ``Store(path, **options)`` on its
    worker thread (the constructor waits for that open, as `Store`'s does);
    ``AsyncStore(store=s)`` wraps a `Store` already open (its calls should
    then go through the async store only). ``async with`` closes it, or
    ``await store.close()``.

    >>> import asyncio
    >>> async def main() -> list[str]:
    ...     async with AsyncStore() as store:
    ...         await store.add_event("e1", content="我下个月搬去成都。")
    ...         await store.add_event("e1b", content="我下个月搬去杭州。")
    ...         await asyncio.gather(
    ...             store.add_memory("用户下个月搬去成都", sources=["e1"]),
    ...             store.add_memory("用户下个月搬去杭州", sources=["e1b"]),
    ...         )
    ...         return [m.content for m in await store.memories(at="e1b")]
    >>> asyncio.run(main())
    ['用户下个月搬去杭州']
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        store: Store | None = None,
        **options: Any,
    ) -> None:
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="branchmem")
        if store is not None and (path is not None or options):
            self._worker.shutdown()
            raise TypeError("pass a path and Store's options, or store=, not both")
        try:
            self._store = (
                store
                if store is not None
                else self._worker.submit(functools.partial(Store, path, **options)).result()
            )
        except BaseException:
            self._worker.shutdown()
            raise

    @property
    def store(self) -> Store:
        """The `Store` underneath (call it from the worker only: ``await`` its twin here)."""
        return self._store

    @property
    def redactor(self) -> Redactor | None:
        """The `Redactor` this store applies before storing text, or ``None``."""
        return self._store.redactor

    async def close(self) -> None:
        """Close the store (after every call made before) and stop its worker thread."""
        loop = asyncio.get_running_loop()
        try:
            await loop.run_in_executor(self._worker, self._store.close)
        finally:
            self._worker.shutdown(wait=False)

    async def __aenter__(self) -> AsyncStore:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # events and records
    add_event = _awaitable(Store.add_event)
    add_events = _awaitable(Store.add_events)
    add_memory = _awaitable(Store.add_memory)
    add_memories = _awaitable(Store.add_memories)
    retract = _awaitable(Store.retract)
    supersede = _awaitable(Store.supersede)
    # reads
    memories = _awaitable(Store.memories)
    visible = _awaitable(Store.visible)
    explain = _awaitable(Store.explain)
    path = _awaitable(Store.path)
    get_event = _awaitable(Store.get_event)
    events = _awaitable(Store.events)
    records = _awaitable(Store.records)
    get_memory = _awaitable(Store.get_memory)
    # the tree
    children = _awaitable(Store.children)
    siblings = _awaitable(Store.siblings)
    versions = _awaitable(Store.versions)
    diff = _awaitable(Store.diff)
    # branches and snapshots
    create_branch = _awaitable(Store.create_branch)
    remember = _awaitable(Store.remember)
    set_branch = _awaitable(Store.set_branch)
    branch_head = _awaitable(Store.branch_head)
    branches = _awaitable(Store.branches)
    delete_branch = _awaitable(Store.delete_branch)
    prune_branches = _awaitable(Store.prune_branches)
    snapshot = _awaitable(Store.snapshot)
    snapshots = _awaitable(Store.snapshots)
    rollback = _awaitable(Store.rollback)
    history = _awaitable(Store.history)
    # merge
    merge = _awaitable(Store.merge)
    conflicts = _awaitable(Store.conflicts)
    resolve = _awaitable(Store.resolve)
    # lifecycle, erasure, audit
    touch = _awaitable(Store.touch)
    score = _awaitable(Store.score)
    archive_expired = _awaitable(Store.archive_expired)
    restore = _awaitable(Store.restore)
    purge = _awaitable(Store.purge)
    checkpoint = _awaitable(Store.checkpoint)
    erasure_pending = _awaitable(Store.erasure_pending)
    info = _awaitable(Store.info)
    audit = _awaitable(Store.audit)
    # the relation graph
    add_edge = _awaitable(Store.add_edge)
    graph = _awaitable(Store.graph)
    # retrieval and the layers built on the public API
    search = _awaitable(Store.search)
    extract = _awaitable(Store.extract)
    context = _awaitable(Store.context)
    import_export = _awaitable(Store.import_export)
    # background work: the extraction queue, consolidation and the profile
    pending = _awaitable(Store.pending)
    start_worker = _awaitable(Store.start_worker)
    consolidate = _awaitable(Store.consolidate)
    profile = _awaitable(Store.profile)
