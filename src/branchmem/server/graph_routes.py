"""The relation graph over HTTP: ``POST .../edges`` and ``GET .../graph``.

Routes only parse, call one service function (grant-checked there, like the
neighbouring routes), and format.
"""

from collections.abc import Callable
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Query
from pydantic import BaseModel, Field

from ..graph.model import MAX_HOPS
from . import service as svc
from .models import Importance, Meta, Sources, _In
from .schema import Anchor, Id, Name
from .service import Ctx


class EdgeIn(_In):
    subject: Name
    predicate: Name
    object: Name
    sources: list[Id] = Sources
    attrs: Meta = None
    importance: float = Importance
    id: Id | None = None
    valid_from: float | None = None
    valid_to: float | None = None
    single: bool | None = None
    replaces: list[Id] = Field(default_factory=list)


class EdgeOut(BaseModel):
    id: str
    subject: str
    predicate: str
    object: str
    sources: list[str]
    attrs: dict[str, Any] | None
    importance: float
    valid_from: float | None
    valid_to: float | None


class EntityOut(BaseModel):
    name: str
    aliases: list[str]


class PathOut(BaseModel):
    nodes: list[str]
    edges: list[EdgeOut]
    text: str


class GraphOut(BaseModel):
    at: str | list[str] | None
    namespace: str
    entities: list[EntityOut]
    edges: list[EdgeOut]
    paths: list[PathOut] = Field(
        default_factory=list, description="with entity: one per entity reached"
    )


def add_graph_routes(
    app: FastAPI, ns: str, call: Callable[..., Any], ctx: Callable[..., Ctx]
) -> None:
    C = Annotated[Ctx, Depends(ctx)]
    Hops = Annotated[int, Query(ge=1, le=MAX_HOPS)]

    @app.post(f"{ns}/edges", response_model=EdgeOut, tags=["graph"])
    async def post_edge(namespace: str, body: EdgeIn, c: C) -> dict[str, Any]:
        """Store a relation as a gated record (`Store.add_edge`)."""
        fields = body.model_dump(exclude={"subject", "predicate", "object", "sources"})
        e = await call(
            svc.add_edge, c, namespace, body.subject, body.predicate, body.object, body.sources,
            **fields,
        )  # fmt: skip
        return dict(e.to_dict())

    @app.get(f"{ns}/graph", response_model=GraphOut, tags=["graph"])
    async def get_graph(
        namespace: str,
        c: C,
        at: Annotated[list[Anchor] | None, Query(description="repeat for a scope chain")] = None,
        entity: Name | None = None,
        hops: Hops = 1,
        now: float | None = None,
    ) -> dict[str, Any]:
        """The graph visible at ``at``: with ``entity``, what ``hops`` visible edges
        from it reach (the edges, the entities, a shortest path to each); without,
        every visible edge and entity."""
        anchor: str | list[str] | None = at[0] if at and len(at) == 1 else at
        out: dict[str, Any] = await call(svc.graph, c, namespace, anchor, entity, hops, now)
        return out
