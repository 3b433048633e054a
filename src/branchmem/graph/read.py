"""`Store.graph`: the view of the relation graph at an anchor or a scope chain."""

from __future__ import annotations

from collections.abc import Sequence

from ..engine import Engine
from ..gate import ranges
from ..validate import check_anchors, check_namespace, check_time
from .index import NsIndex, index_of
from .view import GraphView


def graph(
    engine: Engine, *, at: str | Sequence[str] | None, namespace: str, now: float | None
) -> GraphView:
    """`Store.graph`: ``at=None`` is an empty view (no anchor, nothing visible)."""
    ns = check_namespace(namespace)
    t = check_time(now, "now")
    when = engine.clock() if t is None else t
    if at is None:
        return GraphView(engine, ns, [], [], NsIndex(), when, False)
    anchors = [at] if isinstance(at, str) else check_anchors(at)
    b = engine.backend
    with b.reading():
        views = [rs for a in anchors if (rs := ranges(engine, ns, a)) is not None]
        index = index_of(engine, ns)
        life = b.has_lifecycle(ns)
    return GraphView(engine, ns, at if isinstance(at, str) else anchors, views, index, when, life)
