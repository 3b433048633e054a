"""The MCP tools' arguments, each with the description a model reads in the
tool's schema (and roles, kinds and strategies as their allowed values)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from .models import Kind, Role, Strategy

_KINDS = (
    "the memory type: semantic (a fact), episodic (something that happened), "
    "procedural (how to do something), working (for the task at hand)"
)
_STRATEGIES = (
    "append keeps both sides; overwrite lets the incoming value of a key replace the "
    "target's; keep_both keeps both and records a conflict"
)

Namespace = Annotated[
    str | None,
    Field(
        description="the namespace to act in; leave it out to use the default: the "
        "server's --namespace over stdio, over HTTP the one namespace the key is granted "
        "(a key granted several must name one)"
    ),
]
At = Annotated[
    str,
    Field(
        description="the anchor: an event id or a branch name; only memories whose "
        "sources all lie on its path (itself and its ancestors) are visible"
    ),
]
EventId = Annotated[str, Field(description="the event's id (unique in its namespace)")]
NewEventId = Annotated[
    str, Field(description="an id for the new event, unique in its namespace (e.g. msg-42)")
]
Content = Annotated[str, Field(description="the text of the message or memory")]
Parent = Annotated[
    str | list[str] | None,
    Field(
        description="the event it follows: an event id (usually the previous message), "
        "a list of ids for a merge, none for the first message of a conversation"
    ),
]
RoleArg = Annotated[Role, Field(description="who wrote the message")]
KindArg = Annotated[Kind, Field(description=_KINDS)]
Sources = Annotated[
    list[str] | None,
    Field(
        description="ids of the events the memory was derived from; it is visible only "
        "where all of them are on the path (pass either sources or branch)"
    ),
]
Branch = Annotated[str | None, Field(description="a branch name: write under its head")]
BranchName = Annotated[str, Field(description="the branch's name")]
Key = Annotated[
    str | None,
    Field(description="a slot the memory fills (e.g. city); merges compare memories by key"),
]
Importance = Annotated[float, Field(ge=0, le=1, description="from 0 to 1 (default 0.5)")]
Query = Annotated[str, Field(description="what to search for, in words")]
K = Annotated[int, Field(ge=0, description="how many hits at most")]
Hops = Annotated[int, Field(ge=0, description="how many visible edges away to walk")]
Entity = Annotated[str, Field(description="an entity's name, as edges or memories name it")]
MemoryId = Annotated[str, Field(description="the memory's id (as remember returned it)")]
OptionalQuery = Annotated[
    str | None, Field(description="ranks the memories for this question; none: by recency")
]
Ref = Annotated[str, Field(description="a branch name or an event id")]
StrategyArg = Annotated[Strategy, Field(description=_STRATEGIES)]
FastForward = Annotated[
    bool, Field(description="move the head instead of writing a merge event when it can")
]
ExpectedHead = Annotated[
    str | None,
    Field(description="refuse unless the branch's head is still this event (compare-and-set)"),
]
SnapshotName = Annotated[str, Field(description="a name for the snapshot (never moves)")]
To = Annotated[str, Field(description="a snapshot name or an event id the branch held")]
Anchors = Annotated[
    str | list[str], Field(description="an event id or branch name; a list is a scope chain")
]
ConflictId = Annotated[str, Field(description="the conflict's id, from the conflicts tool")]
Keep = Annotated[str, Field(description="the id of the conflict's memory to keep")]
Limit = Annotated[int, Field(ge=1, description="how many events a page holds at most")]
Cursor = Annotated[
    str | None, Field(description="the cursor a previous page answered, for the next page")
]
ParentId = Annotated[
    str | None, Field(description="the event whose children to list; none: the roots")
]
