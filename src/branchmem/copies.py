"""`ViaCopies`: tagged copies of shared stored records, kept for the next chain read.

A scope-chain read (`branchmem.ops.scope`) says on each record which anchor
made it visible (``via``). A backend that shares its stored objects (memory)
needs a copy of each record to carry it; this keeps the copies, one of the
engine's caches (`branchmem.engine`).
"""

from __future__ import annotations

from operator import is_

from .model import Memory, memory_with


def with_via(m: Memory, via: str) -> Memory:
    """A copy of ``m`` with ``via`` set (stored rows are shared, so never mutated)."""
    return memory_with(m, via=via)


class ViaCopies:
    """Tagged copies of shared stored records, kept for the next chain read.

    Copying costs about twice a record's gate check, and the same scopes are
    read again and again (a user's and an org's branch change far less often
    than the conversation), so each anchor's last answer is kept: the stored
    objects it was made from and their copies. A copy is reused only for that
    very stored object, so a purged or replaced record is never served.
    Everything is dropped when more than ``limit`` copies are held, and when
    the engine says something was erased (`clear`).
    """

    def __init__(self, limit: int = 200_000) -> None:
        self.limit = limit
        self._size = 0
        # (namespace, anchor) -> (the stored objects of its last answer, their copies)
        self._last: dict[tuple[str, str], tuple[list[Memory], list[Memory]]] = {}

    def clear(self) -> None:
        """Forget every copy (a purge must not leave erased content in memory)."""
        self._last.clear()
        self._size = 0

    def forget(self, ns: str, ids: list[str] | None) -> None:
        """A purge through the engine: every copy goes (they may hold its text)."""
        self.clear()

    def tag(self, items: list[Memory], via: str, ns: str) -> list[Memory]:
        """Copies of ``items`` with ``via`` set (read in namespace ``ns``)."""
        last = self._last.get((ns, via))
        if last is None:
            out = [with_via(m, via) for m in items]
        else:
            stored, copies = last
            done = len(stored)
            if len(items) >= done and all(map(is_, stored, items)):
                # The last answer, maybe with newer records after it (a read sorts
                # by write order): no Python loop over what it already had.
                if len(items) == done:
                    return copies[:]
                out = copies + [with_via(m, via) for m in items[done:]]
            else:
                # ``stored`` keeps its objects alive, so an equal id is the same object.
                kept = dict(zip(map(id, stored), copies, strict=True))
                out = [c if (c := kept.get(id(m))) is not None else with_via(m, via) for m in items]
            self._size -= done
        if self._size + len(out) > self.limit:
            self.clear()
        self._last[ns, via] = (items[:], out[:])
        self._size += len(out)
        return out
