"""What one batch of `BranchmemStore` reads (`_View`): a lineage, the
long-term view, or a run's scope chain ``[its anchor, the other threads'
heads]``, with this thread's own value first on a key, and what of it has
expired (`_ttl`) at the batch's time."""

from __future__ import annotations

from collections.abc import Container, Iterable, Iterator

from ...model import Memory
from ...store import Store
from . import _keys as k
from . import _ttl
from ._heads import MARK, HeadView, Ident, read_view
from ._longterm import LongTerm
from ._views import view_at, view_of


class _View:
    """What one batch reads: a lineage, the long-term view, or a run's scope
    chain ``[its anchor, the other threads' heads]``."""

    def __init__(
        self,
        own: HeadView | None,
        lt: LongTerm | None,
        thread: str | None,
        store: Store,
        ns: str,
    ) -> None:
        self.own = own
        self.lt = lt
        self.thread = thread
        self.store = store
        self.ns = ns
        self.now = _ttl.clock(store)()
        self.used: dict[str, float | None] = {}  # record id -> last refreshing read
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
            return cls(read_view(s, ns, anchor, hides=False), None, None, s, ns)
        lt = view_of(s, ns)
        if anchor is None or checkpoint is None or thread is None:
            return cls(None, lt, None, s, ns)
        own = view_at(s, ns, thread, anchor, checkpoint)
        return cls(own or read_view(s, ns, anchor), lt, thread, s, ns)

    # ---------------------------------------------------------------- expiry
    def live(self, m: Memory) -> bool | None:
        """Has ``m`` not expired? ``None``: it depends on its last refreshing
        read, not looked up yet (`settle`)."""
        ttl = m.meta[MARK].get("ttl")  # type: ignore[index]
        if ttl is None:
            return m.expires_at is None or m.expires_at > self.now
        if m.meta[MARK]["updated_at"] + ttl * 60.0 > self.now:  # type: ignore[index]
            return True  # (within its first ttl: a refresh only moves it later)
        if m.id not in self.used:
            return None
        end = _ttl.deadline(m, self.used[m.id])
        return end is None or end > self.now

    def settle(self, recs: Iterable[Memory]) -> None:
        """Look up, in one read, the last refreshing read of each of ``recs``
        whose expiry depends on it."""
        want = [m.id for m in recs if m.id not in self.used and self.live(m) is None]
        if want:
            found = _ttl.last_used(self.store, self.ns, want)
            for rid in want:
                self.used[rid] = found.get(rid)

    def alive(self, recs: list[Memory]) -> list[Memory]:
        """``recs`` less those expired, in order."""
        out: list[Memory] = []
        late: list[Memory] = []
        for m in recs:
            if m.expires_at is None and "ttl" not in m.meta[MARK]:  # type: ignore[index]
                out.append(m)  # (inline: the usual item, without a ttl)
                continue
            ok = self.live(m)
            if ok is None:
                late.append(m)
            if ok is not False:
                out.append(m)
        if late:
            self.settle(late)
            out = [m for m in out if self.live(m)]
        return out

    def get(self, ident: Ident) -> Memory | None:
        m = self._get(ident)
        if m is None or (m.expires_at is None and "ttl" not in m.meta[MARK]):  # type: ignore[index]
            return m
        return m if self.alive([m]) else None

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
        n = len(prefix)
        own, lt = self.own, self.lt
        seen: set[Ident] = set()
        out: list[tuple[tuple[str, ...], Memory]] = []
        if own is not None:
            for ident in own.items:
                if ident[0][:n] == prefix:
                    seen.add(ident)
                    if (m := self._get(ident)) is not None:
                        out.append((ident[0], m))
        if lt is not None:
            with lt.lock:
                for space, recs in list(lt.spaces(prefix)):
                    if own is None:  # the long-term view as kept
                        out += [(space, m) for m in recs.values()]
                        continue
                    for key in recs:
                        ident = (space, key)
                        if ident not in seen:
                            seen.add(ident)
                            if (g := self._get(ident)) is not None:
                                out.append((space, g))
                if own is not None:
                    for ident in self.touched - seen:
                        if ident[0][:n] == prefix and (g := self._get(ident)) is not None:
                            out.append((ident[0], g))
        # (expiry after the view's lock is let go: it may read the backend)
        keep = self.alive([m for _, m in out])
        if len(keep) == len(out):
            yield from out
        else:
            ids = {id(m) for m in keep}
            yield from ((space, m) for space, m in out if id(m) in ids)

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
