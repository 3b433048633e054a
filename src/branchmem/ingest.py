"""Adding events: checking a batch, planning its place in the lineage, writing it.

An event may arrive before its parent: it waits, hidden, until the parent
arrives, and records waiting on it are indexed when it connects (see
`branchmem.lineage`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from .backends.base import DuplicateIds
from .branches import check_actor, log
from .bulk import gc_paused
from .errors import CycleError, InvalidInput
from .ingest_stream import add_streamed
from .lineage import Ingest, index_position
from .model import Event
from .store_parts import StoreParts
from .validate import check_batch, check_namespace
from .validate_batch import events_from

if TYPE_CHECKING:
    from .store import Store


class EventOps(StoreParts):
    """`Store` methods that add events (mixed into `Store`)."""

    def add_event(
        self,
        id: str,
        *,
        parent: str | Sequence[str] | None = None,
        role: str = "user",
        content: str = "",
        namespace: str = "default",
        meta: dict[str, Any] | None = None,
        branch: str | None = None,
        actor: str | None = None,
        expected_head: str | None = None,
    ) -> Event:
        """Add one event (a message, tool call, note) under ``parent``.

        ``parent`` may be ``None`` (a root), an id, or a list of ids (a merge),
        and may not have arrived yet: the event then waits, hidden, until it
        does. Re-adding an identical event is a no-op.

        With ``branch=`` (and no ``parent``) the event goes under the branch's
        head and the head advances to it (see `remember` for ``expected_head``).

        >>> store = Store()
        >>> store.add_event("e1", content="你好").id
        'e1'
        """
        if branch is not None:
            if parent is not None:
                raise InvalidInput(
                    "pass either parent= or branch=, not both: a branch write goes "
                    "under the branch's head"
                )
            fields = {"id": id, "role": role, "content": content, "meta": meta}
            ns = check_namespace(namespace)
            return self._write_event(ns, branch, fields, actor, expected_head)
        if expected_head is not None:
            raise InvalidInput("expected_head= applies to branch writes; pass branch= too")
        return self.add_events(
            [
                {
                    "id": id,
                    "parent": parent,
                    "role": role,
                    "content": content,
                    "namespace": namespace,
                    "meta": meta,
                }
            ],
            actor=actor,
        )[0]

    def add_events(
        self, events: Iterable[Event | Mapping[str, Any]], *, actor: str | None = None
    ) -> list[Event]:
        """Add many events in one transaction, in the given order.

        Each item is an `Event` or a dict with ``id`` and optionally
        ``parent``, ``role``, ``content``, ``namespace``, ``meta``. Parents may
        come later in the list (or in a later call). If any item is invalid,
        nothing is added. The audit log gets one line per namespace.

        >>> store = Store()
        >>> [e.id for e in store.add_events([{"id": "b", "parent": "a"}, {"id": "a"}])]
        ['b', 'a']
        """
        now = self._clock()
        actor = check_actor(actor)
        items = events if isinstance(events, list) else check_batch(events, "add_events", "event")
        with gc_paused(len(items)):
            return self._add_events(items, now, actor)

    def _add_events(
        self, events: list[Event | Mapping[str, Any]], now: float, actor: str | None
    ) -> list[Event]:
        streamed = add_streamed(cast("Store", self), events, now, actor)
        if streamed is not None:
            return streamed
        checked = events_from(events, now)
        namespaces = {e.namespace for e in checked}
        with self._b.transaction():
            if len(namespaces) == 1:
                ns = namespaces.pop()
                done, new = self._ingest_counted(ns, checked)
                if new:  # a re-add that changes nothing writes no audit line
                    log(cast("Store", self), ns, "add_events", [e.id for e in done], actor, now)
                return done
            out: list[Event] = list(checked)
            groups: dict[str, list[int]] = {}  # one pass, not one scan per namespace
            for i, e in enumerate(checked):
                groups.setdefault(e.namespace, []).append(i)
            parts = {ns: groups[ns] for ns in sorted(groups)}
            # Every namespace's part is planned (and so checked) before any is
            # written: a backend without rollback must not keep the first parts.
            for ns, idxs in parts.items():
                self._plan(ns, [checked[i] for i in idxs])
            for ns, idxs in parts.items():
                done, new = self._ingest_counted(ns, [checked[i] for i in idxs])
                for i, ev in zip(idxs, done, strict=True):
                    out[i] = ev
                if new:
                    log(
                        cast("Store", self),
                        ns,
                        "add_events",
                        [checked[i].id for i in idxs],
                        actor,
                        now,
                    )
            return out

    def _plan(self, ns: str, events: list[Event]) -> None:
        """Plan one namespace's events without writing: raises what `_ingest` would."""
        events = self._redacted(events)  # as stored, so that a re-add compares equal
        ingest = Ingest(self._b, ns, self._seg_parents(ns))
        ingest.prefetch(
            dict.fromkeys([e.id for e in events] + [p for e in events for p in e.parents])
        )
        ingest.prefetch_tips(events)
        ingest.add_all(events, {n for n, _ in self._b.list_branches(ns)})

    def _ingest(self, ns: str, events: list[Event]) -> list[Event]:
        """Plan and write one namespace's events (see `_ingest_counted`)."""
        return self._ingest_counted(ns, events)[0]

    def _ingest_counted(
        self, ns: str, events: list[Event], *, optimistic: bool = True
    ) -> tuple[list[Event], int]:
        """Plan and write one namespace's events; also says how many were new.

        Optimistically, the batch's ids are taken as new without a lookup (the
        common case of an import); if one was stored already, the backend says
        so before writing and the batch is planned again with every id looked up.
        """
        events = self._redacted(events)
        ingest = Ingest(self._b, ns, self._seg_parents(ns))
        ids = [e.id for e in events]
        if optimistic:
            ingest.assume_new(ids)
            ingest.prefetch(p for e in events for p in e.parents)
        else:
            ingest.prefetch(dict.fromkeys(ids + [p for e in events for p in e.parents]))
        ingest.prefetch_tips(events)
        names = {n for n, _ in self._b.list_branches(ns)}
        try:
            out = ingest.add_all(events, names)
            plan = ingest.apply()
        except (DuplicateIds, CycleError):
            # A stored id was taken for new: plan again knowing every id, so that a
            # re-add is a no-op and an error names the real cause.
            if not optimistic:
                raise
            return self._ingest_counted(ns, events, optimistic=False)
        if plan.newly_connected:
            self._index_waiting_records(ns, ingest, plan.newly_connected)
        return out, len(plan.new_rows)

    def _index_waiting_records(self, ns: str, ingest: Ingest, connected: list[str]) -> None:
        waiting = self._b.records_waiting_on(ns, connected)
        if not waiting:
            return
        rids = list(dict.fromkeys(r for rs in waiting.values() for r in rs))
        rows = self._b.get_records(ns, rids)
        updates = []
        for rid in rids:
            positions = [ingest.pos_of(s) for s in rows[rid].memory.sources]
            if all(p is not None for p in positions):
                pos, extra = index_position(
                    [p for p in positions if p is not None], ingest.seg_parents_overlay
                )
                updates.append((rid, pos, extra))
        if updates:
            self._b.set_record_positions(ns, updates)
        self._b.drop_record_waits(ns, list(waiting))
