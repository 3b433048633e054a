"""`Store.graph`: the view of the relation graph at an anchor or a scope chain."""

from __future__ import annotations

from collections.abc import Sequence

from ..engine import Engine
from ..gate import ranges
from ..validate import check_anchors, check_namespace, check_time
from .index import index_of
from .memo import ViewMemo, ViewMemos
from .view import GraphView


def graph(
    engine: Engine, *, at: str | Sequence[str] | None, namespace: str, now: float | None
) -> GraphView:
    """`Store.graph`: ``at=None`` is an empty view (no anchor, nothing visible)."""
    ns = check_namespace(namespace)
    t = check_time(now, "now")
    when = engine.clock() if t is None else t
    if at is None:
        return GraphView(engine, ns, [], ViewMemo(), when, False)
    anchors = [at] if isinstance(at, str) else check_anchors(at)
    b = engine.backend
    key = tuple(anchors)
    with b.reading():
        gen = b.generation()
        engine.sync(gen)
        memos = engine.cache("graph-views", ViewMemos)
        memo = memos.get(ns, key, gen.writes)
        life = False
        if memo is None:
            views = [rs for a in anchors if (rs := ranges(engine, ns, a)) is not None]
            index = index_of(engine, ns)
            life = b.has_lifecycle(ns)
            if life or index.timed:  # the time matters: this view's answers are its own
                memo = ViewMemo(views, index)
            else:
                memo = memos.put(ns, key, gen.writes, views, index)
    shown = at if isinstance(at, str) else anchors
    return GraphView(engine, ns, shown, memo, when, life)
