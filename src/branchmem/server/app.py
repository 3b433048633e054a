"""The HTTP API: FastAPI routes over `branchmem.server.service`.

Routes only parse, call one service function, and format (``to_dict``).
Errors are mapped in one place (`_error_handlers`) to one JSON shape.
`create_app` returns a plain FastAPI app, so more can be mounted on it
(a static inspector at ``/ui``, for instance) with ``app.mount(...)``.

Store calls run in `Served`'s pool (`branchmem.server.served`): a route
awaits its call without holding a thread, at most ``workers`` calls run at
once, fairly between namespaces, and each key has at most
``Limits.max_concurrent`` requests in flight.
"""

import math
from collections.abc import Callable
from contextlib import asynccontextmanager
from typing import Annotated, Any, TypeVar

from fastapi import FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi_offline import FastAPIOffline
from starlette.exceptions import HTTPException as StarletteHTTPException

from .. import __version__
from ..errors import BranchmemError, InvalidInput
from ..retrieval.embed import Embedder
from ..retrieval.vectors import numpy_or_none
from ..store import Store
from ..validate import MAX_CONTENT_BYTES, MAX_DEPTH, MAX_INT, MAX_PARENTS, MAX_SOURCES
from . import models as M
from . import service as svc
from .auth import KeyStore, key_of
from .background_routes import MAX_WAIT, add_background_routes
from .deps import C, NSName, context
from .errors import UnknownRoute, to_payload
from .graph_routes import add_graph_routes
from .limits import BodyLimit, LoopbackHosts
from .schema import Anchor, Id, Name, Text
from .schema import install as install_schema
from .served import WORKERS, Served
from .service import Limits, Page
from .shapes import closest_shape
from .tree_routes import tree_routes

T = TypeVar("T")
NS = "/v1/namespaces/{namespace}"
MEM = NS + "/memories/{memory_id:path}"
_RETRY = {"Retry-After": {"description": "seconds to wait", "schema": {"type": "integer"}}}
_ERRORS: dict[int | str, dict[str, Any]] = {
    **{code: {"model": M.ErrorOut} for code in (400, 401, 403, 404, 409, 413, 422, 500)},
    429: {
        "model": M.ErrorOut,
        "description": "TooManyRequests: the key has as many requests in flight as the "
        "server takes at once (`branchmem serve --max-concurrent`)",
        "headers": _RETRY,
    },
    503: {
        "model": M.ErrorOut,
        "description": "EmbeddingPending: a vector-only search needs more vectors than it "
        "may embed itself (`--max-embed`), answered before it queues while more of the "
        "namespace's records wait for the background embedder; or the store is "
        "unavailable or shutting down",
        "headers": _RETRY,
    },
}


def create_app(
    store: Store,
    keys: KeyStore | None,
    *,
    limits: Limits | None = None,
    embedder: Embedder | str | None = None,
    mcp: bool = True,
    workers: int = WORKERS,
    connect: Callable[[], Store] | None = None,
    worker: bool = False,
) -> FastAPI:
    """The ASGI app serving ``store``. ``keys=None`` serves without authentication
    (every caller is ``anonymous`` with admin on every namespace: loopback only).
    ``workers`` store calls run at once; ``connect`` opens another connection
    to the store for each of them (see `Served`). Records written are embedded
    in the background; ``worker=True`` also runs the extraction queue's jobs
    on a thread (`branchmem.extract.Worker`). The app's shutdown stops them."""
    lim = limits or Limits()
    served = Served(store, keys, lim, embedder, workers=workers, connect=connect, worker=worker)
    app = FastAPIOffline(  # /docs and /redoc with their scripts served here, not from a CDN
        title="branchmem",
        version=__version__,
        description="Memory for LLM agents whose history is a tree. Every route under "
        "/v1 needs `Authorization: Bearer KEY` (or `X-API-Key`).\n\n" + _limits_text(lim),
        responses=_ERRORS,
    )
    app.state.served = served
    install_schema(app, served.limits)
    _error_handlers(app)
    _routes(app, served)
    add_graph_routes(app, NS, served.run, context)
    add_background_routes(app, NS, served.run, context)
    _inspector(app)
    if mcp:
        from .mcp_tools import mount_mcp

        mount_mcp(app, served)
    parent = app.router.lifespan_context

    @asynccontextmanager
    async def lifespan(a: Any) -> Any:
        # A search over many records ranks with numpy where it is installed, and
        # imports it on first use: a fifth of a second that the first search
        # after every restart would pay, paid here before the first request.
        numpy_or_none()
        async with parent(a) as state:
            try:
                yield state
            finally:
                served.close()

    app.router.lifespan_context = lifespan
    app.add_middleware(BodyLimit, max_bytes=served.limits.max_body_bytes)
    if keys is None:
        app.add_middleware(LoopbackHosts)
    return app


def _limits_text(lim: Limits) -> str:
    return (
        f"Limits: a body of at most {lim.max_body_bytes} bytes, {lim.max_batch} items and "
        f"{lim.max_rows} rows (an item and its parents or sources) (413); per item, at every "
        f"door: content of at most {MAX_CONTENT_BYTES} bytes, {MAX_PARENTS} parents, "
        f"{MAX_SOURCES} sources, no NUL in content or meta (422); no key twice in a JSON "
        f"object (422); `k` at most {lim.max_k}, a page at most {lim.max_page} items, a query at "
        f"most {lim.max_query} characters (422); at most {lim.max_concurrent} requests of one "
        f"key in flight (429, with Retry-After); a search embeds at most {lim.max_embed} "
        "records itself: a hybrid search ranks records still without a vector by keyword "
        "(`explanation.vector_pending`), a vector-only one answers 503 with Retry-After. "
        "Records are embedded in the background after each write."
    )


def _inspector(app: FastAPI) -> None:
    """The web inspector's static files at ``/ui`` (they call the API above)."""
    from fastapi.responses import FileResponse
    from fastapi.staticfiles import StaticFiles

    from ..ui import STATIC_DIR

    @app.get("/ui", include_in_schema=False)
    def ui_page() -> FileResponse:
        return FileResponse(STATIC_DIR / "index.html", headers=_UI_HEADERS)

    app.mount("/ui", StaticFiles(directory=STATIC_DIR, html=True), name="ui")


_UI_HEADERS = {"Referrer-Policy": "no-referrer", "Cache-Control": "no-store"}


def _error_handlers(app: FastAPI) -> None:
    def answer(exc: BranchmemError, status: int | None = None, **detail: Any) -> JSONResponse:
        headers = None
        retry = getattr(exc, "retry_after", None)
        if isinstance(retry, (int, float)) and math.isfinite(retry):
            headers = {"Retry-After": str(max(1, math.ceil(retry)))}
        code = status or exc.http_status
        return JSONResponse(to_payload(exc, detail), status_code=code, headers=headers)

    @app.exception_handler(BranchmemError)
    async def branchmem_error(request: Request, exc: BranchmemError) -> JSONResponse:
        return answer(exc)

    @app.exception_handler(RequestValidationError)
    async def validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = [
            {"loc": [str(p) for p in e.get("loc", ())], "msg": str(e.get("msg", ""))}
            for e in closest_shape(exc.errors())
        ]
        where = "; ".join(f"{'.'.join(e['loc'])}: {e['msg']}" for e in errors[:5])
        return answer(InvalidInput(f"the request does not fit the API: {where}"), errors=errors)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        status = exc.status_code
        if status == 404:
            err: BranchmemError = UnknownRoute(f"no route {request.url.path}; see /docs")
        elif status == 405:
            err = UnknownRoute(f"{request.method} is not served on {request.url.path}; see /docs")
        elif status == 400:  # a body the JSON parser gave up on (nested thousands deep)
            err, status = _UNREADABLE, _UNREADABLE.http_status
        else:
            err = InvalidInput(str(exc.detail))
        return answer(err, status)

    @app.exception_handler(Exception)
    async def internal_error(request: Request, exc: Exception) -> JSONResponse:
        return answer(BranchmemError("internal server error; the server log has the details"))


_UNREADABLE = InvalidInput(
    "the request body is no JSON this server can read (objects and lists nest at most "
    f"{MAX_DEPTH} levels deep in what it stores); send a JSON object"
)


def _paged(p: Page, name: str) -> dict[str, Any]:
    return {name: [x.to_dict() for x in p.items], "next_offset": p.next_offset}


# Maxima are stated here and checked by the store and the service, whose errors
# say what to do (and keep their types: LimitExceeded for a server's cap).
Offset = Annotated[int, Query(ge=0, json_schema_extra={"maximum": MAX_INT})]
Window = Annotated[int | None, Query(ge=0, json_schema_extra={"maximum": MAX_INT})]


def _routes(app: FastAPI, served: Served) -> None:
    call, write = served.run, served.written
    lim = served.limits
    Limit = Annotated[int | None, Query(ge=1, json_schema_extra={"maximum": lim.max_page})]
    K = Annotated[int | None, Query(ge=0, json_schema_extra={"maximum": lim.max_k})]
    QueryText = Annotated[Text | None, Query(json_schema_extra={"maxLength": lim.max_query})]

    @app.get("/healthz", response_model=M.HealthOut, tags=["health"])
    async def healthz() -> dict[str, Any]:
        return {"status": "ok", "version": __version__}

    @app.get("/v1/me", response_model=M.MeOut, tags=["health"])
    def me(request: Request) -> dict[str, Any]:
        """Who the key acts as, and its grants (the namespaces it may see)."""
        who = served.principal(key_of(request))
        return {"principal": who.name, "grants": [str(g) for g in who.grants]}

    tree_routes(app, served, NS)  # before events/{event_id:path} below

    # ------------------------------------------------------------- events
    @app.post(f"{NS}/events", response_model=M.WrittenEventsOut, tags=["events"])
    async def post_events(
        namespace: NSName, body: M.EventIn | M.EventsIn, c: C, extract: bool = False
    ) -> dict[str, Any]:
        """Add events; ``extract=true`` also queues an extraction at each new
        tip, done by the worker (``GET .../jobs`` lists what waits)."""
        items = body.events if isinstance(body, M.EventsIn) else [body]
        dumped = [i.model_dump() for i in items]
        done, said = await write(svc.add_events, c, namespace, dumped, extract=extract)
        return {"events": [e.to_dict() for e in done], "next_offset": None, "warnings": said}

    @app.get(f"{NS}/events/{{event_id:path}}", response_model=M.EventOut, tags=["events"])
    async def get_event(namespace: NSName, event_id: Id, c: C) -> dict[str, Any]:
        return (await call(svc.get_event, c, namespace, event_id)).to_dict()

    @app.get(f"{NS}/events", response_model=M.EventsOut, tags=["events"])
    async def list_events(
        namespace: NSName, c: C, offset: Offset = 0, limit: Limit = None
    ) -> dict[str, Any]:
        """Every event of the namespace in arrival order, a page at a time."""
        return _paged(await call(svc.events, c, namespace, offset, limit), "events")

    @app.get(f"{NS}/inspect", response_model=M.InspectOut, tags=["memories"])
    async def inspect(
        namespace: NSName, c: C, at: Anchor | None = None, offset: Offset = 0, limit: Limit = None
    ) -> dict[str, Any]:
        """Every record with whether reads at ``at`` show it, and why (from `explain`)."""
        p = await call(svc.inspect, c, namespace, at, offset, limit)
        items = [
            {
                "memory": m.to_dict(),
                "visible": e.visible and e.hidden_by_time is None,
                "gate": e.visible,
                "reason": e.reason,
                "hidden_by_time": e.hidden_by_time,
            }
            for m, e in p.items
        ]
        return {"memories": items, "next_offset": p.next_offset}

    @app.get(f"{NS}/path", response_model=M.EventsOut, tags=["events"])
    async def get_path(
        namespace: NSName, c: C, at: Anchor | None = None, offset: Offset = 0, limit: Limit = None
    ) -> dict[str, Any]:
        return _paged(await call(svc.path, c, namespace, at, offset, limit), "events")

    # ----------------------------------------------------------- memories
    @app.post(f"{NS}/memories", response_model=M.WrittenMemoriesOut, tags=["memories"])
    async def post_memories(
        namespace: NSName, body: M.MemoryIn | M.MemoriesIn, c: C
    ) -> dict[str, Any]:
        items = body.memories if isinstance(body, M.MemoriesIn) else [body]
        dumped = [i.model_dump(exclude_none=True) for i in items]
        done, said = await write(svc.add_memories, c, namespace, dumped)
        return {"memories": [m.to_dict() for m in done], "next_offset": None, "warnings": said}

    @app.get(f"{NS}/memories", response_model=M.MemoriesOut, tags=["memories"])
    async def get_memories(
        namespace: NSName,
        c: C,
        at: Annotated[list[Anchor] | None, Query(description="repeat for a scope chain")] = None,
        kind: M.ReadKind | None = None,
        now: float | None = None,
        as_of: float | None = None,
        include_archived: bool = False,
        offset: Offset = 0,
        limit: Limit = None,
        wait: Annotated[float | None, Query(ge=0, le=MAX_WAIT)] = None,
    ) -> dict[str, Any]:
        """Records visible at ``at``; ``wait`` (seconds) first waits for an
        extraction queued there."""
        anchor: str | list[str] | None = at[0] if at and len(at) == 1 else at
        p = await call(
            svc.memories,
            c,
            namespace,
            anchor,
            kind=kind,
            now=now,
            as_of=as_of,
            include_archived=include_archived,
            offset=offset,
            limit=limit,
            wait=wait,
        )
        return _paged(p, "memories")

    @app.get(f"{MEM}/explain", response_model=M.ExplanationOut, tags=["memories"])
    async def get_explain(
        namespace: NSName, memory_id: Id, c: C, at: Anchor | None = None, now: float | None = None
    ) -> dict[str, Any]:
        return (await call(svc.explain, c, namespace, memory_id, at, now)).to_dict()

    @app.get(f"{MEM}/visible", response_model=M.VisibleOut, tags=["memories"])
    async def get_visible(
        namespace: NSName, memory_id: Id, c: C, at: Anchor | None = None
    ) -> dict[str, Any]:
        return {"visible": await call(svc.visible, c, namespace, memory_id, at)}

    @app.post(f"{MEM}/retract", response_model=M.WrittenMemoryOut, tags=["memories"])
    async def post_retract(
        namespace: NSName, memory_id: Id, body: M.RetractIn, c: C
    ) -> dict[str, Any]:
        done, said = await write(svc.retract, c, namespace, memory_id, body.sources, body.id)
        return done.to_dict() | {"warnings": said}

    @app.post(f"{MEM}/supersede", response_model=M.WrittenMemoryOut, tags=["memories"])
    async def post_supersede(
        namespace: NSName, memory_id: Id, body: M.SupersedeIn, c: C
    ) -> dict[str, Any]:
        fields = body.model_dump(exclude={"content", "sources"})
        done, said = await write(
            svc.supersede, c, namespace, memory_id, body.content, body.sources, **fields
        )
        return done.to_dict() | {"warnings": said}

    @app.post(f"{NS}/search", response_model=M.HitsOut, tags=["memories"])
    async def post_search(namespace: NSName, body: M.SearchIn, c: C) -> dict[str, Any]:
        """Gated search. Records without a vector yet (past the search's embedding
        budget) are ranked by keyword and marked `explanation.vector_pending`."""
        options = body.model_dump(exclude={"query", "at", "k"})
        if body.mode == "vector":  # its EmbeddingPending comes before it queues
            svc.vector_backlog(c, namespace, served.embedding)
        hits = await call(svc.search, c, namespace, body.query, body.at, body.k, **options)
        return {"hits": [h.to_dict() for h in hits]}

    @app.post(f"{NS}/extract", response_model=M.MemoriesOut, tags=["memories"])
    async def post_extract(namespace: NSName, body: M.ExtractIn, c: C) -> dict[str, Any]:
        done = await call(svc.extract, c, namespace, body.at, body.window)
        return {"memories": [m.to_dict() for m in done], "next_offset": None}

    @app.get(f"{NS}/context", response_model=M.ContextOut, tags=["memories"])
    async def get_context(
        namespace: NSName,
        c: C,
        at: Annotated[list[Anchor] | None, Query(description="repeat for a scope chain")] = None,
        query: QueryText = None,
        window: Window = 8,
        k: K = 10,
    ) -> dict[str, Any]:
        anchor: str | list[str] | None = at[0] if at and len(at) == 1 else at
        return (await call(svc.context, c, namespace, anchor, query, window, k)).to_dict()

    @app.get(f"{MEM}/score", response_model=M.ScoreOut, tags=["lifecycle"])
    async def get_score(
        namespace: NSName, memory_id: Id, c: C, now: float | None = None
    ) -> dict[str, Any]:
        return {"score": await call(svc.score, c, namespace, memory_id, now)}

    @app.post(f"{MEM}/restore", response_model=M.MemoryOut, tags=["lifecycle"])
    async def post_restore(namespace: NSName, memory_id: Id, c: C) -> dict[str, Any]:
        return (await call(svc.restore, c, namespace, memory_id)).to_dict()

    @app.post(f"{NS}/touch", response_model=M.IdsOut, tags=["lifecycle"])
    async def post_touch(namespace: NSName, body: M.TouchIn, c: C) -> dict[str, Any]:
        await call(svc.touch, c, namespace, body.ids, body.now)
        return {"ids": body.ids}

    @app.post(f"{NS}/archive", response_model=M.IdsOut, tags=["lifecycle"])
    async def post_archive(namespace: NSName, body: M.ArchiveIn, c: C) -> dict[str, Any]:
        return {"ids": await call(svc.archive_expired, c, namespace, body.now)}

    @app.get(f"{MEM}", response_model=M.MemoryOut, tags=["memories"])
    async def get_memory(namespace: NSName, memory_id: Id, c: C) -> dict[str, Any]:
        return (await call(svc.get_memory, c, namespace, memory_id)).to_dict()

    # ----------------------------------------------------------- branches
    @app.post(f"{NS}/branches", response_model=M.BranchOut, tags=["branches"])
    async def post_branch(namespace: NSName, body: M.BranchIn, c: C) -> dict[str, Any]:
        return (await call(svc.create_branch, c, namespace, body.name, body.at)).to_dict()

    @app.get(f"{NS}/branches", response_model=M.BranchesOut, tags=["branches"])
    async def get_branches(
        namespace: NSName, c: C, offset: Offset = 0, limit: Limit = None
    ) -> dict[str, Any]:
        return _paged(await call(svc.branches, c, namespace, offset, limit), "branches")

    @app.post(f"{NS}/branches/{{name:path}}/head", response_model=M.BranchOut, tags=["branches"])
    async def post_head(namespace: NSName, name: Name, body: M.HeadIn, c: C) -> dict[str, Any]:
        moved = await call(svc.move_branch, c, namespace, name, body.to, body.expected_head)
        return moved.to_dict()

    @app.get(f"{NS}/branches/{{name:path}}", response_model=M.BranchOut, tags=["branches"])
    async def get_branch(namespace: NSName, name: Name, c: C) -> dict[str, Any]:
        return (await call(svc.get_branch, c, namespace, name)).to_dict()

    @app.delete(f"{NS}/branches/{{name:path}}", response_model=M.DeletedOut, tags=["branches"])
    async def delete_branch(namespace: NSName, name: Name, c: C) -> dict[str, Any]:
        await call(svc.delete_branch, c, namespace, name)
        return {"deleted": name}

    @app.post(f"{NS}/merge", response_model=M.MergeOut, tags=["branches"])
    async def post_merge(namespace: NSName, body: M.MergeIn, c: C) -> dict[str, Any]:
        options = body.model_dump(exclude={"source", "into"})
        return (await call(svc.merge, c, namespace, body.source, body.into, **options)).to_dict()

    @app.get(f"{NS}/conflicts", response_model=M.ConflictsOut, tags=["branches"])
    async def get_conflicts(
        namespace: NSName, c: C, at: Anchor | None = None, offset: Offset = 0, limit: Limit = None
    ) -> dict[str, Any]:
        return _paged(await call(svc.conflicts, c, namespace, at, offset, limit), "conflicts")

    @app.post(
        f"{NS}/conflicts/{{conflict_id:path}}/resolve", response_model=M.EventOut, tags=["branches"]
    )
    async def post_resolve(
        namespace: NSName, conflict_id: Id, body: M.ResolveIn, c: C
    ) -> dict[str, Any]:
        ev = await call(
            svc.resolve, c, namespace, conflict_id, body.keep, body.branch, body.expected_head
        )
        return ev.to_dict()

    @app.post(f"{NS}/snapshots", response_model=M.SnapshotOut, tags=["branches"])
    async def post_snapshot(namespace: NSName, body: M.SnapshotIn, c: C) -> dict[str, Any]:
        return (await call(svc.snapshot, c, namespace, body.branch, body.name)).to_dict()

    @app.get(f"{NS}/snapshots", response_model=M.SnapshotsOut, tags=["branches"])
    async def get_snapshots(
        namespace: NSName, c: C, offset: Offset = 0, limit: Limit = None
    ) -> dict[str, Any]:
        return _paged(await call(svc.snapshots, c, namespace, offset, limit), "snapshots")

    @app.post(f"{NS}/rollback", response_model=M.BranchOut, tags=["branches"])
    async def post_rollback(namespace: NSName, body: M.RollbackIn, c: C) -> dict[str, Any]:
        moved = await call(svc.rollback, c, namespace, body.branch, body.to, body.expected_head)
        return moved.to_dict()

    @app.get(f"{NS}/history", response_model=M.HistoryOut, tags=["branches"])
    async def get_history(
        namespace: NSName, branch: Name, c: C, offset: Offset = 0, limit: Limit = None
    ) -> dict[str, Any]:
        return _paged(await call(svc.history, c, namespace, branch, offset, limit), "moves")

    @app.post(f"{NS}/prune", response_model=M.IdsOut, tags=["branches"])
    async def post_prune(namespace: NSName, body: M.PruneIn, c: C) -> dict[str, Any]:
        pruned = await call(
            svc.prune_branches, c, namespace, body.prefix, body.older_than, body.now
        )
        return {"ids": pruned}

    # -------------------------------------------------------------- admin
    @app.post(f"{NS}/purge", response_model=M.PurgeOut, tags=["admin"])
    async def post_purge(namespace: NSName, body: M.PurgeIn, c: C) -> dict[str, Any]:
        removed = await call(
            svc.purge, c, namespace, body.events, body.memories, body.whole_namespace
        )
        return {"removed": removed}

    @app.get(f"{NS}/audit", response_model=M.AuditOut, tags=["admin"])
    async def get_audit(
        namespace: NSName, c: C, since: float | None = None, offset: Offset = 0, limit: Limit = None
    ) -> dict[str, Any]:
        return _paged(await call(svc.audit, c, namespace, since, offset, limit), "entries")
