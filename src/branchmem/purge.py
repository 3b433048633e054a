"""Erasure on request: the one place where stored things are really deleted.

- Purging a **memory** deletes the record, and with it every record derived
  from it: retractions that target it and conflict records that name it
  (and, in turn, retractions of those).
- Purging an **event** erases its content and meta, and deletes every record
  that names it as a source (they carry the same personal data), with their
  derived records as above. The event's id stays as a blank node, so the
  lineage of its descendants (and what they may see) is unchanged.
- Purging a **namespace** deletes everything in it but its audit log.

The audit log records each purge with the ids removed, never their content.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, cast

from .branch_types import CONFLICT
from .branches import check_actor, log
from .errors import InvalidInput, UnknownEvent, UnknownMemory
from .validate import check_id, check_namespace

if TYPE_CHECKING:
    from .store import Store


def _ids(values: Sequence[str], what: str) -> list[str]:
    if isinstance(values, str):
        raise InvalidInput(f"{what} must be a list of ids, e.g. [{values!r}]")
    return list(dict.fromkeys(check_id(v, what) for v in values))


class PurgeOps:
    """`Store.purge` (mixed into `Store`)."""

    def purge(
        self,
        *,
        events: Sequence[str] = (),
        memories: Sequence[str] = (),
        namespace: str = "default",
        whole_namespace: bool = False,
        actor: str | None = None,
    ) -> list[str]:
        """Really delete, for erasure requests. Returns the ids removed or erased:
        the events, then the records in the order they were written.

        ``events`` are blanked (content and meta) and every record sourced from
        them is deleted; ``memories`` are deleted; records derived from deleted
        ones (their retractions, conflicts naming them) go too.
        ``whole_namespace=True`` deletes the namespace's events, records,
        branches and snapshots (its audit log stays).

        >>> from branchmem import Store
        >>> store = Store()
        >>> _ = store.add_event("e1", content="我的身份证号是……")
        >>> m = store.add_memory("用户的身份证号……", sources=["e1"])
        >>> store.purge(events=["e1"]) == ["e1", m.id]
        True
        >>> store.get_event("e1").content, store.memories(at="e1")
        ('', [])
        """
        s = cast("Store", self)
        ns = check_namespace(namespace)
        ev_ids = _ids(events, "event id")
        mem_ids = _ids(memories, "memory id")
        actor = check_actor(actor)
        if whole_namespace and (ev_ids or mem_ids):
            raise InvalidInput("pass whole_namespace=True alone, or ids to purge, not both")
        if not whole_namespace and not ev_ids and not mem_ids:
            raise InvalidInput("name something to purge: events=[...], memories=[...] or "
                               "whole_namespace=True")  # fmt: skip
        now = s._clock()
        with s._b.transaction():
            if whole_namespace:
                s._b.drop_namespace(ns)
                log(s, ns, "purge_namespace", [ns], actor, now)
                _forget(s, ns, None)
                return [ns]
            found = s._b.get_events(ns, ev_ids)
            for e in ev_ids:
                if e not in found:
                    raise UnknownEvent(e, ns)
            recs = s._b.get_records(ns, mem_ids)
            for m in mem_ids:
                if m not in recs:
                    raise UnknownMemory(m, ns)
            doomed = dict.fromkeys(mem_ids + s._b.records_with_sources(ns, ev_ids))
            conflicts = s._b.records_of_kind(ns, CONFLICT)
            frontier = list(doomed)
            while frontier:
                new = [r.memory.id for r in s._b.retractions_of(ns, frontier)]
                gone = set(frontier)
                new += [
                    c.memory.id
                    for c in conflicts
                    if gone.intersection((c.memory.meta or {}).get("members", ()))
                ]
                frontier = [i for i in new if i not in doomed]
                doomed.update(dict.fromkeys(frontier))
            # In write order, so that every backend reports the same list.
            rows = s._b.get_records(ns, list(doomed))
            doomed_ids = sorted(doomed, key=lambda i: rows[i].memory.seq)
            for e in ev_ids:
                s._b.erase_event(ns, e)
            if doomed_ids:
                s._b.delete_records(ns, doomed_ids)
            removed = ev_ids + doomed_ids
            log(s, ns, "purge", removed, actor, now)
        _forget(s, ns, doomed_ids)
        return removed


def _forget(s: Store, ns: str, record_ids: list[str] | None) -> None:
    """Drop what the process keeps derived from purged records: the tagged copies
    of scope-chain reads and the search cache (tokens and vectors)."""
    s._via_copies.clear()
    from .retrieval.cache import cache_for

    cache_for(s).forget(ns, record_ids)
