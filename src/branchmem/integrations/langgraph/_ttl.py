"""An item's TTL (LangGraph's ``ttl``, in minutes): when it expires, and how a
read that refreshes it is recorded.

Records never change, so an item's expiry is not written on its record: a put
with a ttl keeps the ttl in the item's data (``"ttl"``), and the item expires
``ttl`` minutes after the later of its put (``updated_at``) and its last
refreshing read. A refreshing read records a use of the items it returns that
have a ttl (`Store.touch`: the small mutable lifecycle state kept beside a
record), so every `Store` on the same file or database sees the refresh. An
item that has expired is never returned, so no read records a use of it: an
expired item stays expired.

The lifecycle state is read only for an item with a ttl whose put-time expiry
has passed (the last use can only move its expiry later), so a read of items
without a ttl, or of ttl items still within their first ttl, reads nothing
more. Items put by earlier versions, whose record holds the expiry
(``expires_at``), expire then and are not refreshed.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any

from ...errors import InvalidInput, ReadOnlyStore, UnknownMemory
from ...model import Memory
from ...store import Store
from ._heads import MARK
from ._tasks import one_transaction


def clock(store: Store) -> Callable[[], float]:
    """The clock ``store`` writes its times with (``Store(clock=...)``): item
    times and expiries follow it too."""
    return store._engine.clock


def check_ttl(ttl: Any, what: str) -> float | None:
    """A put's ``ttl`` as minutes (``None``: the item does not expire)."""
    if ttl is None:
        return None
    if isinstance(ttl, bool) or not isinstance(ttl, (int, float)) or not math.isfinite(ttl):
        raise InvalidInput(
            f"ttl of {what} must be a number of minutes or None (no expiry), got {ttl!r}"
        )
    if ttl < 0:
        raise InvalidInput(f"ttl of {what} must not be negative, got {ttl!r}")
    return float(ttl)


def deadline(m: Memory, used: float | None = None) -> float | None:
    """When the item ``m`` expires (``None``: never), given its last refreshing
    read ``used``."""
    d = (m.meta or {})[MARK]
    ttl = d.get("ttl")
    if ttl is None:
        return m.expires_at  # (an earlier version's item: its record's expiry)
    start = d["updated_at"]
    if used is not None and used > start:
        start = used
    return float(start + ttl * 60.0)


def last_used(store: Store, ns: str, ids: Iterable[str]) -> dict[str, float]:
    """The last recorded use of each record of ``ids`` that has one."""
    ids = list(ids)
    if not ids:
        return {}
    backend = store._engine.backend  # (`Store` offers writing a use, `touch`, not reading it)
    with backend.reading():
        life = backend.get_life(ns, ids)
    return {i: r.last_used for i, r in life.items() if r.last_used is not None}


def refresh(store: Store, ns: str, ids: Iterable[str], now: float) -> None:
    """Record a use of each record of ``ids`` at ``now`` (a refreshing read).

    Not synced to disk on its own (a power cut may lose a refresh, which only
    lets the item expire at its earlier time); a read-only store records none;
    a record purged meanwhile is left out."""
    todo = list(dict.fromkeys(ids))
    while todo:
        try:
            with one_transaction(store, synced=False):
                store.touch(todo, namespace=ns, now=now)
            return
        except ReadOnlyStore:
            return
        except UnknownMemory as exc:  # purged since it was read
            todo = [i for i in todo if i != exc.memory_id]
