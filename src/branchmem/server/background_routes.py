"""The background work over HTTP: ``GET .../jobs`` (the extraction queue),
``POST .../consolidate`` and ``GET .../profile`` (`Store.consolidate`,
`Store.profile`); the service functions here are the MCP tool's too.

Routes only parse, call the store through a grant-checked service function,
and format. ``POST .../events?extract=true`` queues the jobs
(`branchmem.server.app`); a worker thread of ``branchmem serve --worker``
or ``branchmem worker`` does them.
"""

from collections.abc import Callable
from typing import Annotated, Any

from fastapi import Depends, FastAPI
from pydantic import BaseModel, Field

from ..backends.jobs import Job
from ..consolidate import Consolidation, Profile
from .models import MemoryOut, _In
from .schema import Anchor
from .service import Ctx

MAX_WAIT = 30.0
"""Seconds a read may ask to wait for an extraction (``wait=``)."""


class JobOut(BaseModel):
    namespace: str
    tip: str
    state: str
    attempts: int
    not_before: float
    lease_until: float | None
    worker: str | None
    error: str | None
    created_at: float


class JobsOut(BaseModel):
    jobs: list[JobOut]


class ConsolidateIn(_In):
    at: Anchor
    contradictions: str = Field("recency", description="recency (later wins) or flag")
    near: float = Field(0.8, gt=0, le=1, description="bigram overlap that makes duplicates")
    profile: bool = True


class ConsolidationOut(BaseModel):
    at: str
    merged: list[MemoryOut]
    retractions: list[MemoryOut]
    conflicts: list[MemoryOut]
    profile: MemoryOut | None


class ProfileOut(BaseModel):
    at: str
    facts: dict[str, str]
    record: MemoryOut | None


def consolidate(ctx: Ctx, namespace: str, body: dict[str, Any]) -> Consolidation:
    """`Store.consolidate` (a write)."""
    ns = ctx.allow(namespace, "write")
    return ctx.store.consolidate(namespace=ns, actor=ctx.who.name, **body)


def profile(ctx: Ctx, namespace: str, at: str) -> Profile:
    """`Store.profile` (a read)."""
    return ctx.store.profile(at, namespace=ctx.allow(namespace, "read"))


def jobs(ctx: Ctx, namespace: str) -> list[Job]:
    """The namespace's extractions queued, running or failed."""
    return ctx.store.pending(ctx.allow(namespace, "read"))


def add_background_routes(
    app: FastAPI, ns_path: str, run: Callable[..., Any], ctx: Callable[..., Any]
) -> None:
    C = Annotated[Ctx, Depends(ctx)]

    @app.get(f"{ns_path}/jobs", response_model=JobsOut, tags=["memories"])
    async def get_jobs(namespace: str, c: C) -> dict[str, Any]:
        """Extractions still to do or that failed, oldest first (each with its
        state, attempts and last error)."""
        return {"jobs": [j.to_dict() for j in await run(jobs, c, namespace)]}

    @app.post(f"{ns_path}/consolidate", response_model=ConsolidationOut, tags=["memories"])
    async def post_consolidate(namespace: str, body: ConsolidateIn, c: C) -> dict[str, Any]:
        """Merge duplicates, resolve contradictions and write the profile at
        ``at``, each output sourced from all of its inputs; again writes nothing."""
        done = await run(consolidate, c, namespace, body.model_dump())
        out: dict[str, Any] = done.to_dict()
        return out

    @app.get(f"{ns_path}/profile", response_model=ProfileOut, tags=["memories"])
    async def get_profile(namespace: str, at: Anchor, c: C) -> dict[str, Any]:
        """The profile visible at ``at``: the current fact of each key."""
        out: dict[str, Any] = (await run(profile, c, namespace, at)).to_dict()
        return out
