"""The MCP tools of branches and the tree (added by `mcp_tools.build_mcp`):
merge, snapshot, rollback, diff, conflicts, resolve, and the tree reads
children, siblings and versions. Each calls the service function its HTTP
route calls, so the key's grants are checked alike (a write on a branch needs
a grant on that branch); each returns a dict (structured output).
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, TypeVar

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from pydantic import Field

from ..model import Memory
from . import mcp_args as A
from . import service as svc
from . import tree_service as ts

Run = Callable[..., Awaitable[Any]]
F = TypeVar("F", bound=Callable[..., Any])


def tool(server: MCPServer) -> Callable[[F], F]:
    """``@server.tool()`` with the docstring dedented as the description, so a
    client shows the text, not the source's indentation."""

    def register(fn: F) -> F:
        return server.tool(description=inspect.cleandoc(fn.__doc__ or ""))(fn)

    return register


def _d(result: Any) -> dict[str, Any]:
    return dict(result.to_dict())


def _member(m: Memory) -> dict[str, Any]:
    return {"id": m.id, "content": m.content, "sources": list(m.sources)}


def add_branch_tools(server: MCPServer, run: Run) -> None:
    """Register the tools on ``server``; ``run(ctx, fn, namespace, *args)`` calls
    a service function as the caller's principal."""

    @tool(server)
    async def merge(
        ctx: Context,
        source: Annotated[str, Field(description="the branch or event to merge from")],
        into: Annotated[str, Field(description="the branch to merge into (its head moves)")],
        strategy: A.StrategyArg = "append",
        fast_forward: A.FastForward = True,
        expected_head: A.ExpectedHead = None,
        namespace: A.Namespace = None,
    ) -> dict[str, Any]:
        """Merge ``source`` (a branch or event) into branch ``into``. Strategy
        ``append`` keeps both sides, ``overwrite`` lets the incoming value of a
        key replace the target's, ``keep_both`` keeps both and records a conflict."""
        options = {
            "strategy": strategy,
            "fast_forward": fast_forward,
            "expected_head": expected_head,
        }
        return _d(await run(ctx, svc.merge, namespace, source, into, **options))

    @tool(server)
    async def snapshot(
        ctx: Context, branch: A.BranchName, name: A.SnapshotName, namespace: A.Namespace = None
    ) -> dict[str, Any]:
        """Name the current head of ``branch`` as snapshot ``name`` (for rollback)."""
        return _d(await run(ctx, svc.snapshot, namespace, branch, name))

    @tool(server)
    async def rollback(
        ctx: Context,
        branch: A.BranchName,
        to: A.To,
        expected_head: A.ExpectedHead = None,
        namespace: A.Namespace = None,
    ) -> dict[str, Any]:
        """Move ``branch``'s head back to snapshot or event ``to`` (nothing is deleted)."""
        moved = await run(ctx, svc.rollback, namespace, branch, to, expected_head)
        return _d(moved)

    @tool(server)
    async def diff(
        ctx: Context,
        a: A.Anchors,
        b: A.Anchors,
        namespace: A.Namespace = None,
    ) -> dict[str, Any]:
        """What moving the anchor from ``a`` to ``b`` (event ids or branch names;
        a list is a scope chain) changes: the memories that disappear
        (``only_a``), those that appear (``only_b``), and the fork point."""
        return _d(await run(ctx, ts.diff, namespace, a, b))

    @tool(server)
    async def conflicts(ctx: Context, at: A.At, namespace: A.Namespace = None) -> dict[str, Any]:
        """The open conflicts (from ``keep_both`` merges) visible at ``at``: each
        with its key and the memories it holds side by side (id, content, sources);
        pass one of their ids to ``resolve`` as ``keep``."""
        found = await run(ctx, svc.conflicts_with_members, namespace, at)
        out = [
            c.to_dict() | {"memories": [_member(m) for m in members]} for c, members in found.items
        ]
        return {"conflicts": out, "next_offset": found.next_offset}

    @tool(server)
    async def resolve(
        ctx: Context,
        conflict_id: A.ConflictId,
        keep: A.Keep,
        branch: Annotated[str, Field(description="the branch to resolve it on")],
        expected_head: A.ExpectedHead = None,
        namespace: A.Namespace = None,
    ) -> dict[str, Any]:
        """Resolve a conflict on ``branch`` by keeping memory ``keep`` (the other
        side is retracted by an event written on the branch)."""
        ev = await run(ctx, svc.resolve, namespace, conflict_id, keep, branch, expected_head)
        return _d(ev)

    @tool(server)
    async def children(
        ctx: Context,
        event_id: A.ParentId = None,
        limit: A.Limit = 100,
        cursor: A.Cursor = None,
        namespace: A.Namespace = None,
    ) -> dict[str, Any]:
        """The events under ``event_id`` (the roots without one), in arrival order;
        pass ``cursor`` back for the next page."""
        return _d(await run(ctx, ts.children, namespace, event_id, limit, cursor))

    @tool(server)
    async def siblings(
        ctx: Context,
        event_id: A.EventId,
        limit: A.Limit = 100,
        cursor: A.Cursor = None,
        namespace: A.Namespace = None,
    ) -> dict[str, Any]:
        """The versions of an event: those with the same parents, itself included."""
        return _d(await run(ctx, ts.siblings, namespace, event_id, limit, cursor))

    @tool(server)
    async def versions(
        ctx: Context, event_id: A.EventId, namespace: A.Namespace = None
    ) -> dict[str, Any]:
        """Where an event stands among its versions: position, count, previous, next."""
        return _d(await run(ctx, ts.versions, namespace, event_id))
