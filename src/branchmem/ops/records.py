"""Writing derived records: add, retract, supersede.

A record's position is its youngest source's (see `branchmem.lineage`); a
record whose sources have not all arrived waits, hidden, until they connect.
Each write tells the engine's ``on_records`` hook (the background embedder)
of the records it added, once it commits.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..backends.base import CommitHooks, Pos, RecordRow
from ..bulk import gc_paused
from ..engine import Engine
from ..errors import ConflictingRecord, InvalidInput, UnknownMemory, UnknownSources
from ..lineage import batch_seg_parents, index_position
from ..model import EDGE, RETRACTION, Memory, new_record_id, set_fresh
from ..notices import held, notify
from ..validate import (
    TIME_FIELDS,
    check_actor,
    check_batch,
    check_content,
    check_id,
    check_importance,
    check_key,
    check_kind,
    check_meta,
    check_namespace,
    check_sources,
    memory_from,
    show,
)
from .audit import log
from .cascade import cascade
from .dedup import visible_duplicate

SUPERSEDE_FIELDS = frozenset(
    {"kind", "key", "importance", "meta", "id", "expires_at", "valid_from", "valid_to"}
)


def add_memory(
    engine: Engine,
    content: str,
    *,
    sources: Sequence[str],
    kind: str,
    key: str | None,
    importance: float,
    namespace: str,
    meta: dict[str, Any] | None,
    id: str | None,
    expires_at: float | None,
    valid_from: float | None,
    valid_to: float | None,
    actor: str | None,
) -> Memory:
    """`Store.add_memory`: a batch of one."""
    if (
        isinstance(content, str)
        and isinstance(namespace, str)
        and isinstance(sources, (list, tuple))
    ):
        dup = visible_duplicate(engine, namespace, content, key, list(sources), id)
        if dup is not None:
            return dup  # one fact once (`ops.dedup`)
    item = {
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
    return add_memories(engine, [item], actor=actor)[0]


def add_memories(
    engine: Engine, items: Iterable[Memory | Mapping[str, Any]], *, actor: str | None
) -> list[Memory]:
    """`Store.add_memories` (and `Store.add_memory`, a batch of one)."""
    now = engine.clock()
    actor = check_actor(actor)
    batch = items if isinstance(items, list) else check_batch(items, "add_memories", "memory")
    with held(), gc_paused(len(batch)):
        return _add_memories(engine, batch, now, actor)


def _add_memories(
    engine: Engine, items: list[Memory | Mapping[str, Any]], now: float, actor: str | None
) -> list[Memory]:
    checked = [memory_from(m, now, new_record_id) for m in items]
    # Ids made here are new: no record can hold one, so none is looked up.
    made = [not isinstance(m, Memory) and m.get("id") is None for m in items]
    policy = engine.policy
    if policy.ttls:
        checked = [policy.with_ttl(m) for m in checked]
    by_ns: dict[str, list[int]] = {}
    for i, m in enumerate(checked):
        by_ns.setdefault(m.namespace, []).append(i)
    out = list(checked)
    with engine.backend.transaction():
        if len(by_ns) > 1:  # check every namespace's part before writing any
            for ns, idxs in by_ns.items():
                new_records(engine, ns, [checked[i] for i in idxs], all(made[i] for i in idxs))
        for ns, idxs in by_ns.items():
            mems = [checked[i] for i in idxs]
            done, new = write_records(engine, ns, mems, all(made[i] for i in idxs))
            for i, m in zip(idxs, done, strict=True):
                out[i] = m
            if new:  # a re-add that changes nothing writes no audit line
                log(engine, ns, "add_memories", [checked[i].id for i in idxs], actor, now)
    return out


def retract(
    engine: Engine,
    memory_id: str,
    *,
    sources: Sequence[str],
    namespace: str,
    id: str | None,
    actor: str | None,
) -> Memory:
    """`Store.retract`."""
    ns = check_namespace(namespace)
    rec = retraction(engine, ns, memory_id, sources, id)
    actor = check_actor(actor)
    with held(), engine.backend.transaction():
        target(engine, ns, memory_id)
        stored, new = write_records(engine, ns, [rec])
        done = stored[0]
        if new:  # a re-add of the same retraction changes nothing: no audit line
            log(engine, ns, "retract", [done.id, memory_id], actor, done.created_at)
        return done


def supersede(
    engine: Engine,
    memory_id: str,
    content: str,
    *,
    sources: Sequence[str],
    namespace: str,
    actor: str | None,
    fields: Mapping[str, Any],
) -> Memory:
    """`Store.supersede`: ``fields`` are the new record's, defaulting to the old one's."""
    ns = check_namespace(namespace)
    if set(fields) - SUPERSEDE_FIELDS:
        raise InvalidInput(
            f"supersede() got unknown field(s) {sorted(set(fields) - SUPERSEDE_FIELDS)}; "
            f"it takes {', '.join(sorted(SUPERSEDE_FIELDS))}"
        )
    retracting = retraction(engine, ns, memory_id, sources, None)
    actor = check_actor(actor)
    with held(), engine.backend.transaction():
        old = target(engine, ns, memory_id)
        if old.kind == EDGE:
            raise InvalidInput(
                f"{show(memory_id)} is an edge; replace it with "
                f"add_edge(subject, predicate, object, sources=..., replaces=[{memory_id!r}])"
            )
        new_id = fields.get("id")
        mem = Memory(
            id=check_id(new_id, "memory id") if new_id is not None else new_record_id(),
            content=check_content(content, "content"),
            sources=retracting.sources,
            kind=check_kind(fields.get("kind", old.kind)),
            key=check_key(fields.get("key", old.key)),
            importance=check_importance(fields.get("importance", old.importance)),
            namespace=ns,
            meta=check_meta(fields.get("meta", old.meta)),
            created_at=engine.clock(),
        )
        times = {k: fields.get(k, getattr(old, k)) for k in TIME_FIELDS}
        if any(v is not None for v in times.values()):
            checked = memory_from(
                {"content": "", "sources": ["x"], "id": "x", **times}, 0.0, new_record_id
            )
            set_fresh(mem, **{k: getattr(checked, k) for k in TIME_FIELDS})
        # Both ids made here unless the caller named the new record's.
        r, new = write_records(engine, ns, [retracting, mem], new_id is None)[0]
        log(engine, ns, "supersede", [new.id, r.id, memory_id], actor, new.created_at)
        return new


def retraction(
    engine: Engine, ns: str, memory_id: str, sources: Sequence[str], rid: str | None
) -> Memory:
    """A retraction of ``memory_id`` sourced from ``sources`` (not yet written)."""
    aim = check_id(memory_id, "memory id")
    return Memory(
        id=check_id(rid, "retraction id") if rid is not None else new_record_id(),
        content=f"retracts {aim}",
        sources=check_sources(sources),
        kind=RETRACTION,
        namespace=ns,
        target=aim,
        importance=0.0,
        created_at=engine.clock(),
    )


def target(engine: Engine, ns: str, memory_id: str) -> Memory:
    """The stored record a retraction or supersede aims at (not itself a retraction)."""
    row = engine.backend.get_records(ns, [memory_id]).get(memory_id)
    if row is None:
        raise UnknownMemory(memory_id, ns)
    if row.memory.target is not None:
        raise InvalidInput(
            f"{show(memory_id)} is itself a retraction; retract or supersede the "
            "memory it targets instead"
        )
    return row.memory


def new_records(
    engine: Engine, ns: str, mems: list[Memory], made: bool = False
) -> tuple[list[Memory], dict[str, Memory]]:
    """Split ``mems`` into new ones and those stored already (checked to be the
    same); raises, writing nothing, on a conflict. ``made``: every id was made
    for this write (`new_record_id`), so none is stored and none is looked up."""
    mems = engine.redacted(mems)
    existing = {} if made else engine.backend.get_records(ns, [m.id for m in mems])
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


def insert_records(engine: Engine, ns: str, mems: list[Memory]) -> list[Memory]:
    """Store ``mems`` (inside the caller's transaction); returns them as stored."""
    return write_records(engine, ns, mems)[0]


def write_records(
    engine: Engine, ns: str, mems: list[Memory], made: bool = False
) -> tuple[list[Memory], int]:
    """Store the new ones of ``mems``; returns all of them as stored, and how
    many were new (``made``: as `new_records`)."""
    fresh, result = new_records(engine, ns, mems, made)
    b = engine.backend
    found = b.event_positions(ns, {s for m in fresh for s in m.sources})
    where: list[list[Pos | None]] = [[found.get(s) for s in m.sources] for m in fresh]
    # The youngest source's segment of each record with several: looked up in one call.
    placed = [ps for ps in where if len(ps) > 1 and None not in ps]
    warm = {max(ps)[0] for ps in placed}  # type: ignore[type-var,index]
    seg_parents = batch_seg_parents(engine.seg_parents(ns), warm)
    rows, waits, hidden = [], [], []
    for m, positions in zip(fresh, where, strict=True):
        if None in positions:
            rows.append(RecordRow(m, None, ()))
            hidden.append(m.id)
            waits += [(s, m.id) for s, p in zip(m.sources, positions, strict=True) if p is None]
        elif len(positions) == 1:  # the record sits where its one source does
            rows.append(RecordRow(m, positions[0], ()))
        else:
            pos, extra = index_position(positions, seg_parents)  # type: ignore[arg-type]
            rows.append(RecordRow(m, pos, extra))
    for stored in b.insert_records(ns, rows):
        result[stored.id] = stored
    if waits:
        b.add_record_waits(ns, waits)
        unknown = tuple(dict.fromkeys(s for s, _ in waits))
        notify(UnknownSources(ns, tuple(hidden), unknown))  # accepted, hidden: say so
    falls = cascade(engine, ns, fresh)
    if falls:  # consolidations of what these retract (`ops.cascade`)
        write_records(engine, ns, falls)
    tell = engine.on_records
    if fresh and tell is not None:
        if isinstance(b, CommitHooks):  # once committed, seen by every connection
            b.after_commit(lambda: tell(ns, fresh))
        else:
            tell(ns, fresh)
    return [result[m.id] for m in mems], len(fresh)


def _same_record(a: Memory, b: Memory) -> bool:
    keys: tuple[str, ...] = ("content", "sources", "kind", "key", "importance", "meta", "target")
    keys += ("expires_at", "valid_from", "valid_to")
    return all(getattr(a, k) == getattr(b, k) for k in keys)
