"""What every request of a served store shares (`Served`): the store and its
connections, the keys, the limits, the pool that runs store calls and the
background embedder. The routes (`branchmem.server.app`) and the MCP tools
(`branchmem.server.mcp_tools`) run every store call through `Served.run`.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from ..extract.worker import Worker
from ..notices import caught_warnings
from ..retrieval.background import BackgroundEmbedder, keeps_vectors
from ..retrieval.embed import Embedder
from ..store import Store
from .auth import ANONYMOUS, KeyStore, Principal
from .errors import TooManyRequests, Unauthorized
from .pool import Connections, FairPool, InFlight
from .service import Ctx, Limits

T = TypeVar("T")

WORKERS = 8
"""Store calls a server runs at once (`branchmem serve --workers`)."""


@dataclass(frozen=True)
class Call(Ctx):
    """A served call's `Ctx`, with the key it came with (for the per-key limit)."""

    caller: str = ""


class Served:
    """What every request shares: the store, the keys, the limits, the pool of
    workers that run store calls, their store connections, and the background
    embedder.

    ``connect`` opens another connection to the same store: given (the CLI
    does for an SQLite file), each worker gets one of its own, so reads run
    side by side; without it every worker calls ``store`` (right for the
    in-memory backend, whose lock serializes each call's reads and writes,
    and for PostgreSQL, whose own pool runs them at once). ``background``
    embeds written records on a thread of its own (`BackgroundEmbedder`);
    ``worker`` runs the extraction queue's jobs on another (`Worker`, the rules).
    """

    def __init__(
        self,
        store: Store,
        keys: KeyStore | None,
        limits: Limits,
        embedder: Embedder | str | None,
        *,
        workers: int = WORKERS,
        connect: Callable[[], Store] | None = None,
        background: bool = True,
        worker: bool = False,
    ) -> None:
        self.keys = keys
        self.limits = limits
        self.embedder = embedder
        self.workers = workers
        self._connect = connect
        self._background = background
        self._worker = worker
        self.extraction: Worker | None = None
        self.inflight = InFlight(limits.max_concurrent)
        self.pool = FairPool(workers)
        self.store = store
        self.connections = Connections(store)
        self.embedding: BackgroundEmbedder | None = None
        self.use(store, keys)

    def use(self, store: Store, keys: KeyStore | None) -> None:
        """Serve ``store`` with ``keys`` from now on (a fresh pool, connections
        and background embedder)."""
        self.close()
        self.store, self.keys = store, keys
        own = [self._connect() for _ in range(self.workers)] if self._connect else []
        self.connections = Connections(store, own)
        self.pool = FairPool(self.workers)
        self.inflight = InFlight(self.limits.max_concurrent)
        if self._background and keeps_vectors(store):
            bg = BackgroundEmbedder(store, self.embedder, budget=self.limits.max_embed)
            for s in own:
                bg.attach(s)
            self.embedding = bg
        if self._worker:
            self.extraction = Worker(store).start()

    def close(self) -> None:
        """Stop the workers and the background embedder, close own connections
        (the store itself is the caller's)."""
        self.pool.close()
        if self.extraction is not None:
            self.extraction.close()
            self.extraction = None
        if self.embedding is not None:
            self.embedding.close()
            self.embedding = None
        self.connections.close()

    def principal(self, key: str | None) -> Principal:
        """The principal of a key (``keys=None``: an unauthenticated server)."""
        if self.keys is None:
            return ANONYMOUS
        if not key:
            raise Unauthorized(
                "no API key: send `Authorization: Bearer KEY` or `X-API-Key: KEY` "
                "(`branchmem keys create` makes one)"
            )
        who = self.keys.authenticate(key)
        if who is None:
            raise Unauthorized("unknown or revoked API key; `branchmem keys list` shows the keys")
        return who

    def ctx(self, who: Principal, key: str | None) -> Call:
        """The `Ctx` of a call by ``who`` with ``key`` (its id counts for the limit)."""
        caller = key.split("_")[1] if self.keys is not None and key else who.name
        return Call(self.store, who, self.limits, self.embedder, caller)

    async def run(self, fn: Callable[..., T], ctx: Ctx, namespace: str, *args: Any, **kw: Any) -> T:
        """Run ``fn(ctx, namespace, ...)`` in the pool, on a connection of its own."""
        return (await self.written(fn, ctx, namespace, *args, **kw))[0]

    async def written(
        self, fn: Callable[..., T], ctx: Ctx, namespace: str, *args: Any, **kw: Any
    ) -> tuple[T, list[dict[str, Any]]]:
        """`run`, and the warnings of the call's writes (`BranchmemWarning.to_dict`):
        collected for this call alone, never issued to the server's `warnings`."""
        caller = ctx.caller if isinstance(ctx, Call) else ctx.who.name
        if not self.inflight.enter(caller):
            raise TooManyRequests(self.limits.max_concurrent)
        try:
            job = functools.partial(self._call, fn, ctx, namespace, args, kw)
            fut = self.pool.submit(namespace, job)
        except BaseException:
            self.inflight.leave(caller)
            raise
        fut.add_done_callback(lambda _: self.inflight.leave(caller))
        return await asyncio.wrap_future(fut)

    def _call(
        self, fn: Callable[..., T], ctx: Ctx, namespace: str, args: Any, kw: dict[str, Any]
    ) -> tuple[T, list[dict[str, Any]]]:
        store, token = self.connections.checkout(namespace)
        try:
            with caught_warnings() as caught:
                done = fn(replace(ctx, store=store), namespace, *args, **kw)
            return done, [w.to_dict() for w in caught]
        finally:
            self.connections.checkin(token)
