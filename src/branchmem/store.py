"""`Store`: the one front door. The gate and every rule above storage live here.

A derived record is visible at an anchor iff every one of its sources is the
anchor or one of its ancestors, and no retraction of it is visible there.
Switching branches only moves the anchor; nothing is tagged or rewritten.
"""

from __future__ import annotations

import functools
import os
import time
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from operator import attrgetter
from typing import TYPE_CHECKING, Any, TypeVar

from .audit import AuditOps
from .backends.base import Backend, DuplicateIds, EventRow, Generation, Pos, RecordRow
from .backends.memory import MemoryBackend
from .branch_types import CONFLICT
from .branches import BranchOps, check_actor, log
from .bulk import gc_paused
from .errors import (
    ConflictingRecord,
    CycleError,
    InvalidInput,
    UnknownAnchor,
    UnknownEvent,
    UnknownMemory,
)
from .lifecycle import LifecycleOps, Policy, check_read_times, narrow, time_note
from .lineage import (
    Ingest,
    ancestor_ranges,
    batch_seg_parents,
    in_ranges,
    index_position,
    row_in_ranges,
)
from .merge import MergeOps
from .model import RETRACTION, Event, Explanation, Memory, SourceStatus
from .purge import PurgeOps
from .redact import Redactor
from .scope import ViaCopies, check_anchors, read_chain, read_views
from .validate import (
    TIME_FIELDS,
    check_id,
    check_importance,
    check_key,
    check_kind,
    check_meta,
    check_namespace,
    check_page,
    check_sources,
    check_text,
    check_time,
    events_from,
    memory_from,
    show,
)

if TYPE_CHECKING:
    from .context import Context
    from .extract.proposal import Extractor
    from .importers.model import ImportReport
    from .retrieval.hit import Hit

_Item = TypeVar("_Item", Event, Memory)


class Store(BranchOps, MergeOps, LifecycleOps, PurgeOps, AuditOps):
    """A memory store whose history is a tree (or a DAG).

    ``Store()`` or ``Store(":memory:")`` keeps everything in memory;
    ``Store("mem.db")`` opens (or creates) an SQLite file;
    ``Store("postgresql://user@host:5432/db")`` a PostgreSQL database (the
    ``postgres`` extra; `backends.postgres`). ``clock`` gives
    the time written on events and records; ``policy`` (a
    `branchmem.lifecycle.Policy`) sets half-lives and default TTLs per kind.
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
    redacts personal data from event and record content and from logged
    queries before anything is stored.

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
        if path is not None and not isinstance(path, (str, os.PathLike)):
            raise InvalidInput(
                f"path must be a file path (str or os.PathLike) or None for memory, "
                f"got {type(path).__name__}"
            )
        if redactor is not None and not isinstance(redactor, Redactor):
            raise InvalidInput(
                f"redactor must be a branchmem.Redactor or None, got {type(redactor).__name__}"
            )
        if not callable(clock):
            raise InvalidInput("clock must be a callable returning seconds, like time.time")
        if not isinstance(readonly, bool):
            raise InvalidInput(f"readonly must be True or False, got {show(readonly)}")
        if durability not in ("full", "normal"):
            raise InvalidInput(f'durability must be "full" or "normal", got {show(durability)}')
        timeout = check_time(busy_timeout, "busy_timeout")
        if timeout is None or timeout < 0:
            raise InvalidInput(f"busy_timeout must be seconds >= 0, got {show(busy_timeout)}")
        if backend is not None:
            self._b: Backend = backend
        elif path is None or str(path) == ":memory:":
            if readonly:
                raise InvalidInput("readonly=True applies to a store file; pass its path")
            self._b = MemoryBackend()
        elif isinstance(path, str) and path.startswith(("postgresql://", "postgres://")):
            from .backends.postgres import PostgresBackend

            self._b = PostgresBackend(path, create=create, durability=durability)
        else:
            from .backends.sqlite import SQLiteBackend

            self._b = SQLiteBackend(
                os.fspath(path),
                create=create,
                readonly=readonly,
                busy_timeout=timeout,
                durability=durability,
            )
        self._clock = clock
        self._policy = policy if policy is not None else Policy()
        self._via_copies = ViaCopies()
        self._redactor = redactor

    @property
    def redactor(self) -> Redactor | None:
        """The `Redactor` this store applies before storing text, or ``None``."""
        return self._redactor

    def _redact(self, text: str) -> str:
        """The one place text is redacted before it is stored (see `redactor`)."""
        return text if self._redactor is None or not text else self._redactor.redact(text)

    def _redacted(self, items: list[_Item]) -> list[_Item]:
        """Events or records with their content redacted, before they are written."""
        if self._redactor is None:
            return items
        return [
            x if (c := self._redact(x.content)) == x.content else replace(x, content=c)
            for x in items
        ]

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Release the backend (the SQLite connection). The store is unusable after."""
        self._b.close()

    def _generation(self) -> Generation:
        """Where the store's contents stand now (see `branchmem.backends.base.Generation`).

        A cache kept between calls (of search state, of rendered context)
        compares it with the one it was built at: when ``erasures`` moved,
        something was deleted or blanked, by this `Store` or another on the
        same file, and everything derived before must go.

        >>> store = Store()
        >>> g = store._generation()
        >>> _ = store.add_event("e1")
        >>> store._generation().writes != g.writes, store._generation().erasures == g.erasures
        (True, True)
        """
        with self._b.reading():
            return self._b.generation()

    def _seg_parents(self, ns: str) -> Callable[[Iterable[int]], dict[int, tuple[Pos, ...]]]:
        b = self._b
        return lambda segs: b.segment_parents(ns, segs)

    # ------------------------------------------------------------------ events
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
        if branch is not None:
            if parent is not None:
                raise InvalidInput(
                    "pass either parent= or branch=, not both: a branch write goes "
                    "under the branch's head"
                )
            fields = {"id": id, "role": role, "content": content, "meta": meta}
            ns = check_namespace(namespace)
            return self._write_event(ns, branch, fields, actor, expected_head)
        if expected_head is not None:
            raise InvalidInput("expected_head= applies to branch writes; pass branch= too")
        return self.add_events(
            [
                {
                    "id": id,
                    "parent": parent,
                    "role": role,
                    "content": content,
                    "namespace": namespace,
                    "meta": meta,
                }
            ],
            actor=actor,
        )[0]

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
        now = self._clock()
        actor = check_actor(actor)
        items = events if isinstance(events, list) else _batch(events, "add_events", "event")
        with gc_paused(len(items)):
            return self._add_events(items, now, actor)

    def _add_events(
        self, events: list[Event | Mapping[str, Any]], now: float, actor: str | None
    ) -> list[Event]:
        checked = events_from(events, now)
        namespaces = {e.namespace for e in checked}
        with self._b.transaction():
            if len(namespaces) == 1:
                ns = namespaces.pop()
                done, new = self._ingest_counted(ns, checked)
                if new:  # a re-add that changes nothing writes no audit line
                    log(self, ns, "add_events", [e.id for e in done], actor, now)
                return done
            out: list[Event] = list(checked)
            groups: dict[str, list[int]] = {}  # one pass, not one scan per namespace
            for i, e in enumerate(checked):
                groups.setdefault(e.namespace, []).append(i)
            parts = {ns: groups[ns] for ns in sorted(groups)}
            # Every namespace's part is planned (and so checked) before any is
            # written: a backend without rollback must not keep the first parts.
            for ns, idxs in parts.items():
                self._plan(ns, [checked[i] for i in idxs])
            for ns, idxs in parts.items():
                done, new = self._ingest_counted(ns, [checked[i] for i in idxs])
                for i, ev in zip(idxs, done, strict=True):
                    out[i] = ev
                if new:
                    log(self, ns, "add_events", [checked[i].id for i in idxs], actor, now)
            return out

    def _plan(self, ns: str, events: list[Event]) -> None:
        """Plan one namespace's events without writing: raises what `_ingest` would."""
        events = self._redacted(events)  # as stored, so that a re-add compares equal
        ingest = Ingest(self._b, ns, self._seg_parents(ns))
        ingest.prefetch(
            dict.fromkeys([e.id for e in events] + [p for e in events for p in e.parents])
        )
        ingest.add_all(events, {n for n, _ in self._b.list_branches(ns)})

    def _ingest(self, ns: str, events: list[Event]) -> list[Event]:
        """Plan and write one namespace's events (see `_ingest_counted`)."""
        return self._ingest_counted(ns, events)[0]

    def _ingest_counted(
        self, ns: str, events: list[Event], *, optimistic: bool = True
    ) -> tuple[list[Event], int]:
        """Plan and write one namespace's events; also says how many were new.

        Optimistically, the batch's ids are taken as new without a lookup (the
        common case of an import); if one was stored already, the backend says
        so before writing and the batch is planned again with every id looked up.
        """
        events = self._redacted(events)
        ingest = Ingest(self._b, ns, self._seg_parents(ns))
        ids = [e.id for e in events]
        if optimistic:
            ingest.assume_new(ids)
            ingest.prefetch(p for e in events for p in e.parents)
        else:
            ingest.prefetch(dict.fromkeys(ids + [p for e in events for p in e.parents]))
        names = {n for n, _ in self._b.list_branches(ns)}
        try:
            out = ingest.add_all(events, names)
            plan = ingest.apply()
        except (DuplicateIds, CycleError):
            # A stored id was taken for new: plan again knowing every id, so that a
            # re-add is a no-op and an error names the real cause.
            if not optimistic:
                raise
            return self._ingest_counted(ns, events, optimistic=False)
        if plan.newly_connected:
            self._index_waiting_records(ns, ingest, plan.newly_connected)
        return out, len(plan.new_rows)

    def _index_waiting_records(self, ns: str, ingest: Ingest, connected: list[str]) -> None:
        waiting = self._b.records_waiting_on(ns, connected)
        if not waiting:
            return
        rids = list(dict.fromkeys(r for rs in waiting.values() for r in rs))
        rows = self._b.get_records(ns, rids)
        updates = []
        for rid in rids:
            positions = [ingest.pos_of(s) for s in rows[rid].memory.sources]
            if all(p is not None for p in positions):
                pos, extra = index_position(
                    [p for p in positions if p is not None], ingest.seg_parents_overlay
                )
                updates.append((rid, pos, extra))
        if updates:
            self._b.set_record_positions(ns, updates)
        self._b.drop_record_waits(ns, list(waiting))

    # ----------------------------------------------------------------- records
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
        `branchmem.lifecycle`); without ``expires_at`` the kind's default TTL
        applies, if the store's `Policy` sets one.

        >>> store = Store()
        >>> _ = store.add_event("e1", content="我对花生过敏。")
        >>> store.add_memory("用户对花生过敏", sources=["e1"], key="allergy").key
        'allergy'
        """
        return self.add_memories(
            [
                {
                    "content": content,
                    "sources": sources,
                    "kind": kind,
                    "key": key,
                    "importance": importance,
                    "namespace": namespace,
                    "meta": meta,
                    "id": id,
                    "expires_at": expires_at,
                    "valid_from": valid_from,
                    "valid_to": valid_to,
                }
            ],
            actor=actor,
        )[0]

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
        now = self._clock()
        actor = check_actor(actor)
        batch = items if isinstance(items, list) else _batch(items, "add_memories", "memory")
        with gc_paused(len(batch)):
            return self._add_memories(batch, now, actor)

    def _add_memories(
        self, items: list[Memory | Mapping[str, Any]], now: float, actor: str | None
    ) -> list[Memory]:
        checked = [memory_from(m, now, _new_id) for m in items]
        if self._policy.ttls:
            checked = [self._policy.with_ttl(m) for m in checked]
        by_ns: dict[str, list[int]] = {}
        for i, m in enumerate(checked):
            by_ns.setdefault(m.namespace, []).append(i)
        out = list(checked)
        with self._b.transaction():
            if len(by_ns) > 1:  # check every namespace's part before writing any
                for ns, idxs in by_ns.items():
                    self._new_records(ns, [checked[i] for i in idxs])
            for ns, idxs in by_ns.items():
                done, new = self._write_records(ns, [checked[i] for i in idxs])
                for i, m in zip(idxs, done, strict=True):
                    out[i] = m
                if new:  # a re-add that changes nothing writes no audit line
                    log(self, ns, "add_memories", [checked[i].id for i in idxs], actor, now)
        return out

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
        ns = check_namespace(namespace)
        rec = self._retraction(ns, memory_id, sources, id)
        actor = check_actor(actor)
        with self._b.transaction():
            self._target(ns, memory_id)
            done = self._insert_records(ns, [rec])[0]
            log(self, ns, "retract", [done.id, memory_id], actor, done.created_at)
            return done

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
        ns = check_namespace(namespace)
        allowed = {"kind", "key", "importance", "meta", "id", "expires_at"}
        allowed |= {"valid_from", "valid_to"}
        if set(fields) - allowed:
            raise InvalidInput(
                f"supersede() got unknown field(s) {sorted(set(fields) - allowed)}; "
                f"it takes {', '.join(sorted(allowed))}"
            )
        retraction = self._retraction(ns, memory_id, sources, None)
        actor = check_actor(actor)
        with self._b.transaction():
            old = self._target(ns, memory_id)
            new_id = fields.get("id")
            mem = Memory(
                id=check_id(new_id, "memory id") if new_id is not None else _new_id(),
                content=check_text(content, "content"),
                sources=retraction.sources,
                kind=check_kind(fields.get("kind", old.kind)),
                key=check_key(fields.get("key", old.key)),
                importance=check_importance(fields.get("importance", old.importance)),
                namespace=ns,
                meta=check_meta(fields.get("meta", old.meta)),
                created_at=self._clock(),
            )
            times = {k: fields.get(k, getattr(old, k)) for k in TIME_FIELDS}
            if any(v is not None for v in times.values()):
                checked = memory_from(
                    {"content": "", "sources": ["x"], "id": "x", **times}, 0.0, _new_id
                )
                mem.__dict__.update({k: getattr(checked, k) for k in TIME_FIELDS})
            r, new = self._insert_records(ns, [retraction, mem])
            log(self, ns, "supersede", [new.id, r.id, memory_id], actor, new.created_at)
            return new

    def _retraction(
        self, ns: str, memory_id: str, sources: Sequence[str], rid: str | None
    ) -> Memory:
        target = check_id(memory_id, "memory id")
        return Memory(
            id=check_id(rid, "retraction id") if rid is not None else _new_id(),
            content=f"retracts {target}",
            sources=check_sources(sources),
            kind=RETRACTION,
            namespace=ns,
            target=target,
            importance=0.0,
            created_at=self._clock(),
        )

    def _target(self, ns: str, memory_id: str) -> Memory:
        row = self._b.get_records(ns, [memory_id]).get(memory_id)
        if row is None:
            raise UnknownMemory(memory_id, ns)
        if row.memory.target is not None:
            raise InvalidInput(
                f"{show(memory_id)} is itself a retraction; retract or supersede the "
                "memory it targets instead"
            )
        return row.memory

    def _new_records(self, ns: str, mems: list[Memory]) -> tuple[list[Memory], dict[str, Memory]]:
        """Split ``mems`` into new ones and those stored already (checked to be the
        same); raises, writing nothing, on a conflict."""
        mems = self._redacted(mems)
        existing = self._b.get_records(ns, [m.id for m in mems])
        fresh = []
        result: dict[str, Memory] = {}
        for m in mems:
            old = existing.get(m.id)
            if old is not None:
                if not _same_record(old.memory, m):
                    raise ConflictingRecord(m.id, ns)
                result[m.id] = old.memory
            else:
                fresh.append(m)
        if len({m.id for m in fresh}) != len(fresh):
            raise InvalidInput("two records in one write share an id")
        return fresh, result

    def _insert_records(self, ns: str, mems: list[Memory]) -> list[Memory]:
        return self._write_records(ns, mems)[0]

    def _write_records(self, ns: str, mems: list[Memory]) -> tuple[list[Memory], int]:
        """Store the new ones of ``mems``; returns all of them as stored, and how
        many were new."""
        fresh, result = self._new_records(ns, mems)
        events = self._b.get_events(ns, {s for m in fresh for s in m.sources})
        where: list[list[Pos | None]] = [
            [r.pos if (r := events.get(s)) is not None else None for s in m.sources] for m in fresh
        ]
        # The youngest source's segment of each record with several: looked up in one call.
        warm = set()
        for ps in where:
            if len(ps) > 1 and None not in ps:
                warm.add(max(p for p in ps if p is not None)[0])
        seg_parents = batch_seg_parents(self._seg_parents(ns), warm)
        rows, waits = [], []
        for m, positions in zip(fresh, where, strict=True):
            if all(p is not None for p in positions):
                pos, extra = index_position([p for p in positions if p is not None], seg_parents)
                rows.append(RecordRow(m, pos, extra))
            else:
                rows.append(RecordRow(m, None, ()))
                waits += [(s, m.id) for s, p in zip(m.sources, positions, strict=True) if p is None]
        for stored in self._b.insert_records(ns, rows):
            result[stored.id] = stored
        if waits:
            self._b.add_record_waits(ns, waits)
        return [result[m.id] for m in mems], len(fresh)

    # ------------------------------------------------------------------- reads
    def _anchor(self, ns: str, at: Any) -> tuple[str, Pos | None]:
        """The anchor's event id and position (None while it waits for a parent)."""
        if not isinstance(at, str) or not at:
            raise InvalidInput(
                f"`at` must be an event id or a branch name (a non-empty string), got {show(at)}"
            )
        row = self._b.get_events(ns, [at]).get(at)
        if row is None:
            head = self._b.get_branch(ns, at)
            if head is None:
                raise UnknownAnchor(at, ns)
            row = self._b.get_events(ns, [head]).get(head)
            if row is None:  # a branch always points at a stored event
                raise UnknownAnchor(at, ns)
        return row.event.id, row.pos

    def _ranges(self, ns: str, at: Any) -> dict[int, int] | None:
        _, pos = self._anchor(ns, at)
        if pos is None:
            return None
        return ancestor_ranges(pos, self._seg_parents(ns))

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

        Time (see `branchmem.lifecycle`): records expired at ``now`` (default:
        the store's clock), archived, or outside their ``valid_from``/``valid_to``
        are left out; ``include_archived=True`` keeps archived and expired ones.
        ``as_of=t`` answers as the store would have at time ``t``.
        ``touch=True`` records a use of every record returned.

        >>> Store().memories(at=None)
        []
        """
        ns = check_namespace(namespace)
        if kind is not None and kind != RETRACTION and kind != CONFLICT:
            check_kind(kind)
        t_now, t_as_of = check_read_times(now, as_of)
        if at is None:
            return []
        with self._b.reading():  # one read view for the gate and the lifecycle state
            if t_as_of is not None:
                anchors = [at] if isinstance(at, str) else check_anchors(at)
                tag = not isinstance(at, str)
                out = read_chain(self, ns, anchors, kind, as_of=t_as_of, tag=tag)
            elif not isinstance(at, str):
                out = read_chain(self, ns, check_anchors(at), kind)
            else:
                out = self._gate_read(ns, at, kind)
            out = narrow(self, ns, out, now=t_now, as_of=t_as_of, include_archived=include_archived)
        if touch and out:
            self.touch([m.id for m in out], namespace=ns, now=t_now)
        return out

    def _gate_read(self, ns: str, at: str, kind: str | None) -> list[Memory]:
        """One anchor's records (a chain of one, without ``via``)."""
        with self._b.reading():
            ranges = self._ranges(ns, at)
            return [] if ranges is None else read_views(self, ns, [ranges], kind)[0][0]

    def visible(self, memory_id: str, *, at: str | None, namespace: str = "default") -> bool:
        """Is ``memory_id`` visible at ``at``? ``at=None`` is always False.

        >>> store = Store()
        >>> _ = store.add_event("e1")
        >>> m = store.add_memory("x", sources=["e1"])
        >>> store.visible(m.id, at="e1"), store.visible(m.id, at=None)
        (True, False)
        """
        ns = check_namespace(namespace)
        with self._b.reading():
            row = self._b.get_records(ns, [check_id(memory_id, "memory id")]).get(memory_id)
            if row is None:
                raise UnknownMemory(memory_id, ns)
            if at is None:
                return False
            ranges = self._ranges(ns, at)
            if ranges is None or not row_in_ranges(row, ranges):
                return False
            if row.memory.target is not None:
                return True
            return not any(
                row_in_ranges(r, ranges) for r in self._b.retractions_of(ns, [memory_id])
            )

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
        ns = check_namespace(namespace)
        t_now, _ = check_read_times(now, None)
        with self._b.reading():
            row = self._b.get_records(ns, [check_id(memory_id, "memory id")]).get(memory_id)
            if row is None:
                raise UnknownMemory(memory_id, ns)
            if at is None:
                return Explanation(
                    memory_id,
                    None,
                    False,
                    "hidden: no anchor was given, and a read without an anchor sees nothing",
                )
            anchor_id, pos = self._anchor(ns, at)
            where = f"{show(at)}" if anchor_id == at else f"{show(at)} (head {show(anchor_id)})"
            if pos is None:
                return Explanation(
                    memory_id,
                    at,
                    False,
                    f"hidden at {where}: the anchor is waiting for "
                    "a parent that has not arrived, so nothing is visible there yet",
                )
            ranges = ancestor_ranges(pos, self._seg_parents(ns))
            sources = _source_states(self._b.get_events(ns, row.memory.sources), row, ranges)
            bad = [s for s in sources if s.state != "on_path"]
            if bad:
                return Explanation(
                    memory_id,
                    at,
                    False,
                    f"hidden at {where}: " + "; ".join(_why(s, anchor_id) for s in bad),
                    sources,
                )
            if row.memory.target is None:
                hiders = tuple(
                    r.memory.id
                    for r in self._b.retractions_of(ns, [memory_id])
                    if row_in_ranges(r, ranges)
                )
                if hiders:
                    return Explanation(
                        memory_id,
                        at,
                        False,
                        f"hidden at {where}: retracted by "
                        f"{', '.join(map(repr, hiders))}, whose sources are on the path",
                        sources,
                        hiders,
                    )
            names = ", ".join(repr(s.event_id) for s in sources)
            reason = f"visible at {where}: every source ({names}) is on the path"
            note = time_note(self, ns, row.memory, t_now)
            if note is not None:
                when = "now" if t_now is None else f"at now={t_now}"
                reason += f"; but reads {when} leave it out: {note}"
            return Explanation(memory_id, at, True, reason, sources, hidden_by_time=note)

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
        ns = check_namespace(namespace)
        if last is not None and (not isinstance(last, int) or isinstance(last, bool) or last < 0):
            raise InvalidInput(f"last must be a non-negative integer or None, got {show(last)}")
        if at is None or last == 0:
            return []
        with self._b.reading():
            anchor_id, pos = self._anchor(ns, at)
            if pos is None:
                return []
            # Walk parent links one generation per fetch. Every ancestor of a
            # connected event is connected, and (segment, seq) order is topological.
            found: dict[str, EventRow] = {}
            frontier = [anchor_id]
            while frontier and (last is None or len(found) < last):
                rows = self._b.get_events(ns, frontier)
                found.update(rows)
                frontier = list(
                    {p for r in rows.values() for p in r.event.parents if p not in found}
                )
        events = [r.event for r in sorted(found.values(), key=_POS)]
        return events if last is None else events[-last:]

    def get_event(self, event_id: str, namespace: str = "default") -> Event:
        """The stored event, or `UnknownEvent`."""
        ns = check_namespace(namespace)
        with self._b.reading():
            row = self._b.get_events(ns, [check_id(event_id, "event id")]).get(event_id)
        if row is None:
            raise UnknownEvent(event_id, ns)
        return row.event

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
        ns = check_namespace(namespace)
        first, count = check_page(offset, limit)
        with self._b.reading():
            return [r.event for r in self._b.list_events(ns, first, count)]

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
        ns = check_namespace(namespace)
        first, count = check_page(offset, limit)
        with self._b.reading():
            return [r.memory for r in self._b.list_records(ns, first, count)]

    def get_memory(self, memory_id: str, namespace: str = "default") -> Memory:
        """The stored record (whatever its visibility), or `UnknownMemory`."""
        ns = check_namespace(namespace)
        with self._b.reading():
            row = self._b.get_records(ns, [check_id(memory_id, "memory id")]).get(memory_id)
        if row is None:
            raise UnknownMemory(memory_id, ns)
        return row.memory

    # --------------------------------------------------------------- retrieval
    def search(
        self,
        query: str,
        *,
        at: str | Sequence[str] | None,
        k: int = 10,
        namespace: str = "default",
        **options: Any,
    ) -> list[Hit]:
        """The ``k`` records visible at ``at`` that best match ``query`` (gate first,
        then rank). ``at`` may be a scope chain; ``options`` are those of
        `branchmem.retrieval.search` (``mode``, ``embedder``, ``weights``,
        ``kind``, ``key_prefix``, ``meta``, ``now``, ``as_of``, ``explain``, ``log``).

        >>> store = Store()
        >>> _ = store.add_event("e1", content="我对花生过敏。")
        >>> _ = store.add_memory("用户对花生过敏", sources=["e1"])
        >>> [h.memory.content for h in store.search("花生", at="e1", embedder="hashing")]
        ['用户对花生过敏']
        """
        from .retrieval.search import search

        unknown = set(options) - _search_options()
        if unknown:
            raise InvalidInput(
                f"search() got unknown option(s) {sorted(unknown)}; it takes "
                f"{', '.join(sorted(_search_options()))}"
            )
        return search(self, query, at=at, k=k, namespace=namespace, **options)

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
        **search_options: Any,
    ) -> Context:
        """What a model sees at ``at``: the last ``window`` messages on the path
        (root first; ``None`` for the whole path, 0 for none) and up to ``k``
        visible memories (``None`` for all), ranked by `search` for ``query``
        or by importance and recency without one. ``at`` may be a scope chain;
        the messages then come from its first anchor. ``search_options`` go to
        `search` (``embedder``, ``mode``, ...).

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
            self, at, query=query, window=window, k=k, namespace=namespace, **search_options
        )

    # ----------------------------------------------------------------- imports
    def import_export(
        self,
        path: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
        *,
        format: str = "auto",
        namespace: str = "default",
        progress: Callable[[int, int], None] | None = None,
    ) -> ImportReport:
        """Import a chat export (ChatGPT, Claude, Open WebUI, LibreChat, SillyTavern):
        each conversation's messages become events (abandoned branches too) in one
        transaction, and branch ``conv/<id>`` points at its current leaf.
        Re-importing adds only what is new; see `branchmem.importers`.

        ``format`` is ``"auto"`` or a name from `branchmem.importers.FORMATS`;
        ``progress`` is called with (bytes read, total bytes).

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

        return import_export(self, path, format=format, namespace=namespace, progress=progress)


@functools.cache
def _search_options() -> frozenset[str]:
    import inspect

    from .retrieval.search import search

    params = inspect.signature(search).parameters
    return frozenset(params) - {"store", "query", "at", "k", "namespace"}


def _batch(items: Any, method: str, what: str) -> list[Any]:
    """A batch argument as a list; one item, or a non-iterable, is refused."""
    if isinstance(items, (str, bytes, Mapping, Event, Memory)) or not isinstance(items, Iterable):
        raise InvalidInput(
            f"{method}() takes a list of {what} dicts, got {type(items).__name__} "
            f"{show(items)}; wrap a single {what} in a list"
        )
    return list(items)


def _new_id() -> str:
    return "m_" + uuid.uuid4().hex


_POS = attrgetter("pos")


def _same_record(a: Memory, b: Memory) -> bool:
    keys: tuple[str, ...] = ("content", "sources", "kind", "key", "importance", "meta", "target")
    keys += ("expires_at", "valid_from", "valid_to")
    return all(getattr(a, k) == getattr(b, k) for k in keys)


def _source_states(
    events: dict[str, EventRow], row: RecordRow, ranges: dict[int, int]
) -> tuple[SourceStatus, ...]:
    out = []
    for s in row.memory.sources:
        r = events.get(s)
        if r is None:
            state = "missing"
        elif r.pos is None:
            state = "not_connected"
        else:
            state = "on_path" if in_ranges(r.pos, ranges) else "off_path"
        out.append(SourceStatus(s, state))
    return tuple(out)


def _why(s: SourceStatus, anchor: str) -> str:
    if s.state == "missing":
        return f"source {show(s.event_id)} has not arrived"
    if s.state == "not_connected":
        return f"source {show(s.event_id)} is waiting for a parent that has not arrived"
    return f"source {show(s.event_id)} is not on the path to {show(anchor)}"
