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
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

from .index import NsIndex
from .model import Edge

LIMIT = 256  # anchor states kept per engine, the least recently used dropped first


class ViewMemo:
    """One anchor state: its ranges and index cut, and the derived answers
    (filled lazily by the views made there)."""

    __slots__ = ("comp", "cut", "index", "nb", "touch", "views")

    def __init__(
        self, views: list[dict[int, int]] | None = None, index: NsIndex | None = None
    ) -> None:
        self.views = views if views is not None else []
        self.index = index if index is not None else NsIndex()
        self.cut = self.index.max_seq  # what a later write appends is not in the views
        self.touch: dict[str, list[Edge]] = {}
        self.comp: dict[str, tuple[str, ...]] = {}
        self.nb: dict[tuple[Any, ...], list[Edge]] = {}


_Key = tuple[str, tuple[str, ...]]


class ViewMemos:
    """The engine's `ViewMemo` per (namespace, anchors), valid for one ``writes``."""

    def __init__(self) -> None:
        self._by: OrderedDict[_Key, tuple[int | None, ViewMemo]] = OrderedDict()
        self._lock = threading.Lock()

    def clear(self) -> None:
        with self._lock:
            self._by.clear()

    def forget(self, ns: str, ids: list[str] | None, /) -> None:
        with self._lock:
            for key in [k for k in self._by if k[0] == ns]:
                del self._by[key]

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
            while len(self._by) > LIMIT:
                self._by.popitem(last=False)
        return memo
