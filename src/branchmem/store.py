"""`Store`: the one front door, a thin shell over one `Engine`.

Each method checks nothing and decides nothing itself: it hands its
arguments to the capability that implements it (`branchmem.ops`, in the order
that module states; search in `branchmem.retrieval`; context, extraction and
imports in their packages, which use this API like a client would) together
with the store's engine (`branchmem.engine`: backend, clock, policy,
redactor and every cache).

A derived record is visible at an anchor iff every one of its sources is the
anchor or one of its ancestors, and no retraction of it is visible there.
Switching branches only moves the anchor; nothing is tagged or rewritten.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .backends.base import Backend
from .branch_types import AuditEntry, Conflict, HeadMove, MergeResult, Snapshot
from .engine import open_engine
from .graph import read as _graph_read
from .graph import write as _graph_write
from .graph.model import Edge
from .graph.view import GraphView
from .model import Branch, Event, Explanation, Memory
from .ops import audit as _audit
from .ops import branches as _branches
from .ops import diff as _diff
from .ops import events as _events
from .ops import info as _info
from .ops import lifecycle as _lifecycle
from .ops import merge as _merge
from .ops import purge as _purge
from .ops import reads as _reads
from .ops import records as _records
from .ops import snapshots as _snapshots
from .ops import tree as _tree
from .policy import Policy
from .redact import Redactor
from .retrieval.search import search as _search
from .searchlog import QueryLog
from .tree_types import Diff, EventPage, Versions
from .validate import MAX_MESSAGE_BYTES

if TYPE_CHECKING:
    from .context import Context
    from .extract.proposal import Extractor
    from .importers.model import ImportReport
    from .retrieval.embed import Embedder
    from .retrieval.fusion import Weights
    from .retrieval.hit import Hit
    from .retrieval.tokenize import Tokenizer


class Store:
    """A memory store whose history is a tree (or a DAG).

    ``Store()`` or ``Store(":memory:")`` keeps everything in memory;
    ``Store("mem.db")`` opens (or creates) an SQLite file;
    ``Store("postgresql://user@host:5432/db")`` a PostgreSQL database (the
    ``postgres`` extra; `backends.postgres`). ``clock`` gives
    the time written on events and records; ``policy`` (a
    `branchmem.Policy`) sets half-lives and default TTLs per kind.
    ``create=False`` refuses a path that is not already a branchmem store
    (for tools that only read one); a file that is not a branchmem store (another
    application's database) is always refused and left untouched.

    SQLite files only: ``readonly=True`` opens the store read-only (it works
    on a read-only file; every write raises `ReadOnlyStore`). ``busy_timeout``
    is how long, in seconds, a write waits for another process's write lock
    before raising `StoreLocked`. ``durability="full"`` (the default) makes
    every committed write survive a power cut; ``"normal"`` ingests faster
    and may lose the last commits on a power cut (never on a crash of the
    process alone), without corrupting the file. New files are created
    readable by their owner only (0600). ``redactor`` (a `branchmem.Redactor`)
    redacts personal data before anything is stored: the content and ``meta``
    (keys and values) of events and records, logged queries, actors; an id,
    key, namespace or branch name holding personal data is refused
    (docs/redaction.md).

    >>> store = Store()
    >>> _ = store.add_event("e1", role="user", content="你好，我在准备搬家。")
    >>> _ = store.add_event("e2", parent="e1", content="我下个月搬去成都。")
    >>> fact = store.add_memory("用户下个月搬去成都", sources=["e2"])
    >>> _ = store.add_event("e2b", parent="e1", content="我下个月搬去杭州。")
    >>> store.memories(at="e2b")
    []
    >>> [m.content for m in store.memories(at="e2")]
    ['用户下个月搬去成都']
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        backend: Backend | None = None,
        clock: Callable[[], float] = time.time,
        policy: Policy | None = None,
        create: bool = True,
        readonly: bool = False,
        busy_timeout: float = 30.0,
        durability: str = "full",
        redactor: Redactor | None = None,
    ) -> None:
        self._engine = open_engine(
            path,
            backend=backend,
            clock=clock,
            policy=policy,
            create=create,
            readonly=readonly,
            busy_timeout=busy_timeout,
            durability=durability,
            redactor=redactor,
        )

    @property
    def redactor(self) -> Redactor | None:
        """The `Redactor` this store applies before storing text, or ``None``."""
        return self._engine.redactor

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Release the backend (the SQLite connection). The store is unusable after."""
        self._engine.close()

    # ------------------------------------------------------------ events
    def add_event(
        self,
        id: str,
        *,
        parent: str | Sequence[str] | None = None,
        role: str = "user",
        content: str = "",
        namespace: str = "default",
        meta: dict[str, Any] | None = None,
        branch: str | None = None,
        actor: str | None = None,
        expected_head: str | None = None,
    ) -> Event:
        """Add one event (a message, tool call, note) under ``parent``.

        ``parent`` may be ``None`` (a root), an id, or a list of ids (a merge),
        and may not have arrived yet: the event then waits, hidden, until it
        does. Re-adding an identical event is a no-op.

        With ``branch=`` (and no ``parent``) the event goes under the branch's
        head and the head advances to it (see `remember` for ``expected_head``).

        >>> store = Store()
        >>> store.add_event("e1", content="你好").id
        'e1'
        """
        return _events.add_event(
            self._engine,
            id,
            parent=parent,
            role=role,
            content=content,
            namespace=namespace,
            meta=meta,
            branch=branch,
            actor=actor,
            expected_head=expected_head,
        )

    def add_events(
        self, events: Iterable[Event | Mapping[str, Any]], *, actor: str | None = None
    ) -> list[Event]:
        """Add many events in one transaction, in the given order.

        Each item is an `Event` or a dict with ``id`` and optionally
        ``parent``, ``role``, ``content``, ``namespace``, ``meta``. Parents may
        come later in the list (or in a later call). If any item is invalid,
        nothing is added. The audit log gets one line per namespace.

        >>> store = Store()
        >>> [e.id for e in store.add_events([{"id": "b", "parent": "a"}, {"id": "a"}])]
        ['b', 'a']
        """
        return _events.add_events(self._engine, events, actor=actor)

    # ------------------------------------------------------------ records
    def add_memory(
        self,
        content: str,
        *,
        sources: Sequence[str],
        kind: str = "semantic",
        key: str | None = None,
        importance: float = 0.5,
        namespace: str = "default",
        meta: dict[str, Any] | None = None,
        id: str | None = None,
        expires_at: float | None = None,
        valid_from: float | None = None,
        valid_to: float | None = None,
        actor: str | None = None,
    ) -> Memory:
        """Store a derived record sourced from ``sources`` (event ids).

        Sources that have not arrived are allowed: the record stays hidden
        until they arrive and connect. Re-adding the same ``id`` with the
        same fields returns the stored record. ``expires_at``, ``valid_from``
        and ``valid_to`` are times in seconds since the epoch (see
        `branchmem.ops.lifecycle`); without ``expires_at`` the kind's default TTL
        applies, if the store's `Policy` sets one.

        >>> store = Store()
        >>> _ = store.add_event("e1", content="我对花生过敏。")
        >>> store.add_memory("用户对花生过敏", sources=["e1"], key="allergy").key
        'allergy'
        """
        return _records.add_memory(
            self._engine,
            content,
            sources=sources,
            kind=kind,
            key=key,
            importance=importance,
            namespace=namespace,
            meta=meta,
            id=id,
            expires_at=expires_at,
            valid_from=valid_from,
            valid_to=valid_to,
            actor=actor,
        )

    def add_memories(
        self, items: Iterable[Memory | Mapping[str, Any]], *, actor: str | None = None
    ) -> list[Memory]:
        """Store many records in one transaction (all or none), like `add_memory` each.

        Each item is a dict of `add_memory`'s arguments (``content``, ``sources``,
        and optionally ``kind``, ``key``, ``importance``, ``namespace``, ``meta``,
        ``id``) or a `Memory`.

        >>> store = Store()
        >>> _ = store.add_event("e1")
        >>> len(store.add_memories([{"content": "a", "sources": ["e1"]},
        ...                         {"content": "b", "sources": ["e1"]}]))
        2
        """
        return _records.add_memories(self._engine, items, actor=actor)

    def retract(
        self,
        memory_id: str,
        *,
        sources: Sequence[str],
        namespace: str = "default",
        id: str | None = None,
        actor: str | None = None,
    ) -> Memory:
        """Hide ``memory_id`` wherever this retraction's own sources are on the path.

        On a branch where the sources are not ancestors, the memory stays.

        >>> store = Store()
        >>> _ = store.add_events([{"id": "e1"}, {"id": "e2", "parent": "e1"}])
        >>> m = store.add_memory("用户对花生过敏", sources=["e1"])
        >>> _ = store.retract(m.id, sources=["e2"])
        >>> store.visible(m.id, at="e1"), store.visible(m.id, at="e2")
        (True, False)
        """
        return _records.retract(
            self._engine, memory_id, sources=sources, namespace=namespace, id=id, actor=actor
        )

    def supersede(
        self,
        memory_id: str,
        content: str,
        *,
        sources: Sequence[str],
        namespace: str = "default",
        actor: str | None = None,
        **fields: Any,
    ) -> Memory:
        """Replace a record: a retraction of it plus a new record, both from ``sources``.

        ``fields`` (``kind``, ``key``, ``importance``, ``meta``, ``id``,
        ``expires_at``, ``valid_from``, ``valid_to``) default to the old
        record's. Returns the new record.

        >>> store = Store()
        >>> _ = store.add_events([{"id": "e1"}, {"id": "e2", "parent": "e1"}])
        >>> old = store.add_memory("预算3000", sources=["e1"], key="budget")
        >>> new = store.supersede(old.id, "预算4000", sources=["e2"])
        >>> [m.content for m in store.memories(at="e2")]
        ['预算4000']
        """
        return _records.supersede(
            self._engine,
            memory_id,
            content,
            sources=sources,
            namespace=namespace,
            actor=actor,
            fields=fields,
        )

    # ------------------------------------------------------------ reads
    def memories(
        self,
        *,
        at: str | Sequence[str] | None,
        kind: str | None = None,
        namespace: str = "default",
        now: float | None = None,
        as_of: float | None = None,
        include_archived: bool = False,
        touch: bool = False,
    ) -> list[Memory]:
        """Every record visible at ``at`` (an event id or branch name), oldest first.

        ``at=None`` returns ``[]``: a read without an anchor sees nothing.
        ``at`` may also be a list of anchors in priority order (a scope chain):
        each record visible from any of them comes once, with ``via`` naming
        the first anchor that sees it, earlier anchors' records first.

        Time (see `branchmem.ops.lifecycle`): records expired at ``now`` (default:
        the store's clock), archived, or outside their ``valid_from``/``valid_to``
        are left out; ``include_archived=True`` keeps archived and expired ones.
        ``as_of=t`` answers as the store would have at time ``t``.
        ``touch=True`` records a use of every record returned.

        >>> Store().memories(at=None)
        []
        """
        return _reads.memories(
            self._engine,
            at=at,
            kind=kind,
            namespace=namespace,
            now=now,
            as_of=as_of,
            include_archived=include_archived,
            touch=touch,
        )

    def visible(self, memory_id: str, *, at: str | None, namespace: str = "default") -> bool:
        """Is ``memory_id`` visible at ``at``? ``at=None`` is always False.

        >>> store = Store()
        >>> _ = store.add_event("e1")
        >>> m = store.add_memory("x", sources=["e1"])
        >>> store.visible(m.id, at="e1"), store.visible(m.id, at=None)
        (True, False)
        """
        return _reads.visible(self._engine, memory_id, at=at, namespace=namespace)

    def explain(
        self,
        memory_id: str,
        *,
        at: str | None,
        namespace: str = "default",
        now: float | None = None,
    ) -> Explanation:
        """Why ``memory_id`` is visible or hidden at ``at``: each source's state, and
        which retraction hides it. ``visible`` is the gate's answer, like
        `visible`; when expiry, validity or the archive hides the record from
        reads at ``now`` (default: the store's clock), ``hidden_by_time`` and
        the reason say so.

        >>> store = Store()
        >>> _ = store.add_events([{"id": "e1"}, {"id": "e2", "parent": "e1"},
        ...                       {"id": "e2b", "parent": "e1"}])
        >>> m = store.add_memory("用户下个月搬去成都", sources=["e2"])
        >>> print(store.explain(m.id, at="e2b"))
        hidden at 'e2b': source 'e2' is not on the path to 'e2b'
        """
        return _reads.explain(self._engine, memory_id, at=at, namespace=namespace, now=now)

    def path(
        self, at: str | None, namespace: str = "default", *, last: int | None = None
    ) -> list[Event]:
        """The anchor's ancestors and itself, root first (a topological order for merges).

        An anchor still waiting for a parent has no path yet (``[]``).
        ``last=n`` returns only the path's last ``n`` events (below a merge, the
        ``n`` nearest ancestors), reading about ``n`` events instead of the
        whole path.

        >>> store = Store()
        >>> _ = store.add_events([{"id": "e1"}, {"id": "e2", "parent": "e1"}])
        >>> [e.id for e in store.path("e2")]
        ['e1', 'e2']
        """
        return _reads.path(self._engine, at, namespace, last=last)

    def get_event(self, event_id: str, namespace: str = "default") -> Event:
        """The stored event, or `UnknownEvent`."""
        return _reads.get_event(self._engine, event_id, namespace)

    def children(
        self,
        event_id: str | None,
        *,
        namespace: str = "default",
        limit: int = 100,
        cursor: str | None = None,
    ) -> EventPage:
        """The events under ``event_id`` (the roots when None), in arrival order,
        a page of ``limit``; pass the page's ``cursor`` back for the next.

        >>> s = Store(); _ = s.add_events([{"id": "q"}, {"id": "r1", "parent": "q"}])
        >>> [e.id for e in s.children("q").events], s.children("q").cursor
        (['r1'], None)
        """
        return _tree.children(self._engine, event_id, namespace=namespace, limit=limit,
                              cursor=cursor)  # fmt: skip

    def siblings(
        self,
        event_id: str,
        *,
        namespace: str = "default",
        limit: int = 100,
        cursor: str | None = None,
    ) -> EventPage:
        """The versions of ``event_id``: the events with its parents (roots: the
        other roots), itself included, in arrival order; paged like `children`.

        >>> s = Store(); _ = s.add_events([{"id": "a"}, {"id": "b"}])
        >>> [e.id for e in s.siblings("b").events]
        ['a', 'b']
        """
        return _tree.siblings(self._engine, event_id, namespace=namespace, limit=limit,
                              cursor=cursor)  # fmt: skip

    def versions(self, event_id: str, *, namespace: str = "default") -> Versions:
        """Where ``event_id`` stands among its `siblings`: "version 2 of 3", with
        the previous and next versions' ids.

        >>> s = Store(); _ = s.add_events([{"id": "a"}, {"id": "b"}])
        >>> print(s.versions("b"), s.versions("b").previous)
        2/2 a
        """
        return _tree.versions(self._engine, event_id, namespace=namespace)

    def diff(
        self,
        a: str | Sequence[str],
        b: str | Sequence[str],
        *,
        kind: str | None = None,
        namespace: str = "default",
    ) -> Diff:
        """What moving the anchor from ``a`` to ``b`` changes: the memories visible at
        ``a`` and not at ``b`` (``only_a``), the reverse (``only_b``), the fork point.

        >>> s = Store(); _ = s.add_events([{"id": "q"}, {"id": "r1", "parent": "q"}])
        >>> _ = s.add_memory("x", sources=["r1"]); d = s.diff("r1", "q")
        >>> [m.content for m in d.only_a], d.fork_point
        (['x'], 'q')
        """
        return _diff.diff(self._engine, a, b, kind=kind, namespace=namespace)

    def events(
        self, *, namespace: str = "default", offset: int = 0, limit: int = 1000
    ) -> list[Event]:
        """Every event of the namespace in arrival order (on PostgreSQL: by write
        time, then place in the graph), ``limit`` at a time from ``offset``: for
        inspection and export (the gate is about derived records;
        use `path` for one branch's messages).

        >>> store = Store()
        >>> _ = store.add_events([{"id": "e1"}, {"id": "e2", "parent": "e1"},
        ...                       {"id": "e2b", "parent": "e1"}])
        >>> [e.id for e in store.events(offset=1)]
        ['e2', 'e2b']
        """
        return _reads.events(self._engine, namespace=namespace, offset=offset, limit=limit)

    def records(
        self, *, namespace: str = "default", offset: int = 0, limit: int = 1000
    ) -> list[Memory]:
        """Every stored record of the namespace in write order, visible or not,
        ``limit`` at a time from ``offset``. The gate does not apply: this is for
        inspection and administration. What a model may see is `memories(at=)`;
        `explain` says why a record is hidden at an anchor.

        >>> store = Store()
        >>> _ = store.add_events([{"id": "e1"}, {"id": "e1b"}])
        >>> _ = store.add_memory("A", sources=["e1"]); _ = store.add_memory("B", sources=["e1b"])
        >>> [m.content for m in store.records()], [m.content for m in store.memories(at="e1")]
        (['A', 'B'], ['A'])
        """
        return _reads.records(self._engine, namespace=namespace, offset=offset, limit=limit)

    def get_memory(self, memory_id: str, namespace: str = "default") -> Memory:
        """The stored record (whatever its visibility), or `UnknownMemory`."""
        return _reads.get_memory(self._engine, memory_id, namespace)

    # ------------------------------------------------------------ branches
    def create_branch(
        self, name: str, *, at: str, namespace: str = "default", actor: str | None = None
    ) -> Branch:
        """Fork a new branch at an event, or at another branch's current head.

        The branch sees what ``at`` saw and nothing written there later.

        >>> from branchmem import Store
        >>> store = Store()
        >>> _ = store.add_event("e1", content="你好")
        >>> store.create_branch("user_001/main", at="e1").head
        'e1'
        >>> store.create_branch("user_001/session_a", at="user_001/main").parent
        'user_001/main'
        """
        return _branches.create_branch(self._engine, name, at=at, namespace=namespace, actor=actor)

    def remember(
        self,
        content: str,
        *,
        branch: str,
        kind: str = "semantic",
        key: str | None = None,
        importance: float = 0.5,
        namespace: str = "default",
        meta: dict[str, Any] | None = None,
        id: str | None = None,
        event_id: str | None = None,
        role: str = "note",
        actor: str | None = None,
        expected_head: str | None = None,
        expires_at: float | None = None,
        valid_from: float | None = None,
        valid_to: float | None = None,
    ) -> Memory:
        """Write a memory on ``branch``: a new event under its head (holding
        ``content``), a memory sourced from that event, and the head advanced.
        The memory's fields are those of `add_memory`.

        Pass ``expected_head=`` to fail with `BranchConflict` if another writer
        moved the head since you read it.

        >>> from branchmem import Store
        >>> store = Store()
        >>> _ = store.add_event("e1")
        >>> _ = store.create_branch("main", at="e1")
        >>> m = store.remember("用户喜欢川菜", branch="main", key="cuisine")
        >>> store.branch_head("main") == m.sources[0]
        True
        """
        return _branches.remember(
            self._engine,
            content,
            branch=branch,
            kind=kind,
            key=key,
            importance=importance,
            namespace=namespace,
            meta=meta,
            id=id,
            event_id=event_id,
            role=role,
            actor=actor,
            expected_head=expected_head,
            expires_at=expires_at,
            valid_from=valid_from,
            valid_to=valid_to,
        )

    def set_branch(
        self,
        name: str,
        event_id: str,
        *,
        namespace: str = "default",
        actor: str | None = None,
        expected_head: str | None = None,
    ) -> Branch:
        """Point branch ``name`` at ``event_id`` (creating or moving it); the move is
        logged in `history`. Prefer `create_branch` and `rollback`, which check more.

        With ``expected_head=``, the branch must exist (`UnknownBranch`) and
        still point there (`BranchConflict` if another writer moved it): the
        check and the move are one compare-and-set in the store, whichever
        process moves the branch, so of several writers that read the same
        head, one moves it.

        >>> from branchmem import Store
        >>> store = Store()
        >>> _ = store.add_events([{"id": "e1"}, {"id": "e2", "parent": "e1"}])
        >>> store.set_branch("main", "e1").head
        'e1'
        >>> store.set_branch("main", "e2", expected_head="e1").head
        'e2'
        >>> store.set_branch("main", "e1", expected_head="e1")
        Traceback (most recent call last):
        ...
        branchmem.errors.BranchConflict: branch 'main' in namespace 'default' is at 'e2', ...
        """
        return _branches.set_branch(
            self._engine,
            name,
            event_id,
            namespace=namespace,
            actor=actor,
            expected_head=expected_head,
        )

    def branch_head(self, name: str, *, namespace: str = "default") -> str:
        """The event id branch ``name`` points at, or `UnknownBranch`.

        >>> from branchmem import Store
        >>> store = Store()
        >>> _ = store.add_event("e1")
        >>> _ = store.create_branch("main", at="e1")
        >>> store.branch_head("main")
        'e1'
        """
        return _branches.branch_head(self._engine, name, namespace=namespace)

    def branches(self, *, namespace: str = "default", count: bool = True) -> list[Branch]:
        """Every branch of the namespace, sorted by name, with its fork point,
        parent branch, times and (unless ``count=False``) the number of memories
        visible at its head.

        >>> from branchmem import Store
        >>> store = Store()
        >>> _ = store.add_event("e1")
        >>> _ = store.create_branch("main", at="e1")
        >>> _ = store.remember("x", branch="main")
        >>> [(b.name, b.fork_point, b.memories) for b in store.branches()]
        [('main', 'e1', 1)]
        """
        return _branches.branches(self._engine, namespace=namespace, count=count)

    def delete_branch(
        self, name: str, *, namespace: str = "default", actor: str | None = None
    ) -> None:
        """Remove the pointer ``name``. Events and records stay, reachable from
        any other anchor; `history` keeps the branch's moves.

        >>> from branchmem import Store
        >>> store = Store()
        >>> _ = store.add_event("e1")
        >>> _ = store.create_branch("tmp", at="e1")
        >>> store.delete_branch("tmp")
        >>> store.branches()
        []
        """
        return _branches.delete_branch(self._engine, name, namespace=namespace, actor=actor)

    def prune_branches(
        self,
        prefix: str,
        older_than: float,
        *,
        namespace: str = "default",
        now: float | None = None,
        actor: str | None = None,
        check: Callable[[str], object] | None = None,
    ) -> list[str]:
        """Delete the branch pointers under ``prefix/`` whose head has not moved
        for ``older_than`` seconds. Records stay, reachable from any other
        anchor. Returns the names removed.

        ``prefix`` names a folder of the name hierarchy: ``"tmp"`` and
        ``"tmp/"`` both prune ``tmp/a`` and ``tmp/b/c``, never the branch
        ``tmp`` itself (`delete_branch` removes that) nor ``tmpx``.
        ``check``, if given, is called with each name that would be deleted,
        before any is; an exception it raises ends the call with nothing
        deleted (the server checks each name against the caller's grant).

        >>> from branchmem import Store
        >>> store = Store(clock=lambda: 0.0)
        >>> _ = store.add_event("e1")
        >>> _ = store.create_branch("tmp", at="e1")
        >>> _ = store.create_branch("tmp/a", at="e1")
        >>> store.prune_branches("tmp", older_than=60, now=3600.0)
        ['tmp/a']
        """
        return _branches.prune_branches(
            self._engine, prefix, older_than, namespace=namespace, now=now, actor=actor, check=check
        )

    # ------------------------------------------------------------ snapshots
    def snapshot(
        self, branch: str, name: str, *, namespace: str = "default", actor: str | None = None
    ) -> Snapshot:
        """Name the branch's current head, for good: `rollback` can return to it.

        Taking the same snapshot again is a no-op; reusing the name for another
        event is `SnapshotExists`.

        >>> from branchmem import Store
        >>> store = Store()
        >>> _ = store.add_event("e1")
        >>> _ = store.create_branch("main", at="e1")
        >>> store.snapshot("main", "v1").event
        'e1'
        """
        return _snapshots.snapshot(self._engine, branch, name, namespace=namespace, actor=actor)

    def snapshots(self, *, namespace: str = "default") -> list[Snapshot]:
        """Every snapshot of the namespace, sorted by name.

        >>> from branchmem import Store
        >>> store = Store()
        >>> _ = store.add_event("e1")
        >>> _ = store.create_branch("main", at="e1")
        >>> [(s.name, s.branch, s.event) for s in (store.snapshot("main", "v1"),)]
        [('v1', 'main', 'e1')]
        >>> [s.name for s in store.snapshots()]
        ['v1']
        """
        return _snapshots.snapshots(self._engine, namespace=namespace)

    def rollback(
        self,
        branch: str,
        to: str,
        *,
        namespace: str = "default",
        actor: str | None = None,
        expected_head: str | None = None,
    ) -> Branch:
        """Move ``branch``'s head back to a snapshot or an ancestor event.

        Nothing is deleted: a head the branch held before stays a valid target,
        so rolling forward again is a rollback to it (or to a later snapshot).
        Anything else is `NotAnAncestor`. ``to`` is read as a snapshot name
        first (a snapshot may be of any branch), then as an event id. With
        ``expected_head=``, `BranchConflict` if the head is no longer there
        (checked and moved in one compare-and-set, as `set_branch`).

        >>> from branchmem import Store
        >>> store = Store()
        >>> _ = store.add_event("e1")
        >>> _ = store.create_branch("main", at="e1")
        >>> _ = store.snapshot("main", "v1")
        >>> m = store.remember("预算3000", branch="main")
        >>> _ = store.rollback("main", "v1")
        >>> store.memories(at="main")
        []
        """
        return _snapshots.rollback(
            self._engine, branch, to, namespace=namespace, actor=actor, expected_head=expected_head
        )

    def history(self, branch: str, *, namespace: str = "default") -> list[HeadMove]:
        """Every move of ``branch``'s head, oldest first: who, when, from, to, why.

        >>> from branchmem import Store
        >>> store = Store()
        >>> _ = store.add_event("e1")
        >>> _ = store.create_branch("main", at="e1", actor="alice")
        >>> [(h.why, h.from_head, h.to_head, h.actor) for h in store.history("main")]
        [('create', None, 'e1', 'alice')]
        """
        return _snapshots.history(self._engine, branch, namespace=namespace)

    # ------------------------------------------------------------ merge
    def merge(
        self,
        source: str,
        into: str,
        *,
        strategy: str = "append",
        namespace: str = "default",
        actor: str | None = None,
        fast_forward: bool = True,
        event_id: str | None = None,
        expected_head: str | None = None,
    ) -> MergeResult:
        """Merge ``source`` (a branch or an event) into branch ``into``.

        A merge event with both heads as parents is appended and ``into``
        advances to it. If ``source`` is already an ancestor of ``into``
        nothing happens; if ``into``'s head is an ancestor of ``source`` the
        head just moves forward (unless ``fast_forward=False``, or the strategy
        has key collisions to record). Where both sides hold visible memories
        with the same ``key`` and different content:

        - ``append`` keeps both;
        - ``overwrite`` retracts the target's value (incoming wins);
        - ``keep_both`` keeps both and writes a conflict record (see `conflicts`).

        >>> from branchmem import Store
        >>> store = Store()
        >>> _ = store.add_event("e1")
        >>> _ = store.create_branch("main", at="e1")
        >>> _ = store.remember("预算3000", branch="main", key="budget")
        >>> _ = store.create_branch("chat", at="main")
        >>> _ = store.remember("预算4000", branch="chat", key="budget")
        >>> _ = store.remember("预算2500", branch="main", key="budget")
        >>> r = store.merge("chat", "main", strategy="overwrite")
        >>> (r.added, r.overwritten), [m.content for m in store.memories(at="main")]
        ((1, 2), ['预算4000'])
        """
        return _merge.merge(
            self._engine,
            source,
            into,
            strategy=strategy,
            namespace=namespace,
            actor=actor,
            fast_forward=fast_forward,
            event_id=event_id,
            expected_head=expected_head,
        )

    def conflicts(self, *, at: str | None, namespace: str = "default") -> list[Conflict]:
        """Open conflicts visible at ``at`` (an event or a branch), oldest first.

        >>> from branchmem import Store
        >>> store = Store()
        >>> _ = store.add_event("e1")
        >>> _ = store.create_branch("main", at="e1")
        >>> _ = store.create_branch("chat", at="e1")
        >>> _ = store.remember("预算3000", branch="main", key="budget")
        >>> _ = store.remember("预算4000", branch="chat", key="budget")
        >>> _ = store.merge("chat", "main", strategy="keep_both")
        >>> [c.key for c in store.conflicts(at="main")]
        ['budget']
        """
        return _merge.conflicts(self._engine, at=at, namespace=namespace)

    def resolve(
        self,
        conflict_id: str,
        keep: str,
        *,
        branch: str,
        namespace: str = "default",
        actor: str | None = None,
        expected_head: str | None = None,
    ) -> Event:
        """Close a conflict on ``branch``, keeping memory ``keep``.

        Appends a resolve event under the branch head; from it, the other
        members and the conflict itself are retracted. Returns that event.
        A conflict not open at the branch head is `ConflictClosed`.

        >>> from branchmem import Store
        >>> store = Store()
        >>> _ = store.add_event("e1")
        >>> _ = store.create_branch("main", at="e1")
        >>> _ = store.create_branch("chat", at="e1")
        >>> a = store.remember("预算3000", branch="main", key="budget")
        >>> b = store.remember("预算4000", branch="chat", key="budget")
        >>> c = store.merge("chat", "main", strategy="keep_both").conflict_ids[0]
        >>> _ = store.resolve(c, keep=b.id, branch="main")
        >>> [m.content for m in store.memories(at="main")], store.conflicts(at="main")
        (['预算4000'], [])
        """
        return _merge.resolve(
            self._engine,
            conflict_id,
            keep,
            branch=branch,
            namespace=namespace,
            actor=actor,
            expected_head=expected_head,
        )

    # ------------------------------------------------------------ lifecycle
    def touch(
        self,
        ids: Iterable[str],
        *,
        namespace: str = "default",
        now: float | None = None,
        actor: str | None = None,
    ) -> None:
        """Record one use of each memory (it raises their effective score).

        Reads never record use by themselves; pass ``touch=True`` to
        `memories` or call this.

        >>> from branchmem import Store
        >>> store = Store()
        >>> _ = store.add_event("e1")
        >>> m = store.add_memory("x", sources=["e1"])
        >>> before = store.score(m.id)
        >>> store.touch([m.id])
        >>> store.score(m.id) > before
        True
        """
        return _lifecycle.touch(self._engine, ids, namespace=namespace, now=now, actor=actor)

    def score(
        self, memory_id: str, *, now: float | None = None, namespace: str = "default"
    ) -> float:
        """The effective score of a memory at ``now``: importance × decay × use boost.

        >>> from branchmem import Store
        >>> store = Store(clock=lambda: 0.0)
        >>> _ = store.add_event("e1")
        >>> m = store.add_memory("x", sources=["e1"], kind="working", importance=0.8)
        >>> store.score(m.id, now=6 * 3600)  # one half-life of "working" later
        0.4
        """
        return _lifecycle.score(self._engine, memory_id, now=now, namespace=namespace)

    def archive_expired(
        self, now: float | None = None, *, namespace: str = "default", actor: str | None = None
    ) -> list[str]:
        """Move every record expired at ``now`` to the archive; returns their ids.

        >>> from branchmem import Store
        >>> store = Store(clock=lambda: 100.0)
        >>> _ = store.add_event("e1")
        >>> m = store.add_memory("x", sources=["e1"], expires_at=150.0)
        >>> store.archive_expired(now=200.0) == [m.id]
        True
        >>> store.memories(at="e1", now=120.0, include_archived=True) == [m]
        True
        """
        return _lifecycle.archive_expired(self._engine, now, namespace=namespace, actor=actor)

    def restore(
        self, memory_id: str, *, namespace: str = "default", actor: str | None = None
    ) -> Memory:
        """Bring a record back from the archive, or back from expiry; its expiry no
        longer hides it. A record that is neither raises `InvalidInput`.

        >>> from branchmem import Store
        >>> store = Store(clock=lambda: 100.0)
        >>> _ = store.add_event("e1")
        >>> m = store.add_memory("x", sources=["e1"], expires_at=150.0)
        >>> _ = store.archive_expired(now=200.0)
        >>> store.restore(m.id) == m, store.memories(at="e1", now=300.0) == [m]
        (True, True)
        """
        return _lifecycle.restore(self._engine, memory_id, namespace=namespace, actor=actor)

    # ------------------------------------------------------------ purge
    def purge(
        self,
        *,
        events: Sequence[str] = (),
        memories: Sequence[str] = (),
        namespace: str = "default",
        whole_namespace: bool = False,
        actor: str | None = None,
        query_logs: Sequence[QueryLog | str | os.PathLike[str]] = (),
    ) -> list[str]:
        """Really delete, for erasure requests. Returns the ids removed or erased:
        the events, then the records in the order they were written.

        ``events`` are blanked (content and meta) and every record sourced from
        them is deleted; ``memories`` are deleted; records derived from deleted
        ones (their retractions, conflicts naming them) go too.
        ``whole_namespace=True`` deletes the namespace's events, records,
        branches, snapshots and name (its audit log stays, detached).
        After the purge, the store's query logs (every log its searches wrote
        to) and ``query_logs`` (more `QueryLog` objects or paths) lose the
        searches of the namespace that returned a purged record (every search
        of the namespace for ``whole_namespace``): see `QueryLog.purge`.

        >>> from branchmem import Store
        >>> store = Store()
        >>> _ = store.add_event("e1", content="我的身份证号是……")
        >>> m = store.add_memory("用户的身份证号……", sources=["e1"])
        >>> store.purge(events=["e1"]) == ["e1", m.id]
        True
        >>> store.get_event("e1").content, store.memories(at="e1")
        ('', [])
        """
        return _purge.purge(
            self._engine,
            events=events,
            memories=memories,
            namespace=namespace,
            whole_namespace=whole_namespace,
            actor=actor,
            query_logs=query_logs,
        )

    def checkpoint(self) -> bool:
        """On SQLite, copy the write-ahead log into the store file and truncate
        it, finishing a purge whose truncation a reader held back. True when it
        was complete (no other connection's read held it back); always True
        on backends without a log file of their own."""
        return _purge.checkpoint(self._engine)

    def erasure_pending(self) -> bool:
        """Does the SQLite write-ahead log (may) still hold bytes of a purge,
        because another connection was reading? The next write, `checkpoint`
        or ``close`` (of any store on the file) truncates it then."""
        return _purge.erasure_pending(self._engine)

    def info(self) -> dict[str, Any]:
        """What the store runs on: the backend, and whether vectors are ranked by
        the server's pgvector index (docs/scaling.md#with-pgvector).

        >>> from branchmem import Store
        >>> Store().info()["vectors"]["pgvector"] is None
        True
        """
        return _info.info(self._engine)

    # ------------------------------------------------------------ audit
    def audit(self, namespace: str = "default", since: float | None = None) -> list[AuditEntry]:
        """The audit log of ``namespace``, oldest first; ``since`` keeps entries at
        or after that time.

        >>> from branchmem import Store
        >>> store = Store()
        >>> _ = store.add_event("e1")
        >>> _ = store.create_branch("main", at="e1", actor="alice")
        >>> [(a.op, a.ids, a.actor) for a in store.audit("default")][-1]
        ('create_branch', ('main', 'e1'), 'alice')
        """
        return _audit.audit(self._engine, namespace, since)

    # ------------------------------------------------------------ graph
    def add_edge(
        self, subject: str, predicate: str, object: str, *, sources: Sequence[str], **options: Any
    ) -> Edge:
        """Store the relation ``subject -predicate-> object`` as a gated record.

        ``options``: ``attrs``, ``importance``, ``namespace``, ``id``, ``valid_from``,
        ``valid_to``, ``single``, ``replaces``, ``actor`` (docs/graph.md).

        >>> store = Store()
        >>> _ = store.add_event("e1", content="Alice 负责 auth-service")
        >>> store.add_edge("Alice", "owns", "auth-service", sources=["e1"])
        Edge(Alice -owns-> auth-service, sources=[e1])
        """
        return _graph_write.add_edge(
            self._engine, subject, predicate, object, sources=sources, **options
        )

    def graph(
        self,
        *,
        at: str | Sequence[str] | None,
        namespace: str = "default",
        now: float | None = None,
    ) -> GraphView:
        """The relation graph visible at ``at`` (an anchor or a scope chain): `GraphView`.

        >>> Store().graph(at=None).edges()
        []
        """
        return _graph_read.graph(self._engine, at=at, namespace=namespace, now=now)

    # ------------------------------------------------------------ retrieval
    def search(
        self,
        query: str,
        *,
        at: str | Sequence[str] | None,
        k: int = 10,
        namespace: str = "default",
        mode: str = "hybrid",
        embedder: Embedder | str | None = None,
        tokenizer: Tokenizer | str | None = None,
        weights: Weights | None = None,
        scope_weights: Sequence[float] | None = None,
        kind: str | Sequence[str] | None = None,
        key_prefix: str | None = None,
        meta: Mapping[str, Any] | None = None,
        now: float | None = None,
        as_of: float | None = None,
        explain: bool = False,
        log: QueryLog | str | os.PathLike[str] | None = None,
        max_embed: int | None = None,
        hops: int = 0,
        min_score: float | None = None,
        cutoff: str | None = None,
        filter: Mapping[str, Any] | None = None,
    ) -> list[Hit]:
        """At most ``k`` records visible at ``at`` that best match ``query``, best first
        (gate first, then rank: no search returns a record the gate hides).

        ``at`` is an anchor (event id or branch name) or a scope chain of them:
        the records visible at any anchor of the chain are ranked together, and
        each hit's ``via`` names the first anchor that sees it.
        ``scope_weights`` (one positive number per anchor, default all 1)
        multiplies the score of the hits each anchor brings, e.g. ``[1.0, 0.8]``
        to prefer the conversation over the user's long-term memory.
        ``at=None`` (or ``[]``) finds nothing.

        ``mode`` is ``"hybrid"`` (keyword and vector ranks fused), ``"keyword"``
        or ``"vector"``. ``embedder`` (an `Embedder` or its name) defaults to
        ``branchmem.retrieval.default_embedder()``; ``tokenizer`` to
        ``"bigram"``; ``weights`` (a `Weights`) sets how the signals mix.
        Filters apply after the gate: ``kind`` (one or a list), ``key_prefix``,
        ``meta`` (fields the record's ``meta`` must equal), ``as_of`` (created
        at or before; anchors as they were then). ``now`` (default: the clock)
        sets recency and what has expired. ``explain=True`` attaches why each
        hit is visible and how its score was made. ``log`` (a `QueryLog` or a
        path) appends the search to a JSONL query log; on a store with a
        redactor, a log given by path records a hash of the query instead.
        ``max_embed`` caps how many records without a vector this search
        embeds itself (default: no cap, or the budget of a
        `BackgroundEmbedder` attached to the store); the others are ranked by
        keyword alone (`branchmem.retrieval.search` says more). ``hops=N`` adds
        what N visible edges of the relation graph reach (docs/graph.md).
        Each hit has a ``confidence`` in [0, 1]; hits below ``min_score`` or
        far below the best (``cutoff``: ``"ratio"`` by default, ``"knee"``,
        ``"off"``) are dropped, so ``k`` is a maximum (docs/retrieval.md).
        ``filter`` takes LangGraph-style conditions, e.g. ``{"meta.topic":
        {"$in": ["food"]}, "created_at": {"$gte": t}}`` (``$eq $ne $gt $gte
        $lt $lte $in``), applied after the gate.

        Bad values raise `InvalidInput`; a keyword this method does not take
        raises ``TypeError``, as any Python call does.

        >>> store = Store()
        >>> _ = store.add_event("e1", content="我对花生过敏。")
        >>> _ = store.add_memory("用户对花生过敏", sources=["e1"])
        >>> [h.memory.content for h in store.search("花生", at="e1", embedder="hashing")]
        ['用户对花生过敏']
        """
        return _search(
            self._engine,
            query,
            at=at,
            k=k,
            namespace=namespace,
            mode=mode,
            embedder=embedder,
            tokenizer=tokenizer,
            weights=weights,
            scope_weights=scope_weights,
            kind=kind,
            key_prefix=key_prefix,
            meta=meta,
            now=now,
            as_of=as_of,
            explain=explain,
            log=log,
            max_embed=max_embed,
            hops=hops,
            min_score=min_score,
            cutoff=cutoff,
            filter=filter,
        )

    # ------------------------------------------------------- extraction, context
    def extract(
        self,
        at: str,
        *,
        extractor: Extractor | None = None,
        window: int = 8,
        namespace: str = "default",
        actor: str | None = None,
    ) -> list[Memory]:
        """Run ``extractor`` (default: the offline `branchmem.extract.RuleExtractor`)
        on the last ``window`` events of the path to ``at`` and the memories
        visible there, and write its proposals as gated records: new facts,
        supersedes and retractions, each sourced from the messages it came from.
        Proposals citing events off the path, or targeting memories not visible
        at ``at``, are dropped (fail closed). Idempotent: ids come from the
        proposals, so a second run at the same anchor writes nothing. Returns
        the records written (`branchmem.extract.extract` also reports drops).

        >>> store = Store()
        >>> _ = store.add_event("e1", content="我在腾讯做产品经理。")
        >>> [m.key for m in store.extract(at="e1")]
        ['user.employer', 'user.job']
        >>> store.extract(at="e1")
        []
        """
        from .extract.writer import extract

        done = extract(
            self, at, extractor=extractor, window=window, namespace=namespace, actor=actor
        )
        return list(done.written)

    def context(
        self,
        at: str | Sequence[str] | None,
        *,
        query: str | None = None,
        window: int | None = 8,
        k: int | None = 10,
        namespace: str = "default",
        mode: str = "hybrid",
        embedder: Embedder | str | None = None,
        tokenizer: Tokenizer | str | None = None,
        weights: Weights | None = None,
        scope_weights: Sequence[float] | None = None,
        kind: str | Sequence[str] | None = None,
        key_prefix: str | None = None,
        meta: Mapping[str, Any] | None = None,
        now: float | None = None,
        as_of: float | None = None,
        explain: bool = False,
        log: QueryLog | str | os.PathLike[str] | None = None,
        max_embed: int | None = None,
    ) -> Context:
        """What a model sees at ``at``: the last ``window`` messages on the path
        (root first; ``None`` for the whole path, 0 for none) and up to ``k``
        visible memories (``None`` for all), ranked by `search` for ``query``
        or by importance and recency without one. ``at`` may be a scope chain;
        the messages then come from its first anchor. The other keywords are
        `search`'s, used when there is a ``query``; one this method does not
        take raises ``TypeError``.

        >>> store = Store()
        >>> _ = store.add_event("e1", content="我在阿里巴巴上班。")
        >>> _ = store.extract(at="e1")
        >>> print(store.context(at="e1").text())
        相关记忆：
        - 用户在阿里巴巴工作
        <BLANKLINE>
        对话记录：
        用户：我在阿里巴巴上班。
        """
        from .context import build_context

        return build_context(
            self,
            at,
            query=query,
            window=window,
            k=k,
            namespace=namespace,
            mode=mode,
            embedder=embedder,
            tokenizer=tokenizer,
            weights=weights,
            scope_weights=scope_weights,
            kind=kind,
            key_prefix=key_prefix,
            meta=meta,
            now=now,
            as_of=as_of,
            explain=explain,
            log=log,
            max_embed=max_embed,
        )

    # ----------------------------------------------------------------- imports
    def import_export(
        self,
        path: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
        *,
        format: str = "auto",
        namespace: str = "default",
        progress: Callable[[int, int], None] | None = None,
        max_message_bytes: int = MAX_MESSAGE_BYTES,
    ) -> ImportReport:
        """Import a chat export (ChatGPT, Claude, Open WebUI, LibreChat, SillyTavern):
        each conversation's messages become events (abandoned branches too) in one
        transaction, and branch ``conv/<id>`` points at its current leaf.
        Re-importing adds only what is new; see `branchmem.importers`.

        ``format`` is ``"auto"`` or a name from `branchmem.importers.FORMATS`;
        ``progress`` is called with (bytes read, total bytes). A conversation
        with a message whose text is over ``max_message_bytes`` (UTF-8; 8 MiB
        by default) is skipped, and the report says why.

        >>> import json, pathlib, tempfile
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "conversations.json"
        >>> _ = path.write_text(json.dumps([{"conversation_id": "c1", "current_node": "m1",
        ...     "mapping": {"m1": {"parent": None, "message": {"author": {"role": "user"},
        ...     "content": {"content_type": "text", "parts": ["你好"]}}}}}]))
        >>> store = Store()
        >>> [(c.branch, c.added) for c in store.import_export(path).conversations]
        [('conv/c1', 1)]
        """
        from .importers import import_export

        return import_export(
            self,
            path,
            format=format,
            namespace=namespace,
            progress=progress,
            max_message_bytes=max_message_bytes,
        )
