"""The service layer of the tree reads (children, siblings, versions) and the
diff of two anchors: the key's grants checked, then one store call."""

from __future__ import annotations

from ..tree_types import Diff, EventPage, Versions
from .service import Ctx


def _limit(ctx: Ctx, limit: int | None) -> int:
    # A page of 100 unless asked (a chat UI shows a few versions at a time).
    return ctx.limits.page(limit) if limit is not None else min(100, ctx.limits.max_page)


def children(
    ctx: Ctx, namespace: str, event_id: str | None, limit: int | None, cursor: str | None
) -> EventPage:
    ns = ctx.allow(namespace, "read")
    n = _limit(ctx, limit)
    return ctx.store.children(event_id, namespace=ns, limit=n, cursor=cursor)


def siblings(
    ctx: Ctx, namespace: str, event_id: str, limit: int | None, cursor: str | None
) -> EventPage:
    ns = ctx.allow(namespace, "read")
    n = _limit(ctx, limit)
    return ctx.store.siblings(event_id, namespace=ns, limit=n, cursor=cursor)


def versions(ctx: Ctx, namespace: str, event_id: str) -> Versions:
    return ctx.store.versions(event_id, namespace=ctx.allow(namespace, "read"))


def diff(
    ctx: Ctx, namespace: str, a: str | list[str], b: str | list[str], kind: str | None = None
) -> Diff:
    ns = ctx.allow(namespace, "read")
    return ctx.store.diff(a, b, kind=kind, namespace=ns)
