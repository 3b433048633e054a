"""HTTP routes of the tree reads and the diff (`tree_service`), added by
`app._routes` before the catch-all ``events/{event_id:path}`` route, so that
``events/ID/children`` is this and not the event ``ID/children``."""

# No ``from __future__ import annotations``: the routes' annotations name the
# dependency and limits passed in, and FastAPI reads them at definition.

from typing import Annotated, Any

from fastapi import FastAPI, Query
from fastapi import Path as FPath
from pydantic import BaseModel, Field

from . import tree_service as ts
from .deps import C, NSName
from .models import EventOut, Kind, MemoryOut
from .schema import Anchor, Id
from .served import Served


class EventPageOut(BaseModel):
    events: list[EventOut]
    cursor: str | None = Field(None, description="pass as cursor= for the next page")


class VersionsOut(BaseModel):
    id: str
    position: int = Field(description="from 1: version `position` of `count`")
    count: int
    previous: str | None
    next: str | None


class DiffOut(BaseModel):
    a: str | list[str]
    b: str | list[str]
    fork_point: str | None
    only_a: list[MemoryOut] = Field(description="visible at a, not at b: what disappears")
    only_b: list[MemoryOut] = Field(description="visible at b, not at a: what appears")
    same: int


Cursor = Annotated[str | None, Query(max_length=40, description="from the previous page")]


EventId = Annotated[Id, FPath(description="the event")]


def tree_routes(app: FastAPI, served: Served, ns: str) -> None:
    """Add the routes under ``ns`` (the namespace prefix)."""
    call = served.run
    Limit = Annotated[
        int | None, Query(ge=1, json_schema_extra={"maximum": served.limits.max_page})
    ]
    ev = f"{ns}/events/{{event_id:path}}"

    @app.get(f"{ev}/children", response_model=EventPageOut, tags=["events"])
    async def get_children(
        namespace: NSName, event_id: EventId, c: C, limit: Limit = None, cursor: Cursor = None
    ) -> dict[str, Any]:
        """The events under this one, in arrival order, a page at a time."""
        return (await call(ts.children, c, namespace, event_id, limit, cursor)).to_dict()

    @app.get(f"{ev}/siblings", response_model=EventPageOut, tags=["events"])
    async def get_siblings(
        namespace: NSName, event_id: EventId, c: C, limit: Limit = None, cursor: Cursor = None
    ) -> dict[str, Any]:
        """The versions of this event: those with its parents, itself included."""
        return (await call(ts.siblings, c, namespace, event_id, limit, cursor)).to_dict()

    @app.get(f"{ev}/versions", response_model=VersionsOut, tags=["events"])
    async def get_versions(namespace: NSName, event_id: EventId, c: C) -> dict[str, Any]:
        """Where this event stands among its siblings ("version 2 of 3")."""
        return (await call(ts.versions, c, namespace, event_id)).to_dict()

    @app.get(f"{ns}/roots", response_model=EventPageOut, tags=["events"])
    async def get_roots(
        namespace: NSName, c: C, limit: Limit = None, cursor: Cursor = None
    ) -> dict[str, Any]:
        """The events without a parent, in arrival order."""
        return (await call(ts.children, c, namespace, None, limit, cursor)).to_dict()

    @app.get(f"{ns}/diff", response_model=DiffOut, tags=["memories"])
    async def get_diff(
        namespace: NSName,
        c: C,
        a: Annotated[list[Anchor], Query(description="repeat for a scope chain")],
        b: Annotated[list[Anchor], Query(description="repeat for a scope chain")],
        kind: Kind | None = None,
    ) -> dict[str, Any]:
        """What moving the anchor from a to b changes: memories that disappear and appear."""
        sa: str | list[str] = a[0] if len(a) == 1 else a
        sb: str | list[str] = b[0] if len(b) == 1 else b
        return (await call(ts.diff, c, namespace, sa, sb, kind)).to_dict()
