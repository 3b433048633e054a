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
    memos = engine.cache("graph-views", ViewMemos)
    if type(at) is str and type(namespace) is str and now is None:
        # Nothing moved since a view was made here: that view, without a read.
        # (Only a shared one is kept, where the time changes no edge; a name
        # kept there was checked when it was made.)
        kept = memos.fast(engine, namespace, at)
        if isinstance(kept, GraphView):
            return kept
    ns = check_namespace(namespace)
    t = check_time(now, "now")
    if at is None:
        return GraphView(engine, ns, [], ViewMemo(), engine.clock() if t is None else t, False)
    b = engine.backend
    when = engine.clock() if t is None else t
    anchors = [at] if isinstance(at, str) else check_anchors(at)
    key = tuple(anchors)
    with b.reading():
        gen = b.generation(ns)
        engine.sync(gen)
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
        if isinstance(at, str) and t is None and not life and not memo.index.timed:
            # Shared (or as good as): one view at the anchor, handed back while
            # nothing moves; its time changes no edge here.
            view = memo.view
            if not isinstance(view, GraphView):
                view = GraphView(engine, ns, at, memo, when, False, kept=True)
                memo.view = view
                memos.keep_view(ns, at, memo, view)
            return view
    shown = at if isinstance(at, str) else anchors
    return GraphView(engine, ns, shown, memo, when, life)
