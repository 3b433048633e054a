"""What graph views derive at one anchor state, kept between them (a cache of
the engine, under its one rule).

A `GraphView` works out, per entity, the visible edges at it, the names its
visible aliases merge, and its neighbour lists. All of that depends only on
the anchors, the namespace's edge index and the time; so while the backend's
``writes`` stand still (nothing was written or moved) every view made at the
same anchors can share one `ViewMemo`, and a repeated ``neighbors`` costs a
dict lookup instead of the gate again. Shared only when no edge of the index
has a time bound and the namespace has no lifecycle rows (then the time
changes nothing); otherwise each view keeps its own, as before.

A shared memo at one anchor (a string) also keeps its `GraphView`: while the
backend's `QuickGeneration` says nothing moved, `Store.graph` hands that
view back without opening a read (`ViewMemos.fast`), so a repeated
``store.graph(at=x).neighbors(y)`` costs a counter check and two lookups.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from ..backends.base import Backend, Generation, QuickGeneration
from ..engine import Engine
from .index import NsIndex
from .model import Edge

LIMIT = 256  # anchor states kept per engine, the least recently used dropped first


class ViewMemo:
    """One anchor state: its ranges and index cut, and the derived answers
    (filled lazily by the views made there)."""

    __slots__ = ("asked", "comp", "cut", "index", "nb", "said", "top", "touch", "view", "views")

    def __init__(
        self, views: list[dict[int, int]] | None = None, index: NsIndex | None = None
    ) -> None:
        self.views = views if views is not None else []
        self.index = index if index is not None else NsIndex()
        self.cut = self.index.max_seq  # what a later write appends is not in the views
        self.top = self.index.top  # the highest record seq then (None: not known)
        # the names of the index that visible records mention (worked out once)
        self.said: frozenset[str] | None = None
        self.touch: dict[str, list[Edge]] = {}
        self.comp: dict[str, tuple[str, ...]] = {}
        self.nb: dict[tuple[Any, ...], list[Edge]] = {}
        # neighbors' answers by the arguments as given: the name (with the default
        # predicate and direction), or (name, predicate, direction)
        self.asked: dict[Any, list[Edge]] = {}
        # the `GraphView` at one anchor, kept where shared (an object here: views
        # are made of memos, not the other way round)
        self.view: object | None = None


_Key = tuple[str, tuple[str, ...]]


class ViewMemos:
    """The engine's `ViewMemo` per (namespace, anchors), valid for one ``writes``;
    and the view kept at each one anchor, for `fast`."""

    def __init__(self) -> None:
        self._by: OrderedDict[_Key, tuple[int | None, ViewMemo]] = OrderedDict()
        self._views: dict[tuple[str, str], tuple[int | None, object]] = {}
        self._lock = threading.Lock()
        self._quick: tuple[Backend, Callable[[], Generation | None] | None] | None = None
        self._synced: Generation | None = None  # the engine was synced to it

    def fast(self, engine: Engine, ns: str, at: str) -> object | None:
        """The view kept at the one anchor ``at``, if the backend's
        `QuickGeneration` says nothing moved since it was made; no read is opened
        (a plain dict read: the lock is for writers)."""
        b = engine.backend
        q = self._quick
        if q is None or q[0] is not b:
            q = self._quick = (b, b.quick_generation if isinstance(b, QuickGeneration) else None)
        if q[1] is None:
            return None
        gen = q[1]()
        if gen is None:
            return None
        if gen is not self._synced:  # (a backend hands back its last answer while nothing moves)
            engine.sync(gen)  # an erasure since: everything here is dropped first
            self._synced = gen
        got = self._views.get((ns, at))
        if got is None or got[0] != gen.writes:
            return None
        return got[1]

    def keep_view(self, ns: str, at: str, memo: ViewMemo, view: object) -> None:
        """Keep ``view`` (over ``memo``) for `fast`, if ``memo`` is the one kept at ``at``."""
        with self._lock:
            got = self._by.get((ns, (at,)))
            if got is not None and got[1] is memo:
                self._views[(ns, at)] = (got[0], view)

    def clear(self) -> None:
        with self._lock:
            self._by.clear()
            self._views.clear()

    def forget(self, ns: str, ids: list[str] | None, /) -> None:
        with self._lock:
            for key in [k for k in self._by if k[0] == ns]:
                del self._by[key]
            for vk in [k for k in self._views if k[0] == ns]:
                del self._views[vk]

    def get(self, ns: str, anchors: tuple[str, ...], writes: int | None) -> ViewMemo | None:
        """The memo kept for ``anchors`` as of ``writes`` (the backend's, read in
        the caller's transaction), if any."""
        key = (ns, anchors)
        with self._lock:
            got = self._by.get(key)
            if got is None or got[0] != writes:
                return None
            self._by.move_to_end(key)
            return got[1]

    def put(
        self,
        ns: str,
        anchors: tuple[str, ...],
        writes: int | None,
        views: list[dict[int, int]],
        index: NsIndex,
    ) -> ViewMemo:
        """A memo for views at ``anchors`` over ``index``, kept when the index
        stands at ``writes`` (a private one when it has already moved past)."""
        with index.lock:
            memo = ViewMemo(views, index)
            if index.writes != writes:
                return memo
        with self._lock:
            self._by[(ns, anchors)] = (writes, memo)
            self._by.move_to_end((ns, anchors))
            if len(anchors) == 1:
                self._views.pop((ns, anchors[0]), None)  # of an older state
            while len(self._by) > LIMIT:
                (old_ns, old), _ = self._by.popitem(last=False)
                if len(old) == 1:
                    self._views.pop((old_ns, old[0]), None)
        return memo
