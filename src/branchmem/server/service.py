"""The service layer: every served operation, once.

Plain functions taking a `Ctx` (a `Store`, the calling `Principal`, the
server's limits) and a namespace. Each checks the principal's grant, then
calls the store's public API with ``actor=`` set to the principal, so every
write is audited under its caller. The HTTP routes, the MCP tools and the
CLI only parse, call these, and format; no rule lives in them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ..branch_types import AuditEntry, HeadMove, MergeResult, Snapshot
from ..context import Context
from ..errors import EmbeddingPending, InvalidInput, UnknownBranch
from ..graph.model import Edge
from ..model import Branch, Event, Explanation, Memory
from ..retrieval.background import BackgroundEmbedder
from ..retrieval.embed import Embedder
from ..retrieval.hit import Hit
from ..store import Store
from ..validate import check_int, check_namespace
from .auth import Principal
from .errors import LimitExceeded
from .limits import Limits as Limits

T = TypeVar("T")


@dataclass(frozen=True)
class Ctx:
    """Who calls, on which store, under which limits (and with which embedder)."""

    store: Store
    who: Principal
    limits: Limits = field(default_factory=Limits)
    embedder: Embedder | str | None = None

    def allow(self, namespace: str, need: str, branch: str | None = None) -> str:
        ns = check_namespace(namespace)
        self.who.authorize(ns, need, branch)
        return ns


@dataclass(frozen=True)
class Page:
    """A slice of a list and the offset of the next one (``None`` at the end)."""

    items: list[Any]
    next_offset: int | None


def page(items: list[T], offset: int, limit: int) -> Page:
    end = check_int(offset, "offset") + limit
    return Page(items[offset:end], end if end < len(items) else None)


# ------------------------------------------------------------------ events
def add_events(
    ctx: Ctx, namespace: str, items: Sequence[Mapping[str, Any]], *, extract: bool = False
) -> list[Event]:
    """Add events (one with ``branch`` goes under that branch's head); with
    ``extract``, queue an extraction at each new tip."""
    ctx.allow(namespace, "read")  # an unknown namespace answers before any other check
    ctx.limits.batch(items, "events")
    ctx.limits.rows(items, "parents", "events")
    branches = {i.get("branch") for i in items}
    if len(items) == 1 and None not in branches:
        item = dict(items[0])
        branch = item.pop("branch")
        ns = ctx.allow(namespace, "write", branch)
        who = ctx.who.name
        return [
            ctx.store.add_event(**item, branch=branch, namespace=ns, actor=who, extract=extract)
        ]
    if branches != {None}:
        raise InvalidInput("branch= applies to one event at a time; send branch writes singly")
    ns = ctx.allow(namespace, "write")
    if any(i.get("expected_head") is not None for i in items):
        raise InvalidInput("expected_head applies to branch writes; pass branch too")
    clean = [{k: v for k, v in i.items() if k not in ("branch", "expected_head")} for i in items]
    return ctx.store.add_events(
        [{**i, "namespace": ns} for i in clean], actor=ctx.who.name, extract=extract
    )


def get_event(ctx: Ctx, namespace: str, event_id: str) -> Event:
    return ctx.store.get_event(event_id, namespace=ctx.allow(namespace, "read"))


def path(
    ctx: Ctx, namespace: str, at: str | None, offset: int = 0, limit: int | None = None
) -> Page:
    ns = ctx.allow(namespace, "read")
    return page(ctx.store.path(at, namespace=ns), offset, ctx.limits.page(limit))


def events(ctx: Ctx, namespace: str, offset: int = 0, limit: int | None = None) -> Page:
    """Every event of the namespace in arrival order (the inspector's tree)."""
    ns = ctx.allow(namespace, "read")
    n = ctx.limits.page(limit)
    found = ctx.store.events(namespace=ns, offset=offset, limit=n + 1)
    return Page(found[:n], offset + n if len(found) > n else None)


# ----------------------------------------------------------------- records


def inspect(
    ctx: Ctx, namespace: str, at: str | None, offset: int = 0, limit: int | None = None
) -> Page:
    """Every record of the namespace with why it is visible or hidden at ``at``:
    ``(memory, explanation)`` pairs in write order (the inspector's memory panel)."""
    ns = ctx.allow(namespace, "read")
    n = ctx.limits.page(limit)
    found = ctx.store.records(namespace=ns, offset=offset, limit=n + 1)
    items = [(m, ctx.store.explain(m.id, at=at, namespace=ns)) for m in found[:n]]
    return Page(items, offset + n if len(found) > n else None)


def add_memories(ctx: Ctx, namespace: str, items: Sequence[Mapping[str, Any]]) -> list[Memory]:
    """Add records; one with ``branch`` is a `Store.remember` on that branch."""
    ctx.allow(namespace, "read")  # an unknown namespace answers before any other check
    ctx.limits.batch(items, "memories")
    ctx.limits.rows(items, "sources", "memories")
    branches = {i.get("branch") for i in items}
    if len(items) == 1 and None not in branches:
        item = {k: v for k, v in items[0].items() if v is not None}
        if "sources" in item:
            raise InvalidInput(
                "a memory written on a branch is sourced from the event it appends; "
                "pass either sources or branch, not both"
            )
        ns = ctx.allow(namespace, "write", item["branch"])
        return [ctx.store.remember(**item, namespace=ns, actor=ctx.who.name)]
    if branches != {None}:
        raise InvalidInput("branch= applies to one memory at a time; send branch writes singly")
    ns = ctx.allow(namespace, "write")
    out = []
    for i in items:
        extra = [k for k in ("event_id", "role", "expected_head") if i.get(k) is not None]
        if extra:
            raise InvalidInput(f"{', '.join(extra)} apply to branch writes; pass branch too")
        out.append({k: v for k, v in i.items() if k not in _BRANCH_ONLY} | {"namespace": ns})
    return ctx.store.add_memories(out, actor=ctx.who.name)


_BRANCH_ONLY = ("branch", "event_id", "role", "expected_head")


def memories(
    ctx: Ctx,
    namespace: str,
    at: str | list[str] | None,
    *,
    kind: str | None = None,
    now: float | None = None,
    as_of: float | None = None,
    include_archived: bool = False,
    offset: int = 0,
    limit: int | None = None,
    wait: float | None = None,
) -> Page:
    """Records visible at ``at`` (no anchor: none), after up to ``wait``
    seconds for an extraction queued there."""
    ns = ctx.allow(namespace, "read")
    found = ctx.store.memories(
        at=at, kind=kind, namespace=ns, now=now, as_of=as_of,
        include_archived=include_archived, wait=wait,
    )  # fmt: skip
    return page(found, offset, ctx.limits.page(limit))


def get_memory(ctx: Ctx, namespace: str, memory_id: str) -> Memory:
    return ctx.store.get_memory(memory_id, namespace=ctx.allow(namespace, "read"))


def explain(
    ctx: Ctx, namespace: str, memory_id: str, at: str | None, now: float | None = None
) -> Explanation:
    ns = ctx.allow(namespace, "read")
    return ctx.store.explain(memory_id, at=at, namespace=ns, now=now)


def visible(ctx: Ctx, namespace: str, memory_id: str, at: str | None) -> bool:
    return ctx.store.visible(memory_id, at=at, namespace=ctx.allow(namespace, "read"))


def retract(
    ctx: Ctx, namespace: str, memory_id: str, sources: list[str], id: str | None = None
) -> Memory:
    ns = ctx.allow(namespace, "write")
    return ctx.store.retract(memory_id, sources=sources, namespace=ns, id=id, actor=ctx.who.name)


def supersede(
    ctx: Ctx, namespace: str, memory_id: str, content: str, sources: list[str], **fields: Any
) -> Memory:
    ns = ctx.allow(namespace, "write")
    fields = {k: v for k, v in fields.items() if v is not None}
    return ctx.store.supersede(
        memory_id, content, sources=sources, namespace=ns, actor=ctx.who.name, **fields
    )


def search(
    ctx: Ctx, namespace: str, query: str, at: str | list[str] | None, k: int = 10, **options: Any
) -> list[Hit]:
    """Gated search: the ``k`` best records visible at ``at``."""
    ns = ctx.allow(namespace, "read")
    if k > ctx.limits.max_k:
        raise LimitExceeded(f"k is {k}; this server returns at most {ctx.limits.max_k} hits")
    ctx.limits.query(query)
    options = {key: v for key, v in options.items() if v is not None}
    options.setdefault("embedder", ctx.embedder)
    options["max_embed"] = ctx.limits.max_embed
    return ctx.store.search(query, at=at, k=k, namespace=ns, **options)


def vector_backlog(ctx: Ctx, namespace: str, behind: BackgroundEmbedder | None) -> None:
    """Refuse a vector-only search before it queues for a worker: while more
    records of the namespace wait for the background embedder ``behind`` than
    a search may embed itself, raise `EmbeddingPending` (whether or not they
    are visible at the search's anchor: a hybrid search ranks them by keyword).
    Reads no store, so it answers at once however busy the workers are."""
    ns = ctx.allow(namespace, "read")
    if behind is None:
        return
    waiting = behind.backlog(ns)
    if waiting > ctx.limits.max_embed:
        raise EmbeddingPending(ns, waiting, behind.retry_after(ns), "queued for embedding")


def add_edge(
    ctx: Ctx,
    namespace: str,
    subject: str,
    predicate: str,
    obj: str,
    sources: list[str],
    **options: Any,
) -> Edge:
    """`Store.add_edge`, written as the principal."""
    ns = ctx.allow(namespace, "write")
    options = {k: v for k, v in options.items() if v is not None and v != []}
    return ctx.store.add_edge(
        subject, predicate, obj, sources=sources, namespace=ns, actor=ctx.who.name, **options
    )


def graph(
    ctx: Ctx,
    namespace: str,
    at: str | list[str] | None,
    entity: str | None,
    hops: int = 1,
    now: float | None = None,
) -> dict[str, Any]:
    """The graph visible at ``at``: around ``entity`` up to ``hops`` edges, or whole."""
    ns = ctx.allow(namespace, "read")
    view = ctx.store.graph(at=at, namespace=ns, now=now)
    if entity is None:
        d = view.to_dict()
        d["edges"] = d["edges"][: ctx.limits.max_page]
        return d | {"paths": []}
    view.entity(entity)  # UnknownEntity (404) when no visible edge or record names it
    reach = view.reach([entity], max_hops=hops)
    edges = {e.id: e for p in reach.values() for e in p.edges}
    for name in reach:
        if len(edges) >= ctx.limits.max_page:
            break
        if reach[name].hops < hops:
            edges.update((e.id, e) for e in view.neighbors(name))
    return {
        "at": view.at,
        "namespace": ns,
        "entities": [view.entity(n).to_dict() for n in sorted(reach)],
        "edges": [e.to_dict() for e in sorted(edges.values(), key=lambda e: e.seq)],
        "paths": [p.to_dict() for _, p in sorted(reach.items()) if p.hops],
    }


def touch(ctx: Ctx, namespace: str, ids: list[str], now: float | None = None) -> None:
    """Record one use of each memory (`Store.touch`)."""
    ns = ctx.allow(namespace, "write")
    ctx.limits.batch(ids, "ids")
    ctx.store.touch(ids, namespace=ns, now=now, actor=ctx.who.name)


def score(ctx: Ctx, namespace: str, memory_id: str, now: float | None = None) -> float:
    return ctx.store.score(memory_id, now=now, namespace=ctx.allow(namespace, "read"))


def archive_expired(ctx: Ctx, namespace: str, now: float | None = None) -> list[str]:
    ns = ctx.allow(namespace, "write")
    return ctx.store.archive_expired(now, namespace=ns, actor=ctx.who.name)


def restore(ctx: Ctx, namespace: str, memory_id: str) -> Memory:
    ns = ctx.allow(namespace, "write")
    return ctx.store.restore(memory_id, namespace=ns, actor=ctx.who.name)


def extract(ctx: Ctx, namespace: str, at: str, window: int = 8) -> list[Memory]:
    """Run the offline rule extractor at ``at`` (`Store.extract`); returns the records
    written. The extractor is the server's: a caller cannot point it at an endpoint."""
    ns = ctx.allow(namespace, "write")
    return ctx.store.extract(at, window=window, namespace=ns, actor=ctx.who.name)


def context(
    ctx: Ctx,
    namespace: str,
    at: str | list[str] | None,
    query: str | None = None,
    window: int | None = 8,
    k: int | None = 10,
) -> Context:
    """What a model sees at ``at`` (`Store.context`)."""
    ns = ctx.allow(namespace, "read")
    if k is not None and k > ctx.limits.max_k:
        raise LimitExceeded(f"k is {k}; this server returns at most {ctx.limits.max_k} memories")
    ctx.limits.query(query)
    options: dict[str, Any] = {"max_embed": ctx.limits.max_embed}
    if ctx.embedder is not None:
        options["embedder"] = ctx.embedder
    return ctx.store.context(at, query=query, window=window, k=k, namespace=ns, **options)


# ---------------------------------------------------------------- branches
def create_branch(ctx: Ctx, namespace: str, name: str, at: str) -> Branch:
    ns = ctx.allow(namespace, "write", name)
    return ctx.store.create_branch(name, at=at, namespace=ns, actor=ctx.who.name)


def branches(ctx: Ctx, namespace: str, offset: int = 0, limit: int | None = None) -> Page:
    ns = ctx.allow(namespace, "read")
    return page(ctx.store.branches(namespace=ns), offset, ctx.limits.page(limit))


def get_branch(ctx: Ctx, namespace: str, name: str) -> Branch:
    ns = ctx.allow(namespace, "read")
    for b in ctx.store.branches(namespace=ns, count=False):
        if b.name == name:
            return b
    raise UnknownBranch(name, ns)


def delete_branch(ctx: Ctx, namespace: str, name: str) -> None:
    ns = ctx.allow(namespace, "write", name)
    ctx.store.delete_branch(name, namespace=ns, actor=ctx.who.name)


def move_branch(
    ctx: Ctx, namespace: str, name: str, to: str, expected_head: str | None = None
) -> Branch:
    """Point ``name`` at event ``to``; with ``expected_head``, only if it is still there
    (one compare-and-set in the store, atomic across every process serving it)."""
    ns = ctx.allow(namespace, "write", name)
    return ctx.store.set_branch(
        name, to, namespace=ns, actor=ctx.who.name, expected_head=expected_head
    )


def merge(ctx: Ctx, namespace: str, source: str, into: str, **options: Any) -> MergeResult:
    ns = ctx.allow(namespace, "write", into)
    options = {k: v for k, v in options.items() if v is not None}
    return ctx.store.merge(source, into, namespace=ns, actor=ctx.who.name, **options)


def conflicts(
    ctx: Ctx, namespace: str, at: str | None, offset: int = 0, limit: int | None = None
) -> Page:
    ns = ctx.allow(namespace, "read")
    return page(ctx.store.conflicts(at=at, namespace=ns), offset, ctx.limits.page(limit))


def conflicts_with_members(
    ctx: Ctx, namespace: str, at: str | None, offset: int = 0, limit: int | None = None
) -> Page:
    """`conflicts`, each as ``(conflict, its members' records)``: what a model must
    choose between."""
    found = conflicts(ctx, namespace, at, offset, limit)
    get = ctx.store.get_memory
    items = [(c, [get(m, namespace=c.namespace) for m in c.members]) for c in found.items]
    return Page(items, found.next_offset)


def resolve(
    ctx: Ctx,
    namespace: str,
    conflict_id: str,
    keep: str,
    branch: str,
    expected_head: str | None = None,
) -> Event:
    ns = ctx.allow(namespace, "write", branch)
    return ctx.store.resolve(
        conflict_id,
        keep,
        branch=branch,
        namespace=ns,
        actor=ctx.who.name,
        expected_head=expected_head,
    )


def snapshot(ctx: Ctx, namespace: str, branch: str, name: str) -> Snapshot:
    ns = ctx.allow(namespace, "write", branch)
    return ctx.store.snapshot(branch, name, namespace=ns, actor=ctx.who.name)


def snapshots(ctx: Ctx, namespace: str, offset: int = 0, limit: int | None = None) -> Page:
    ns = ctx.allow(namespace, "read")
    return page(ctx.store.snapshots(namespace=ns), offset, ctx.limits.page(limit))


def rollback(
    ctx: Ctx, namespace: str, branch: str, to: str, expected_head: str | None = None
) -> Branch:
    ns = ctx.allow(namespace, "write", branch)
    return ctx.store.rollback(
        branch, to, namespace=ns, actor=ctx.who.name, expected_head=expected_head
    )


def history(
    ctx: Ctx, namespace: str, branch: str, offset: int = 0, limit: int | None = None
) -> Page:
    ns = ctx.allow(namespace, "read")
    moves: list[HeadMove] = ctx.store.history(branch, namespace=ns)
    return page(moves, offset, ctx.limits.page(limit))


def prune_branches(
    ctx: Ctx, namespace: str, prefix: str, older_than: float, now: float | None = None
) -> list[str]:
    """Delete stale branch pointers under ``prefix/`` (`Store.prune_branches`).

    The key needs write on every branch it would delete, each checked against
    its grant before any is deleted: one it may not write refuses the whole
    call (403, nothing deleted), rather than pruning some and leaving the rest.
    """
    ns = check_namespace(namespace)
    ctx.who.check_role(ns, "write")

    def check(name: str) -> None:
        ctx.who.authorize(ns, "write", name)

    return ctx.store.prune_branches(
        prefix, older_than, namespace=ns, now=now, actor=ctx.who.name, check=check
    )


# ------------------------------------------------------------------- admin
def purge(
    ctx: Ctx,
    namespace: str,
    events: list[str],
    memories: list[str],
    whole_namespace: bool = False,
) -> list[str]:
    ns = ctx.allow(namespace, "admin")
    ctx.limits.batch(events + memories, "ids")
    return ctx.store.purge(
        events=events,
        memories=memories,
        namespace=ns,
        whole_namespace=whole_namespace,
        actor=ctx.who.name,
    )


def audit(
    ctx: Ctx,
    namespace: str,
    since: float | None = None,
    offset: int = 0,
    limit: int | None = None,
) -> Page:
    ns = ctx.allow(namespace, "admin")
    entries: list[AuditEntry] = ctx.store.audit(ns, since=since)
    return page(entries, offset, ctx.limits.page(limit))
