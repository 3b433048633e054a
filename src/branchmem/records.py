"""Writing derived records: add, retract, supersede.

A record's position is its youngest source's (see `branchmem.lineage`); a
record whose sources have not all arrived waits, hidden, until they connect.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from .backends.base import CommitHooks, Pos, RecordRow
from .branches import check_actor, log, new_record_id
from .bulk import gc_paused
from .errors import ConflictingRecord, InvalidInput, UnknownMemory
from .lineage import batch_seg_parents, index_position
from .model import RETRACTION, Memory, set_fresh
from .store_parts import StoreParts
from .validate import (
    TIME_FIELDS,
    check_batch,
    check_id,
    check_importance,
    check_key,
    check_kind,
    check_meta,
    check_namespace,
    check_sources,
    check_text,
    memory_from,
    show,
)

if TYPE_CHECKING:
    from .store import Store


class RecordOps(StoreParts):
    """`Store` methods that write derived records (mixed into `Store`)."""

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
        batch = items if isinstance(items, list) else check_batch(items, "add_memories", "memory")
        with gc_paused(len(batch)):
            return self._add_memories(batch, now, actor)

    def _add_memories(
        self, items: list[Memory | Mapping[str, Any]], now: float, actor: str | None
    ) -> list[Memory]:
        checked = [memory_from(m, now, new_record_id) for m in items]
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
                    log(
                        cast("Store", self),
                        ns,
                        "add_memories",
                        [checked[i].id for i in idxs],
                        actor,
                        now,
                    )
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
            stored, new = self._write_records(ns, [rec])
            done = stored[0]
            if new:  # a re-add of the same retraction changes nothing: no audit line
                ids = [done.id, memory_id]
                log(cast("Store", self), ns, "retract", ids, actor, done.created_at)
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
                id=check_id(new_id, "memory id") if new_id is not None else new_record_id(),
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
                    {"content": "", "sources": ["x"], "id": "x", **times}, 0.0, new_record_id
                )
                set_fresh(mem, **{k: getattr(checked, k) for k in TIME_FIELDS})
            r, new = self._insert_records(ns, [retraction, mem])
            log(
                cast("Store", self),
                ns,
                "supersede",
                [new.id, r.id, memory_id],
                actor,
                new.created_at,
            )
            return new

    def _retraction(
        self, ns: str, memory_id: str, sources: Sequence[str], rid: str | None
    ) -> Memory:
        target = check_id(memory_id, "memory id")
        return Memory(
            id=check_id(rid, "retraction id") if rid is not None else new_record_id(),
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
        found = self._b.event_positions(ns, {s for m in fresh for s in m.sources})
        where: list[list[Pos | None]] = [[found.get(s) for s in m.sources] for m in fresh]
        # The youngest source's segment of each record with several: looked up in one call.
        placed = [ps for ps in where if len(ps) > 1 and None not in ps]
        warm = {max(ps)[0] for ps in placed}  # type: ignore[type-var,index]
        seg_parents = batch_seg_parents(self._seg_parents(ns), warm)
        rows, waits = [], []
        for m, positions in zip(fresh, where, strict=True):
            if None in positions:
                rows.append(RecordRow(m, None, ()))
                waits += [(s, m.id) for s, p in zip(m.sources, positions, strict=True) if p is None]
            elif len(positions) == 1:  # the record sits where its one source does
                rows.append(RecordRow(m, positions[0], ()))
            else:
                pos, extra = index_position(positions, seg_parents)  # type: ignore[arg-type]
                rows.append(RecordRow(m, pos, extra))
        for stored in self._b.insert_records(ns, rows):
            result[stored.id] = stored
        if waits:
            self._b.add_record_waits(ns, waits)
        if fresh and self._on_records is not None:
            tell = self._on_records
            if isinstance(self._b, CommitHooks):  # once committed, seen by every connection
                self._b.after_commit(lambda: tell(ns, fresh))
            else:
                tell(ns, fresh)
        return [result[m.id] for m in mems], len(fresh)


def _same_record(a: Memory, b: Memory) -> bool:
    keys: tuple[str, ...] = ("content", "sources", "kind", "key", "importance", "meta", "target")
    keys += ("expires_at", "valid_from", "valid_to")
    return all(getattr(a, k) == getattr(b, k) for k in keys)
