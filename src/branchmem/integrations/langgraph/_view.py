"""What one batch of `BranchmemStore` reads (`_View`): a lineage, the
long-term view, or a run's scope chain ``[its anchor, the other threads'
heads]``, with this thread's own value first on a key."""

from __future__ import annotations

import time
from collections.abc import Container, Iterator

from ...model import Memory
from ...store import Store
from . import _keys as k
from ._heads import HeadView, Ident, read_view
from ._longterm import LongTerm
from ._views import view_at, view_of


class _View:
    """What one batch reads: a lineage, the long-term view, or a run's scope
    chain ``[its anchor, the other threads' heads]``."""

    def __init__(self, own: HeadView | None, lt: LongTerm | None, thread: str | None) -> None:
        self.own = own
        self.lt = lt
        self.thread = thread
        self.now = time.time()
        self.touched: set[Ident] = set()
        if lt is not None and thread is not None:
            self.touched = lt.touched(thread)

    @classmethod
    def of(
        cls,
        s: Store,
        ns: str,
        anchor: str | None,
        thread: str | None,
        *,
        shared: bool,
        linked: Container[str],
    ) -> _View:
        """The view of one batch in namespace ``ns`` of ``s``: at ``anchor`` (a
        checkpoint's or a task's event; a task not in ``linked`` has written
        nothing) in ``thread``, through the long-term view when ``shared``."""
        checkpoint = None if anchor is None else k.task_parent(anchor) or anchor
        if anchor != checkpoint and anchor not in linked:
            anchor = checkpoint  # a task not linked yet has written nothing
        if anchor is not None and (not shared or thread is None):
            return cls(read_view(s, ns, anchor, hides=False), None, None)
        lt = view_of(s, ns)
        if anchor is None or checkpoint is None or thread is None:
            return cls(None, lt, None)
        own = view_at(s, ns, thread, anchor, checkpoint)
        return cls(own or read_view(s, ns, anchor), lt, thread)

    def get(self, ident: Ident) -> Memory | None:
        m = self._get(ident)
        return m if m is not None and (m.expires_at is None or m.expires_at > self.now) else None

    def _get(self, ident: Ident) -> Memory | None:
        own, lt = self.own, self.lt
        if lt is None:
            return own.items.get(ident) if own is not None else None
        with lt.lock:
            if own is None:
                return (lt.current.get(ident[0]) or {}).get(ident[1])
            mine = own.items.get(ident)
            if mine is not None and not lt.hidden_by_others(mine.id, self.thread or ""):
                return mine
            cur = (lt.current.get(ident[0]) or {}).get(ident[1])
            if (
                mine is None
                and ident not in self.touched
                and (cur is None or cur.id not in own.hides)
            ):
                return cur
            hidden = set(own.hides)
            if mine is not None:
                hidden.add(mine.id)
            return lt.best(ident, without=self.thread, hidden=hidden)

    def items(self, prefix: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], Memory]]:
        """Every item under ``prefix`` this view sees (not expired), with its
        namespace."""
        n, now = len(prefix), self.now
        own, lt = self.own, self.lt
        seen: set[Ident] = set()
        if own is not None:
            for ident in own.items:
                if ident[0][:n] == prefix:
                    seen.add(ident)
                    if (m := self.get(ident)) is not None:
                        yield ident[0], m
            if lt is None:
                return
        assert lt is not None
        out: list[tuple[tuple[str, ...], Memory]] = []
        with lt.lock:
            for space, recs in list(lt.spaces(prefix)):
                if own is None:  # the long-term view as kept
                    out += [(space, m) for m in recs.values()
                            if m.expires_at is None or m.expires_at > now]  # fmt: skip
                    continue
                for key in recs:
                    ident = (space, key)
                    if ident not in seen:
                        seen.add(ident)
                        if (g := self.get(ident)) is not None:
                            out.append((space, g))
            if own is not None:
                for ident in self.touched - seen:
                    if ident[0][:n] == prefix and (g := self.get(ident)) is not None:
                        out.append((ident[0], g))
        yield from out

    def groups(self, prefix: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], list[Memory]]]:
        """`items` by namespace (expired ones left in, for the caller to skip)."""
        if self.own is None and self.lt is not None:  # the long-term view as kept
            with self.lt.lock:
                spaces = [(space, list(recs.values())) for space, recs in self.lt.spaces(prefix)]
            yield from spaces
            return
        for space, m in self.items(prefix):
            yield space, [m]

    def spaces(self) -> set[tuple[str, ...]]:
        return {space for space, _ in self.items(())}
