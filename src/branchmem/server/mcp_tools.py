"""MCP tools over the service layer: stdio (``branchmem mcp``) and streamable
HTTP mounted at ``/mcp`` on the HTTP server, with the same keys and grants.

Each tool returns a dict (structured output). Over HTTP the caller's key is
read from the request's ``Authorization: Bearer`` or ``X-API-Key`` header, as
on the REST routes; over stdio the tools act as the principal the command
was started with. A `BranchmemError` becomes a tool error whose text is the
one JSON error shape of the REST API (over stdio, naming the principal
instead of pointing at keys). The branch and tree tools are in
`mcp_branch_tools`.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, TypeVar

import anyio.to_thread
from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.transport_security import TransportSecuritySettings
from starlette.routing import Route

from .. import __version__
from ..errors import BranchmemError, InvalidInput
from . import background_routes as background
from . import mcp_args as A
from . import service as svc
from .auth import Principal
from .errors import to_payload
from .mcp_branch_tools import add_branch_tools, tool
from .patterns import tokens

if TYPE_CHECKING:
    from fastapi import FastAPI

    from .served import Served

T = TypeVar("T")
_LOG = logging.getLogger("branchmem.mcp")
INSTRUCTIONS = (
    "branchmem: memory whose history is a tree. Record each message with add_event "
    "(parent = the previous message), store facts with remember (sources = the events "
    "they came from), and read with recall/memories at the current message: only "
    "memories whose sources are on that message's path are visible."
)


def build_mcp(
    served: Served, *, namespace: str | None = None, principal: Principal | None = None
) -> MCPServer:
    """The MCP server. ``principal`` acts for stdio (where there are no headers);
    over HTTP every call authenticates its own key. ``namespace`` is the default
    of every tool's ``namespace`` argument; without one, the caller's only
    namespace is (`default_namespace`)."""

    async def run(ctx: Context, fn: Callable[..., T], ns: str | None, *args: Any, **kw: Any) -> T:
        return (await written(ctx, fn, ns, *args, **kw))[0]

    async def written(
        ctx: Context, fn: Callable[..., T], ns: str | None, *args: Any, **kw: Any
    ) -> tuple[T, list[dict[str, Any]]]:
        """`run`, and the warnings of its writes."""
        headers = ctx.headers
        try:
            key = _key(headers) if headers is not None else None
            if headers is not None:
                who = await anyio.to_thread.run_sync(served.principal, key)
            elif principal is not None:
                who = principal
            else:
                who = served.principal(None)
            ns = ns or namespace or default_namespace(who)
            return await served.written(fn, served.ctx(who, key), ns, *args, **kw)
        except BranchmemError as exc:
            payload = to_payload(exc)
            if headers is None:  # stdio: no keys to list; say whom it acts as
                payload = _stdio_payload(payload, principal or served.principal(None))
                _LOG.warning("%s", " ".join(f"{type(exc).__name__}: {exc}".split()))
            raise ToolError(json.dumps(payload, ensure_ascii=False)) from exc

    server: MCPServer = MCPServer(
        "branchmem", instructions=INSTRUCTIONS, version=__version__, log_level="WARNING"
    )

    @tool(server)
    async def add_event(
        ctx: Context,
        id: A.NewEventId,
        content: A.Content = "",
        parent: A.Parent = None,
        role: A.RoleArg = "user",
        branch: A.Branch = None,
        namespace: A.Namespace = None,
    ) -> dict[str, Any]:
        """Record one message or note in the history tree, under ``parent`` (an event
        id; a list for a merge; none for a root) or, with ``branch``, under that
        branch's head (which then advances)."""
        item = {"id": id, "content": content, "parent": parent, "role": role, "branch": branch}
        done, said = await written(ctx, svc.add_events, namespace, [item])
        return _with_warnings(done[0].to_dict(), said)

    @tool(server)
    async def remember(
        ctx: Context,
        content: A.Content,
        sources: A.Sources = None,
        branch: A.Branch = None,
        kind: A.KindArg = "semantic",
        key: A.Key = None,
        importance: A.Importance = 0.5,
        namespace: A.Namespace = None,
    ) -> dict[str, Any]:
        """Store a memory derived from ``sources`` (event ids), or, with ``branch``
        instead, write it on that branch (a note event under its head, as source)."""
        item: dict[str, Any] = {"content": content, "kind": kind, "importance": importance}
        item |= {k: v for k, v in (("sources", sources), ("branch", branch), ("key", key)) if v}
        done, said = await written(ctx, svc.add_memories, namespace, [item])
        return _with_warnings(done[0].to_dict(), said)

    @tool(server)
    async def recall(
        ctx: Context, query: A.Query, at: A.At, k: A.K = 10, namespace: A.Namespace = None
    ) -> dict[str, Any]:
        """Search the memories visible at ``at`` (an event id or branch name) for
        ``query``; the ``k`` best, with their scores."""
        hits = await run(ctx, svc.search, namespace, query, at, k)
        return {"hits": [h.to_dict() for h in hits]}

    @tool(server)
    async def graph_neighbors(
        ctx: Context, entity: A.Entity, at: A.At, hops: A.Hops = 1, namespace: A.Namespace = None
    ) -> dict[str, Any]:
        """The relation graph around ``entity`` visible at ``at``: the edges and
        entities within ``hops`` visible edges, and a shortest path to each."""
        return await run(ctx, svc.graph, namespace, at, entity, hops)

    @tool(server)
    async def memories(ctx: Context, at: A.At, namespace: A.Namespace = None) -> dict[str, Any]:
        """Every memory visible at ``at`` (an event id or branch name), oldest first."""
        found = await run(ctx, svc.memories, namespace, at)
        return {"memories": [m.to_dict() for m in found.items], "next_offset": found.next_offset}

    @tool(server)
    async def explain(
        ctx: Context, memory_id: A.MemoryId, at: A.At, namespace: A.Namespace = None
    ) -> dict[str, Any]:
        """Why a memory is visible or hidden at ``at``: each source's state."""
        return (await run(ctx, svc.explain, namespace, memory_id, at)).to_dict()

    @tool(server)
    async def context(
        ctx: Context, at: A.At, query: A.OptionalQuery = None, namespace: A.Namespace = None
    ) -> dict[str, Any]:
        """What a model should see at ``at``: the recent messages on its path and the
        visible memories (ranked for ``query``), with ``text``, one prompt block."""
        return (await run(ctx, svc.context, namespace, at, query)).to_dict()

    @tool(server)
    async def branches(ctx: Context, namespace: A.Namespace = None) -> dict[str, Any]:
        """Every named branch: head, fork point, parent, visible-memory count."""
        found = await run(ctx, svc.branches, namespace)
        return {"branches": [b.to_dict() for b in found.items]}

    @tool(server)
    async def create_branch(
        ctx: Context, name: A.BranchName, at: A.Ref, namespace: A.Namespace = None
    ) -> dict[str, Any]:
        """Fork a new branch at an event or at another branch's head."""
        return (await run(ctx, svc.create_branch, namespace, name, at)).to_dict()

    @tool(server)
    async def memory_profile(
        ctx: Context, at: A.At, namespace: A.Namespace = None
    ) -> dict[str, Any]:
        """The user's profile visible at ``at``: the current fact of each key,
        as the latest consolidation on that path wrote it."""
        return (await run(ctx, background.profile, namespace, at)).to_dict()

    add_branch_tools(server, run)
    return server


def default_namespace(who: Principal) -> str:
    """The namespace a call that names none acts in: the one namespace the
    principal is granted; ``default`` for a server without keys (granted every
    namespace). A principal granted several (or a pattern) must name one.
    """
    names = {g.namespace for g in who.grants}
    if names == {"*"}:
        return "default"
    if len(names) == 1:
        (pattern,) = names
        chars = tokens(pattern)
        if None not in chars:
            return "".join(c for c in chars if c is not None)
    shown = ", ".join(sorted(names)) or "none"
    raise InvalidInput(
        f"pass namespace=: {who.name!r} is granted more than one namespace ({shown}), "
        "so a call that names none is ambiguous"
        if names
        else f"{who.name!r} is granted no namespace; ask for a grant"
    )


def _with_warnings(out: dict[str, Any], said: list[dict[str, Any]]) -> dict[str, Any]:
    """A written item's dict, with ``warnings`` (their messages) when there are any:
    a model reads that what it wrote stays hidden, and why."""
    return out | {"warnings": [w["message"] for w in said]} if said else out


def _stdio_payload(payload: dict[str, Any], who: Principal) -> dict[str, Any]:
    """An error as stdio should word it: there are no keys to list there, only
    the one principal the command runs as (``--namespace`` picks the default)."""
    err = dict(payload["error"])
    hint = f"this stdio server acts as {who.name!r}, granted " + (
        ", ".join(str(g) for g in who.grants) or "nothing"
    )
    msg = str(err["message"])
    for old in ("(see `branchmem keys list`)", "`branchmem keys list` shows the keys"):
        msg = msg.replace(old, f"({hint})" if old.startswith("(") else hint)
    err["message"] = msg
    return {**payload, "error": err}


def _key(headers: Mapping[str, str]) -> str | None:
    lower = {k.lower(): v for k, v in headers.items()}
    auth = lower.get("authorization", "")
    if auth[:7].lower() == "bearer ":
        return auth[7:].strip()
    return lower.get("x-api-key")


def mount_mcp(app: FastAPI, served: Served) -> None:
    """Serve the tools as streamable HTTP at ``/mcp`` (keys and grants as on /v1).

    DNS-rebinding protection (a Host check) is on only for a server without
    keys: with keys, every call must carry one anyway.
    """
    server = build_mcp(served)
    protect = served.keys is None
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=protect,
        allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
        allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
    )
    inner = server.streamable_http_app(
        streamable_http_path="/mcp", transport_security=security, stateless_http=True
    )
    manager = server.session_manager
    for route in inner.routes:
        if isinstance(route, Route) and route.path == "/mcp":
            app.router.routes.append(route)
    parent = app.router.lifespan_context

    @asynccontextmanager
    async def lifespan(a: Any) -> Any:
        async with manager.run(), parent(a) as state:
            yield state

    app.router.lifespan_context = lifespan
