"""`Store.add_edge`: an edge is written as a derived record of kind `EDGE`.

A single-valued predicate (`SINGLE_VALUED`, or ``single=True``) keeps one
object per subject on a path: the new edge retracts, from its own sources,
the edges with the same subject and predicate visible at its position, so
the old value stays wherever the new edge's sources are not ancestors. A
predicate of `ONE_SUBJECT` ("owns") keeps one subject per object the same way.
``replaces`` names edges to retract the same way, whatever the predicate.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..engine import Engine
from ..errors import InvalidInput, UnknownMemory
from ..lineage import ancestor_ranges, index_position
from ..model import EDGE, Memory, new_record_id
from ..ops.audit import log
from ..ops.records import insert_records, retraction
from ..validate import (
    check_actor,
    check_id,
    check_importance,
    check_meta,
    check_namespace,
    check_sources,
    check_text,
    memory_from,
    show,
)
from .index import index_of
from .memo import ViewMemo
from .model import ALIAS, ONE_SUBJECT, SINGLE_VALUED, Edge, edge_content, edge_of, norm
from .view import GraphView

MAX_NAME = 1000


def add_edge(
    engine: Engine,
    subject: str,
    predicate: str,
    obj: str,
    *,
    sources: Sequence[str],
    attrs: Mapping[str, Any] | None = None,
    importance: float = 0.5,
    namespace: str = "default",
    id: str | None = None,
    valid_from: float | None = None,
    valid_to: float | None = None,
    single: bool | None = None,
    replaces: Sequence[str] = (),
    actor: str | None = None,
) -> Edge:
    """`Store.add_edge`."""
    ns = check_namespace(namespace)
    s, p, o = (
        _name(v, w) for v, w in ((subject, "subject"), (predicate, "predicate"), (obj, "object"))
    )
    if norm(s) == norm(o):
        raise InvalidInput(f"an edge joins two entities; subject and object are both {show(s)}")
    if single is not None and not isinstance(single, bool):
        raise InvalidInput(f"single must be True, False or None, got {show(single)}")
    if isinstance(replaces, str) or not isinstance(replaces, Sequence):
        raise InvalidInput(f"replaces must be a list of edge ids, got {show(replaces)}")
    olds = [check_id(r, "edge id in replaces") for r in replaces]
    srcs = check_sources(list(sources) if isinstance(sources, (list, tuple)) else sources)
    parts: dict[str, Any] = {"subject": s, "predicate": p, "object": o}
    meta = {"edge": parts}
    if attrs is not None:
        if not isinstance(attrs, Mapping):
            raise InvalidInput(f"attrs must be a dict, got {show(attrs)}")
        parts["attrs"] = dict(attrs)
    check_meta(meta)
    now = engine.clock()
    item = {
        "content": edge_content(s, p, o),
        "sources": list(srcs),
        "importance": check_importance(importance),
        "namespace": ns,
        "meta": meta,
        "id": id,
        "valid_from": valid_from,
        "valid_to": valid_to,
    }
    checked = memory_from(item, now, new_record_id)
    mem = Memory(**{**_fields(checked), "kind": EDGE})
    actor = check_actor(actor)
    one = (norm(p) in SINGLE_VALUED) if single is None else single
    one_subject = single is None and norm(p) in ONE_SUBJECT
    b = engine.backend
    with b.transaction():
        if b.get_records(ns, [mem.id]).get(mem.id) is not None:
            stored = insert_records(engine, ns, [mem])[0]  # the same again, or ConflictingRecord
            return edge_of(stored)
        targets = [_edge_row(engine, ns, r) for r in olds]
        if one and norm(p) != ALIAS:
            targets += [e.id for e in _same_slot(engine, ns, srcs, norm(s), norm(p), norm(o))]
        if one_subject:
            targets += [e.id for e in _same_slot(engine, ns, srcs, norm(o), norm(p), norm(s), "in")]
        targets = list(dict.fromkeys(targets))
        rets = [retraction(engine, ns, t, srcs, None) for t in targets]
        stored = insert_records(engine, ns, [*rets, mem])[-1]
        log(engine, ns, "add_edge", [stored.id, *targets], actor, now)
    return edge_of(stored)


def _fields(m: Memory) -> dict[str, Any]:
    d = {k: getattr(m, k) for k in ("id", "content", "sources", "kind", "key", "importance")}
    d.update(namespace=m.namespace, meta=m.meta, created_at=m.created_at)
    d.update(valid_from=m.valid_from, valid_to=m.valid_to, expires_at=m.expires_at)
    return d


def _name(value: Any, what: str) -> str:
    text = check_text(value, what)
    if not text.strip() or len(text) > MAX_NAME or "\n" in text:
        raise InvalidInput(
            f"the edge's {what} must be a one-line name of 1..{MAX_NAME} characters, "
            f"got {show(value)}"
        )
    return " ".join(text.split())


def _edge_row(engine: Engine, ns: str, rid: str) -> str:
    row = engine.backend.get_records(ns, [rid]).get(rid)
    if row is None:
        raise UnknownMemory(rid, ns)
    if row.memory.kind != EDGE:
        raise InvalidInput(f"replaces names {show(rid)}, a {row.memory.kind} record, not an edge")
    return rid


def _same_slot(
    engine: Engine, ns: str, srcs: tuple[str, ...], s: str, p: str, o: str, way: str = "out"
) -> list[Edge]:
    """The visible edges (at the new edge's position) with subject ``s`` and
    predicate ``p`` and another object (``way="in"``: object ``s``, another subject)."""
    b = engine.backend
    found = b.event_positions(ns, srcs)
    positions = [found.get(x) for x in srcs]
    if any(q is None for q in positions):
        return []  # a source not connected yet: there is no path to supersede on
    seg_parents = engine.seg_parents(ns)
    if len(positions) == 1:
        pos = positions[0]
    else:
        pos, _ = index_position(positions, seg_parents)  # type: ignore[arg-type]
    rs = ancestor_ranges(pos, seg_parents)  # type: ignore[arg-type]
    memo = ViewMemo([rs], index_of(engine, ns))  # this write's own, never shared
    view = GraphView(engine, ns, srcs[-1], memo, engine.clock(), b.has_lifecycle(ns))
    if not view.linked(s):
        return []
    if way == "in":
        return [
            e
            for e in view.neighbors(s, predicate=p, direction="in")
            if norm(e.object) == s and norm(e.subject) != o
        ]
    return [
        e
        for e in view.neighbors(s, predicate=p, direction="out")
        if norm(e.subject) == s and norm(e.object) != o
    ]
