"""`BranchmemSession`: the Agents SDK's `Session` protocol on a branchmem `Store`.

A session is a branch. Each item the SDK adds is an event under the branch's
head (the head moves to it); ``get_items`` reads the path from the session's
root to its head. ``pop_item`` moves the head back to the popped item's
parent and deletes nothing: a memory sourced from the popped item is hidden
at the new head (the provenance gate), and returns if the head comes back
(`move_to`). ``add_items`` after a pop writes a sibling of the popped item.
``clear_session`` moves the head to a new, empty root. `fork` starts another
session at any item (its history up to there is the fork's).

The SDK's calls are async; each runs the `Store`'s blocking call in a worker
thread (``asyncio.to_thread``), so the event loop is never blocked.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from agents.memory.session_settings import (
    SessionSettings,
    coerce_session_settings,
    resolve_session_limit,
)

from ...context import Context
from ...errors import BranchExists, InvalidInput, UnknownBranch
from ...model import Event, Memory, new_event_id
from ...store import Store
from ._items import ITEM, ROOT, role_of, text_of

if TYPE_CHECKING:
    from agents.items import TResponseInputItem


def branch_of(session_id: str) -> str:
    """The branch a session id names (a hash: branch names hold no spaces, and
    session ids may hold anything)."""
    return "agents-session/" + hashlib.sha256(session_id.encode()).hexdigest()[:40]


class BranchmemSession:
    """A conversation of the Agents SDK kept as a branch of a branchmem `Store`.

    ``session_id`` names the session (several `BranchmemSession` objects, in
    any process, with the same id and store are one session); ``namespace``
    is the branchmem namespace its events and memories live in; ``scope`` are
    further anchors (branch names, event ids) that `context` and
    `memory_tool` read after the session's head, such as a user's long-term
    branch; ``session_settings`` as the SDK's (its ``limit`` bounds
    `get_items`).

    >>> import asyncio
    >>> from branchmem import Store
    >>> s = BranchmemSession("chat-1", Store())
    >>> asyncio.run(s.add_items([{"role": "user", "content": "我下个月搬去成都"}]))
    >>> asyncio.run(s.pop_item())
    {'role': 'user', 'content': '我下个月搬去成都'}
    >>> asyncio.run(s.get_items())
    []
    """

    def __init__(
        self,
        session_id: str,
        store: Store,
        *,
        namespace: str = "default",
        scope: Sequence[str] = (),
        session_settings: SessionSettings | dict[str, Any] | None = None,
    ) -> None:
        if not isinstance(session_id, str) or not session_id:
            raise InvalidInput(f"session_id must be a non-empty string, got {session_id!r}")
        if not isinstance(store, Store):
            raise InvalidInput(
                f"BranchmemSession needs a branchmem Store, got {type(store).__name__}"
            )
        self.session_id = session_id
        self.store = store
        self.namespace = namespace
        self.scope = list(scope)
        self.session_settings = (
            SessionSettings()
            if session_settings is None
            else coerce_session_settings(session_settings)
        )
        self.branch = branch_of(session_id)

    # ------------------------------------------------------- the SDK's Session
    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        """The items on the path from the session's root to its head, oldest
        first; with ``limit`` (or ``session_settings.limit``), the last
        ``limit`` of them."""
        limit = resolve_session_limit(limit, self.session_settings)
        events = await asyncio.to_thread(self._path, limit)
        return [ev.meta[ITEM] for ev in events]  # type: ignore[index]

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        """Append ``items`` under the head, one event each; the head moves to the last."""
        if items:
            await asyncio.to_thread(self._add, [dict(i) for i in items])

    async def pop_item(self) -> TResponseInputItem | None:
        """Move the head back to its parent and return the item it was on
        (``None`` for an empty session). Nothing is deleted."""
        return await asyncio.to_thread(self._pop)

    async def clear_session(self) -> None:
        """Move the head to a new, empty root. Nothing is deleted: the old
        items stay reachable by their event ids (`move_to`, `fork`)."""
        await asyncio.to_thread(self._new_root)

    # ----------------------------------------------------------- branchmem's
    async def head(self) -> str | None:
        """The event id of the head (the newest item; the root of an empty
        session), ``None`` before the first item."""
        return await asyncio.to_thread(self._head)

    async def item_ids(self, limit: int | None = None) -> list[str]:
        """The event ids of `get_items`' items, in the same order: what
        `fork`, `move_to` and `remember` take."""
        limit = resolve_session_limit(limit, self.session_settings)
        return [ev.id for ev in await asyncio.to_thread(self._path, limit)]

    async def move_to(self, event_id: str) -> None:
        """Move the head to ``event_id`` (an item this session had, such as the
        one `pop_item` left): its memories are visible again."""
        await asyncio.to_thread(
            self.store.set_branch, self.branch, event_id, namespace=self.namespace
        )

    async def fork(self, session_id: str, at: str | None = None) -> BranchmemSession:
        """A new session ``session_id`` whose history is this one's up to the
        item ``at`` (an event id of `item_ids`; default the head): the chat
        UI's "branch from here". It sees the memories sourced from that
        history, and none from what this session adds later."""
        fork = BranchmemSession(
            session_id, self.store, namespace=self.namespace, scope=self.scope,
            session_settings=self.session_settings,
        )  # fmt: skip
        anchor = at if at is not None else await self.head()
        if anchor is None:
            raise InvalidInput(f"session {self.session_id!r} has no items to fork from")
        await fork.move_to(anchor)
        return fork

    async def remember(self, content: str, *, at: str | None = None, **fields: Any) -> Memory:
        """Add a memory sourced from the item ``at`` (default the head): it is
        visible while the head is that item or below it, in this session and
        in every fork of it. ``fields`` are `Store.add_memory`'s."""
        anchor = at if at is not None else await self.head()
        if anchor is None:
            raise InvalidInput("remember() needs an item to source the memory from; add one")
        return await asyncio.to_thread(
            self.store.add_memory, content, sources=[anchor], namespace=self.namespace, **fields
        )

    async def context(self, query: str | None = None, **options: Any) -> Context:
        """`Store.context` at the head (then ``scope``): the memories visible
        there, ranked for ``query``, and the last messages (``window``, 8 by
        default). An empty session sees ``scope`` only."""
        head = await self.head()
        at = [a for a in [head, *self.scope] if a is not None]
        return await asyncio.to_thread(
            self.store.context, at or None, query=query, namespace=self.namespace, **options
        )

    # ------------------------------------------------------------------ sync
    def _head(self) -> str | None:
        try:
            return self.store.branch_head(self.branch, namespace=self.namespace)
        except UnknownBranch:
            return None

    def _path(self, limit: int | None) -> list[Event]:
        head = self._head()
        if head is None or limit == 0:
            return []
        last = None if limit is None else limit + 1  # (the root is one of them)
        path = self.store.path(head, namespace=self.namespace, last=last)
        # the items after the session's root (a fork's path goes on through
        # the root of the session it was forked from)
        items = [ev for ev in path if ev.meta is not None and ITEM in ev.meta]
        return items if limit is None else items[-limit:]

    def _new_root(self, *, first: bool = False) -> None:
        """Move the head to a new root (``first``: unless another writer of the
        session, in this process or another, made its branch first)."""
        root = new_event_id()
        self.store.add_event(
            root, role="note", namespace=self.namespace, meta={ROOT: self.session_id}
        )
        if not first:
            self.store.set_branch(self.branch, root, namespace=self.namespace)
            return
        with contextlib.suppress(BranchExists):  # (their root is the session's)
            self.store.create_branch(self.branch, at=root, namespace=self.namespace)

    def _add(self, items: list[dict[str, Any]]) -> None:
        if self._head() is None:
            self._new_root(first=True)
        for item in items:
            self.store.add_event(
                new_event_id(), branch=self.branch, role=role_of(item), content=text_of(item),
                namespace=self.namespace, meta={ITEM: item},
            )  # fmt: skip

    def _pop(self) -> Any:
        head = self._head()
        if head is None:
            return None
        ev = self.store.get_event(head, namespace=self.namespace)
        if ev.meta is None or ITEM not in ev.meta or not ev.parents:
            return None  # the root: no item to pop
        self.store.set_branch(
            self.branch, ev.parents[0], namespace=self.namespace, expected_head=head
        )
        return ev.meta[ITEM]
