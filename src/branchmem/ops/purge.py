"""Erasure on request: the one place where stored things are really deleted.

- Purging a **memory** deletes the record, and with it every record derived
  from it: retractions that target it and conflict records that name it
  (and, in turn, retractions of those).
- Purging an **event** erases its content and meta, and deletes every record
  that names it as a source (they carry the same personal data), with their
  derived records as above. The event's id stays as a blank node, so the
  lineage of its descendants (and what they may see) is unchanged.
- Purging a memory also blanks every source event that holds a copy of its
  text (the note event `Store.remember` writes, or any event whose content
  is exactly the record's).
- Purging a **namespace** deletes everything in it, its name included, and
  the namespaces derived from it (`branchmem.derived`: the LangGraph
  integration's thread list and thread namespaces), with theirs.

The audit log records each purge with the ids removed, never their content.
A whole-namespace purge detaches the namespace's audit lines from its name:
they stay in the file (ops, times, actors and ids) under an internal number
that no name leads to any more.

The query logs that searches of the store wrote to (``search(..., log=)``)
lose the searches of a purged namespace, and those that returned a purged
record: the store remembers its logs (see `branchmem.retrieval.querylog`),
and ``query_logs=`` names more.

On SQLite a purge runs with ``secure_delete`` on (freed bytes are zeroed) and
checkpoints the write-ahead log afterwards, truncating it, so the erased text
is in neither file. A read on another connection can hold the truncation
back: then `Store.erasure_pending` is true, and the next write,
`Store.checkpoint` or ``close`` (in any process) finishes it.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from ..backends.base import Backend, LogFile, QueryLogRegistry
from ..branch_types import CONFLICT
from ..derived import registry_namespace, thread_namespace_of_record
from ..engine import Engine
from ..errors import InvalidInput, UnknownEvent, UnknownMemory, UnknownNamespace
from ..model import Memory
from ..searchlog import QueryLog
from ..validate import check_actor, check_ids, check_namespace, show
from .audit import log
from .cascade import consolidations_of


def purge(
    engine: Engine,
    *,
    events: Sequence[str],
    memories: Sequence[str],
    namespace: str,
    whole_namespace: bool,
    actor: str | None,
    query_logs: Sequence[QueryLog | str | os.PathLike[str]],
) -> list[str]:
    """`Store.purge`."""
    ns = check_namespace(namespace)
    ev_ids = check_ids(events, "event id")
    mem_ids = check_ids(memories, "memory id")
    actor = check_actor(actor)
    extra = _query_logs(query_logs)
    if whole_namespace and (ev_ids or mem_ids):
        raise InvalidInput("pass whole_namespace=True alone, or ids to purge, not both")
    if not whole_namespace and not ev_ids and not mem_ids:
        raise InvalidInput("name something to purge: events=[...], memories=[...] or "
                           "whole_namespace=True")  # fmt: skip
    now = engine.clock()
    b = engine.backend
    if whole_namespace:
        # Looked for first in a read: in a write transaction on PostgreSQL, a
        # namespace touched is locked and its write counter (its name) raised.
        with b.reading():
            derived = bool(b.audit(registry_namespace(ns), None))
        with b.transaction():
            if not b.audit(ns, None) and not derived:  # every write logs a line
                raise UnknownNamespace(ns)
            # Read again under the list's lock: no thread is added to it now.
            spaces = [ns, *_derived(b, ns)] if derived else [ns]
            for n in spaces:
                # Logged first, under the namespace's internal number, which the
                # drop then detaches from the name: the line names no one.
                log(engine, n, "purge_namespace", [], actor, now)
                b.drop_namespace(n)
        for n in spaces:
            engine.forget(n, None)
            _purge_logs(engine, extra, n, None)
        return spaces
    with b.transaction():
        found = b.get_events(ns, ev_ids)
        for e in ev_ids:
            if e not in found:
                raise UnknownEvent(e, ns)
        recs = b.get_records(ns, mem_ids)
        for m in mem_ids:
            if m not in recs:
                raise UnknownMemory(m, ns)
        doomed = dict.fromkeys(mem_ids + b.records_with_sources(ns, ev_ids))
        conflicts = b.records_of_kind(ns, CONFLICT)
        frontier = list(doomed)
        while frontier:
            new = [r.memory.id for r in b.retractions_of(ns, frontier)]
            gone = set(frontier)
            new += [
                c.memory.id
                for c in conflicts
                if gone.intersection((c.memory.meta or {}).get("members", ()))
            ]
            new += consolidations_of(engine, ns, frontier)  # they hold its text
            frontier = [i for i in new if i not in doomed]
            doomed.update(dict.fromkeys(frontier))
        # In write order, so that every backend reports the same list.
        rows = b.get_records(ns, list(doomed))
        doomed_ids = sorted(doomed, key=lambda i: rows[i].memory.seq)
        ev_ids += _copies(engine, ns, [rows[i].memory for i in doomed_ids], ev_ids)
        for e in ev_ids:
            b.erase_event(ns, e)
        if doomed_ids:
            b.delete_records(ns, doomed_ids)
        removed = ev_ids + doomed_ids
        log(engine, ns, "purge", removed, actor, now)
    engine.forget(ns, doomed_ids)
    _purge_logs(engine, extra, ns, doomed_ids)
    return removed


def _derived(b: Backend, ns: str) -> list[str]:
    """The namespaces derived from ``ns`` (`branchmem.derived`): its LangGraph
    thread list, and the thread namespaces that list names."""
    reg = registry_namespace(ns)
    out, offset = [reg], 0
    while page := b.list_records(reg, offset, _PAGE):
        out += [t for r in page if (t := thread_namespace_of_record(ns, r.memory.id))]
        offset += len(page)
    return out


_PAGE = 1000


def checkpoint(engine: Engine) -> bool:
    """`Store.checkpoint`."""
    b = engine.backend
    return b.checkpoint() if isinstance(b, LogFile) else True


def erasure_pending(engine: Engine) -> bool:
    """`Store.erasure_pending`."""
    b = engine.backend
    return b.erasure_pending() if isinstance(b, LogFile) else False


def logs_of(engine: Engine) -> list[QueryLog]:
    """The query logs the store's searches wrote to: those kept in the store
    (by any process) and those this engine's searches wrote to."""
    paths = set(engine.query_logs)
    b = engine.backend
    if isinstance(b, QueryLogRegistry):
        with b.reading():
            paths.update(b.query_logs())
    return [QueryLog(p) for p in sorted(paths)]


def _query_logs(logs: object) -> list[QueryLog]:
    if isinstance(logs, (str, os.PathLike, QueryLog)) or not isinstance(logs, (list, tuple)):
        raise InvalidInput(
            f"query_logs must be a list of QueryLog objects or paths, got {show(logs)}"
        )
    out = []
    for q in logs:
        if isinstance(q, QueryLog):
            out.append(q)
        elif isinstance(q, (str, os.PathLike)):
            out.append(QueryLog(q))
        else:
            raise InvalidInput(f"query_logs holds {show(q)}; pass QueryLog objects or paths")
    return out


def _purge_logs(engine: Engine, extra: list[QueryLog], ns: str, ids: list[str] | None) -> None:
    """Purge the store's own query logs and ``extra``, each file once."""
    seen: set[Path] = set()
    for ql in [*logs_of(engine), *extra]:
        where = ql.path.resolve()
        if where in seen:
            continue
        seen.add(where)
        if ql in extra or where.is_file():  # a remembered log may since be gone
            ql.purge(namespace=ns, ids=ids)


def _copies(engine: Engine, ns: str, mems: list[Memory], erased: list[str]) -> list[str]:
    """Source events (not already erased) whose content is a copy of a record's."""
    texts = {m.content for m in mems if m.target is None and m.content}
    if not texts:
        return []
    sources = dict.fromkeys(src for m in mems for src in m.sources if src not in erased)
    rows = engine.backend.get_events(ns, sources)
    return [e for e in sources if (r := rows.get(e)) is not None and r.event.content in texts]
