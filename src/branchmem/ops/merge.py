"""Merge, conflicts and their resolution, all through the event graph and the gate.

A merge is an event with two parents (the target's head and the source's);
everything reachable from either is visible below it. ``overwrite`` and
``keep_both`` only add gated records sourced from the merge event:
retractions of the target's losing values, or conflict records naming both
sides. Resolving a conflict appends an event on a branch and retracts, from
it, the values not kept and the conflict record itself, so the conflict is
closed on that branch and stays open wherever that event is not an ancestor.
"""

from __future__ import annotations

from ..branch_types import CONFLICT, STRATEGIES, Conflict, MergeResult
from ..engine import Engine
from ..errors import ConflictClosed, InvalidInput, UnknownConflict
from ..gate import is_ancestor, position, ranges, read_views, resolve_event
from ..model import Event, Memory, new_event_id, new_record_id
from ..validate import check_actor, check_id, check_name, check_namespace, event_from, show
from .audit import log
from .heads import branch_row, check_expected, move_head
from .ingest import ingest
from .reads import memories, visible
from .records import insert_records, retraction
from .times import narrow


def merge(
    engine: Engine,
    source: str,
    into: str,
    *,
    strategy: str,
    namespace: str,
    actor: str | None,
    fast_forward: bool,
    event_id: str | None,
    expected_head: str | None,
) -> MergeResult:
    """`Store.merge`."""
    ns = check_namespace(namespace)
    into = check_name(into, "branch name `into`")
    actor = check_actor(actor)
    if strategy not in STRATEGIES:
        raise InvalidInput(f"strategy must be one of {', '.join(STRATEGIES)}; got {show(strategy)}")
    if not isinstance(source, str) or not source:
        raise InvalidInput(f"source must be a branch name or an event id, got {show(source)}")
    if source == into:
        raise InvalidInput(
            f"cannot merge branch {show(into)} into itself; merge another branch or event"
        )
    mid = new_event_id() if event_id is None else check_id(event_id, "event id")
    if expected_head is not None:
        check_id(expected_head, "expected_head")
    now = engine.clock()
    b = engine.backend
    with b.transaction():
        row = branch_row(engine, ns, into)
        check_expected(row, ns, expected_head)
        src = resolve_event(engine, ns, source)
        if position(engine, ns, src) is None:
            raise InvalidInput(
                f"source {show(source)} is waiting for a parent that has not arrived; "
                "merge it once its history is connected"
            )
        if position(engine, ns, row.head) is None:
            raise InvalidInput(
                f"branch {into!r} is at {row.head!r}, which is waiting for a parent that "
                "has not arrived; merge into it once its history is connected"
            )
        if is_ancestor(engine, ns, src, row.head):
            return MergeResult(source, into, strategy, row.head, noop=True)
        old_head = row.head
        if fast_forward and is_ancestor(engine, ns, old_head, src):
            kept, incoming = _sides(engine, ns, old_head, src)
            if strategy == "append" or not _collisions(kept, incoming):
                move_head(engine, ns, row, src, "merge", actor, now)
                log(engine, ns, "merge", [into, source, src], actor, now)
                return MergeResult(
                    source, into, strategy, src, fast_forward=True, added=len(incoming)
                )
        if b.get_events(ns, [mid]):
            raise InvalidInput(f"event {show(mid)} already exists in namespace {show(ns)}")
        ev = event_from(
            {
                "id": mid,
                "parent": [old_head, src],
                "role": "note",
                "content": f"merge {source} into {into} ({strategy})",
                "namespace": ns,
                "meta": {"merge": {"source": source, "into": into, "strategy": strategy}},
            },
            now,
        )
        ingest(engine, ns, [ev])
        kept, incoming = _sides(engine, ns, old_head, mid)
        records: list[Memory] = []
        overwritten = 0
        conflict_ids: list[str] = []
        if strategy != "append":
            for key, losers, theirs in _collisions(kept, incoming):
                if strategy == "overwrite":
                    records += [retraction(engine, ns, m.id, [mid], None) for m in losers]
                    overwritten += len(losers)
                else:
                    members = [m.id for m in losers] + [m.id for m in theirs]
                    cid = new_record_id()
                    conflict_ids.append(cid)
                    records.append(
                        Memory(
                            cid,
                            f"conflict on {show(key)}: "
                            + " / ".join(m.content for m in losers + theirs),
                            (mid,),
                            kind=CONFLICT,
                            key=key,
                            importance=0.0,
                            namespace=ns,
                            meta={"members": members},
                            created_at=now,
                        )
                    )
        if records:
            insert_records(engine, ns, records)
        move_head(engine, ns, row, mid, "merge", actor, now)
        log(engine, ns, "merge", [into, source, mid, *(r.id for r in records)], actor, now)
        return MergeResult(
            source,
            into,
            strategy,
            mid,
            event=mid,
            added=len(incoming),
            overwritten=overwritten,
            conflicts=len(conflict_ids),
            conflict_ids=tuple(conflict_ids),
        )


def conflicts(engine: Engine, *, at: str | None, namespace: str) -> list[Conflict]:
    """`Store.conflicts`."""
    found = memories(
        engine,
        at=at,
        kind=CONFLICT,
        namespace=namespace,
        now=None,
        as_of=None,
        include_archived=False,
        touch=False,
    )
    return [_to_conflict(m) for m in found]


def resolve(
    engine: Engine,
    conflict_id: str,
    keep: str,
    *,
    branch: str,
    namespace: str,
    actor: str | None,
    expected_head: str | None,
) -> Event:
    """`Store.resolve`."""
    ns = check_namespace(namespace)
    cid = check_id(conflict_id, "conflict id")
    keep = check_id(keep, "memory id to keep")
    actor = check_actor(actor)
    if expected_head is not None:
        check_id(expected_head, "expected_head")
    now = engine.clock()
    with engine.backend.transaction():
        rec = engine.backend.get_records(ns, [cid]).get(cid)
        if rec is None or rec.memory.kind != CONFLICT:
            raise UnknownConflict(cid, ns)
        conflict = _to_conflict(rec.memory)
        if keep not in conflict.members:
            raise InvalidInput(
                f"{show(keep)} is not a member of conflict {show(cid)}; "
                f"keep one of {list(conflict.members)}"
            )
        row = branch_row(engine, ns, branch)
        check_expected(row, ns, expected_head)
        if not visible(engine, cid, at=row.head, namespace=ns):
            raise ConflictClosed(cid, row.name, ns)
        rid = new_event_id()
        ev = event_from(
            {
                "id": rid,
                "parent": row.head,
                "role": "note",
                "content": f"resolve {cid}: keep {keep}",
                "namespace": ns,
                "meta": {"resolve": cid, "keep": keep},
            },
            now,
        )
        (ev,) = ingest(engine, ns, [ev])
        drop = [m for m in conflict.members if m != keep] + [cid]
        insert_records(engine, ns, [retraction(engine, ns, m, [rid], None) for m in drop])
        move_head(engine, ns, row, rid, "resolve", actor, now)
        log(engine, ns, "resolve", [row.name, cid, keep, rid], actor, now)
    return ev


def _collisions(
    target: list[Memory], incoming: list[Memory]
) -> list[tuple[str, list[Memory], list[Memory]]]:
    """``(key, target's losing values, incoming values)`` for every key where both
    sides hold a visible memory and the target's content is not among the incoming."""
    # Keys are usually distinct: group only the keys both sides hold (three cheap passes).
    target_keys = {m.key for m in target if m.key is not None}
    theirs: dict[str, list[Memory]] = {}
    for m in incoming:
        if m.key in target_keys:
            theirs.setdefault(m.key, []).append(m)
    if not theirs:
        return []
    ours: dict[str, list[Memory]] = {}
    for m in target:
        if m.key in theirs:
            ours.setdefault(m.key, []).append(m)
    out = []
    for key in sorted(theirs):
        contents = {m.content for m in theirs[key]}
        losers = [m for m in ours[key] if m.content not in contents]
        if losers:
            out.append((key, losers, theirs[key]))
    return out


def _sides(engine: Engine, ns: str, head: str, new: str) -> tuple[list[Memory], list[Memory]]:
    """What ``new`` (a descendant of ``head``) shows, in two parts: the memories
    ``head`` shows too, and the ones it adds; both oldest first, in one pass."""
    mine_r, new_r = ranges(engine, ns, head), ranges(engine, ns, new)
    assert mine_r is not None and new_r is not None  # both are connected
    (mine, incoming), hidden_in = read_views(engine, ns, [mine_r, new_r], None)
    mine = narrow(engine, ns, mine, now=None, as_of=None, include_archived=False)
    incoming = narrow(engine, ns, incoming, now=None, as_of=None, include_archived=False)
    # What ``head`` shows, ``new`` shows too unless a retraction there hides it.
    return [m for m in mine if m.id not in hidden_in[1]] if hidden_in[1] else mine, incoming


def _to_conflict(m: Memory) -> Conflict:
    meta = m.meta or {}
    return Conflict(
        m.id,
        m.key or "",
        tuple(meta.get("members", ())),
        m.sources[0],
        m.namespace,
        m.created_at,
    )
