"""`BranchmemMemoryService`: ADK's `BaseMemoryService` on a branchmem `Store`.

Each ADK session is a branch. `add_session_to_memory` stores the session's
live events (ADK's own rule: a rewind drops the invocations it rewinds) as a
chain of branchmem events under the session's root, each under the live
event before it, and moves the session's branch head to the last one; every
event with text gets one memory sourced from it. So a rewind, once the
session is added again, is a head move: the rewound events fall off the
lineage and their memories are hidden, and the events that follow form a
sibling branch. `add_events_to_memory` (ADK's delta) does the same when a
rewind event comes among the events it is given. Nothing is deleted.

`search_memory(app_name, user_id, query)` (ADK gives it no session) searches
what the user's sessions' current lineages hold: the scope chain of every
session head of that user, plus the user's root, which memories written by
`add_memory` are sourced from. `search_session` searches one session's
lineage only.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

from google.adk.events._rewind_events import _apply_rewinds
from google.adk.events.event import Event as AdkEvent
from google.adk.memory import _utils
from google.adk.memory.base_memory_service import BaseMemoryService, SearchMemoryResponse
from google.adk.memory.memory_entry import MemoryEntry
from google.adk.sessions.session import Session
from google.genai import types

from ...errors import InvalidInput, UnknownBranch
from ...model import Memory
from ...retrieval import Hit
from ...store import Store

META = "adk"
"""The meta key of the events and memories this service writes."""


def _h(*parts: str) -> str:
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:32]


def text_of(event: AdkEvent) -> str:
    """The text of an ADK event: its content's text parts, joined."""
    if event.content is None or not event.content.parts:
        return ""
    return "\n".join(p.text for p in event.content.parts if p.text)


def _rewinds(event: AdkEvent) -> str | None:
    """The invocation an ADK rewind event rewinds (None for any other event)."""
    return event.actions.rewind_before_invocation_id if event.actions else None


def _invocation(meta: Mapping[str, Any] | None) -> str | None:
    """The ADK invocation id a stored event was written with (None before it was kept)."""
    info = (meta or {}).get(META)
    return info.get("invocation_id") if isinstance(info, Mapping) else None


def _rewound(chain: list[tuple[str, str | None]], target: str) -> list[tuple[str, str | None]]:
    """``chain`` cut before the first event of invocation ``target``, ADK's own
    rule (`_apply_rewinds`); unchanged when it holds none of it."""
    for i, (_, inv) in enumerate(chain):
        if inv == target:
            return chain[:i]
    return chain


class BranchmemMemoryService(BaseMemoryService):
    """ADK's memory service on a branchmem `Store`, gated by session lineage.

    ``namespace`` is the branchmem namespace its events and memories live in;
    ``k`` the most memories a search returns (ADK's own service returns ten);
    ``search`` further keywords of `Store.search` (``mode``, ``embedder``...).
    """

    def __init__(
        self,
        store: Store,
        *,
        namespace: str = "default",
        k: int = 10,
        search: Mapping[str, Any] | None = None,
    ) -> None:
        if not isinstance(store, Store):
            raise InvalidInput(
                f"BranchmemMemoryService needs a branchmem Store, got {type(store).__name__}"
            )
        self.store = store
        self.namespace = namespace
        self.k = k
        self.search_options = dict(search or {})
        self._roots: set[str] = set()  # the user roots this service has made

    # ------------------------------------------------------------ names
    def user_prefix(self, app_name: str, user_id: str) -> str:
        return f"adk/{_h(app_name, user_id)}"

    def branch_of(self, app_name: str, user_id: str, session_id: str) -> str:
        """The branch of an ADK session (its head: the last live event added)."""
        return f"{self.user_prefix(app_name, user_id)}/{_h(session_id)}"

    def _event_id(self, branch: str, event: AdkEvent) -> str:
        return f"{branch}/{event.id}"

    # ----------------------------------------------------- ADK's interface
    async def add_session_to_memory(self, session: Session) -> None:
        """Store the session's live events and move its head to the last one
        (after a rewind: back, so what the rewound events said is hidden)."""
        await asyncio.to_thread(self._add_session, session)

    async def add_events_to_memory(
        self,
        *,
        app_name: str,
        user_id: str,
        events: Sequence[AdkEvent],
        session_id: str | None = None,
        custom_metadata: Mapping[str, object] | None = None,
    ) -> None:
        """Append ``events`` under the session's head, in order (ADK's delta).

        A rewind among them (``actions.rewind_before_invocation_id``) moves
        the head back to before the rewound invocation's first event, where
        this service stored it (in this delta or an earlier one), so the
        events after the rewind follow as a sibling branch and what the
        rewound invocation said is hidden."""
        if session_id is None:
            raise InvalidInput(
                "add_events_to_memory needs session_id: memories are gated by the "
                "session's lineage (or call add_session_to_memory(session))"
            )
        given = [e for e in events if e.id or _rewinds(e)]
        await asyncio.to_thread(self._append, app_name, user_id, session_id, given, None)

    async def add_memory(
        self,
        *,
        app_name: str,
        user_id: str,
        memories: Sequence[MemoryEntry],
        custom_metadata: Mapping[str, object] | None = None,
    ) -> None:
        """Memories of the user, sourced from the user's root: visible in every
        search of the user."""
        await asyncio.to_thread(self._add_memories, app_name, user_id, list(memories))

    async def search_memory(
        self, *, app_name: str, user_id: str, query: str
    ) -> SearchMemoryResponse:
        """The memories best ranked for ``query`` among those visible at the
        head of any of the user's sessions (and the user's own)."""
        return await asyncio.to_thread(self._search, app_name, user_id, query, None)

    async def search_session(self, session: Session, query: str) -> SearchMemoryResponse:
        """`search_memory` gated at one session's head (and the user's root)."""
        return await asyncio.to_thread(
            self._search, session.app_name, session.user_id, query, session.id
        )

    async def delete_memory(
        self, *, app_name: str, user_id: str, memory_id: str | None = None
    ) -> None:
        """Retract a memory for the user (a retraction sourced from the user's root)."""
        if memory_id:
            await asyncio.to_thread(
                self.store.retract, memory_id, sources=[self._user_root(app_name, user_id)],
                namespace=self.namespace,
            )  # fmt: skip

    # ------------------------------------------------------------------ sync
    def _user_root(self, app_name: str, user_id: str) -> str:
        root = f"{self.user_prefix(app_name, user_id)}/user"
        if root not in self._roots:  # (adding it again is a no-op, but a write)
            meta = {META: {"app_name": app_name, "user_id": user_id}}
            self.store.add_events([{"id": root, "role": "note", "namespace": self.namespace,
                                    "meta": meta}])  # fmt: skip
            self._roots.add(root)
        return root

    def _head(self, branch: str) -> str | None:
        try:
            return self.store.branch_head(branch, namespace=self.namespace)
        except UnknownBranch:
            return None

    def _add_session(self, session: Session) -> None:
        live = [e for e in _apply_rewinds(list(session.events)) if e.id]
        self._append(session.app_name, session.user_id, session.id, live, root_first=True)

    def _append(
        self,
        app_name: str,
        user_id: str,
        session_id: str,
        live: list[AdkEvent],
        root_first: bool | None,
    ) -> None:
        """Store ``live`` as a chain: the whole live history (``root_first``),
        or a delta under the current head (``None``), whose rewinds move the
        chain's end back (`_rewound`)."""
        branch = self.branch_of(app_name, user_id, session_id)
        ns = self.namespace
        self._user_root(app_name, user_id)  # (every search of the user reads at it)
        root = f"{branch}/root"
        meta = {META: {"app_name": app_name, "user_id": user_id, "session_id": session_id}}
        self.store.add_events([{"id": root, "role": "note", "namespace": ns, "meta": meta}])
        head = self._head(branch)
        path = self.store.path(head, namespace=ns) if head else []
        known = {ev.id for ev in path}
        # The chain so far, (event id, invocation id), from the root's child.
        chain = [] if root_first else [(e.id, _invocation(e.meta)) for e in path if e.id != root]
        rows: list[dict[str, Any]] = []
        mems: list[dict[str, Any]] = []
        for event in live:
            target = _rewinds(event)
            if target:
                chain = _rewound(chain, target)
                continue
            eid = self._event_id(branch, event)
            prev = chain[-1][0] if chain else root
            chain.append((eid, event.invocation_id or None))
            if eid not in known:
                text = text_of(event)
                info = {"event_id": event.id, "author": event.author,
                        "timestamp": event.timestamp, "session_id": session_id,
                        "invocation_id": event.invocation_id}  # fmt: skip
                role = "user" if event.author == "user" else "assistant"
                rows.append({"id": eid, "parent": prev, "role": role, "content": text,
                             "namespace": ns, "meta": {META: info}})  # fmt: skip
                if text:
                    mems.append({"content": text, "sources": [eid], "kind": "episodic",
                                 "namespace": ns, "id": f"{eid}/memory",
                                 "meta": {META: info}})  # fmt: skip
        if rows:
            self.store.add_events(rows)
        if mems:
            self.store.add_memories(mems)
        self.store.set_branch(branch, chain[-1][0] if chain else root, namespace=ns)

    def _add_memories(self, app_name: str, user_id: str, memories: list[MemoryEntry]) -> None:
        root = self._user_root(app_name, user_id)
        rows = []
        for entry in memories:
            text = "\n".join(p.text for p in entry.content.parts or [] if p.text)
            info = {"author": entry.author, "timestamp": entry.timestamp,
                    "custom_metadata": dict(entry.custom_metadata)}  # fmt: skip
            row: dict[str, Any] = {"content": text, "sources": [root], "kind": "semantic",
                                   "namespace": self.namespace, "meta": {META: info}}  # fmt: skip
            if entry.id:
                row["id"] = entry.id
            rows.append(row)
        self.store.add_memories(rows)

    def _search(
        self, app_name: str, user_id: str, query: str, session_id: str | None
    ) -> SearchMemoryResponse:
        root = self._user_root(app_name, user_id)
        if session_id is not None:
            head = self._head(self.branch_of(app_name, user_id, session_id))
            heads = [head] if head else []
        else:
            prefix = self.user_prefix(app_name, user_id) + "/"
            branches = self.store.branches(namespace=self.namespace, count=False)
            heads = [b.head for b in branches if b.name.startswith(prefix)]
        hits = self.store.search(
            query, at=[*heads, root], k=self.k, namespace=self.namespace,
            **self.search_options,
        )  # fmt: skip
        return SearchMemoryResponse(memories=[self._entry(h) for h in hits])

    @staticmethod
    def _entry(hit: Hit) -> MemoryEntry:
        m: Memory = hit.memory
        info = (m.meta or {}).get(META) or {}
        stamp = info.get("timestamp")
        author = info.get("author")
        role = "user" if author == "user" else "model"
        return MemoryEntry(
            id=m.id,
            content=types.Content(role=role, parts=[types.Part(text=m.content)]),
            author=author,
            timestamp=_utils.format_timestamp(stamp) if isinstance(stamp, float) else stamp,
            custom_metadata=dict(info.get("custom_metadata") or {}),
        )
