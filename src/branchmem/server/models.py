"""Request and response bodies of the HTTP API (pydantic), so /openapi.json
names every field. Responses are the ``to_dict()`` of the library's frozen
dataclasses; these models only describe them."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..validate import MAX_INT
from .schema import META, Anchor, Id, Name, Query, Text

Role = Literal["user", "assistant", "tool", "system", "note"]
Kind = Literal["episodic", "semantic", "procedural", "working"]
ReadKind = Literal["episodic", "semantic", "procedural", "working", "edge"]
Mode = Literal["hybrid", "keyword", "vector"]
Strategy = Literal["append", "overwrite", "keep_both"]
Meta = dict[str, Any] | None
Ids = list[Id]
Sources = Field(min_length=1, description="event ids (at least one)")
Importance = Field(0.5, ge=0.0, le=1.0)


class _In(BaseModel):
    model_config = ConfigDict(extra="forbid")


# ---------------------------------------------------------------- requests
class EventIn(_In):
    id: Id
    parent: Id | Ids | None = None
    role: Role = "user"
    content: Text = ""
    meta: Meta = Field(None, description=META)
    branch: Name | None = Field(None, description="append under this branch's head (one event)")
    expected_head: Id | None = None


class EventsIn(_In):
    events: list[EventIn] = Field(min_length=1)


class MemoryIn(_In):
    content: Text
    sources: Ids | None = Field(
        None, min_length=1, description="event ids; omit for a branch write"
    )
    kind: Kind = "semantic"
    key: Id | None = None
    importance: float = Importance
    meta: Meta = Field(None, description=META)
    id: Id | None = None
    expires_at: float | None = None
    valid_from: float | None = None
    valid_to: float | None = None
    branch: Name | None = Field(None, description="write on this branch (remember)")
    event_id: Id | None = None
    role: Role | None = None
    expected_head: Id | None = None


class MemoriesIn(_In):
    memories: list[MemoryIn] = Field(min_length=1)


class RetractIn(_In):
    sources: Ids = Sources
    id: Id | None = None


class SupersedeIn(_In):
    content: Text
    sources: Ids = Sources
    kind: Kind | None = None
    key: Id | None = None
    importance: float | None = Field(None, ge=0.0, le=1.0)
    meta: Meta = Field(None, description=META)
    id: Id | None = None
    expires_at: float | None = None
    valid_from: float | None = None
    valid_to: float | None = None


class SearchIn(_In):
    query: Query
    at: Anchor | list[Anchor] | None
    k: int = Field(10, ge=1)
    mode: Mode | None = None
    kind: Kind | list[Kind] | None = None
    key_prefix: str | None = None
    meta: Meta = Field(None, description="fields the records' meta must equal; " + META)
    now: float | None = None
    as_of: float | None = None
    explain: bool = False
    hops: int | None = Field(None, ge=0, le=8, description="follow the relation graph")
    min_score: float | None = Field(None, ge=0, le=1, description="lowest confidence kept")
    cutoff: Literal["ratio", "knee", "off"] | None = None
    filter: dict[str, Any] | None = Field(
        None, description='conditions, e.g. {"meta.topic": {"$in": ["food"]}}'
    )


class ExtractIn(_In):
    at: Anchor
    window: int = Field(8, ge=1, le=MAX_INT)


class BranchIn(_In):
    name: Name
    at: Anchor


class HeadIn(_In):
    to: Id
    expected_head: Id | None = None


class MergeIn(_In):
    source: Anchor
    into: Name
    strategy: Strategy = "append"
    fast_forward: bool = True
    event_id: Id | None = None
    expected_head: Id | None = None


class ResolveIn(_In):
    keep: Id
    branch: Name
    expected_head: Id | None = None


class SnapshotIn(_In):
    branch: Name
    name: Name


class RollbackIn(_In):
    branch: Name
    to: Id = Field(description="a snapshot name or an event id")
    expected_head: Id | None = None


class TouchIn(_In):
    ids: Ids
    now: float | None = None


class ArchiveIn(_In):
    now: float | None = None


class PruneIn(_In):
    prefix: Name
    older_than: float
    now: float | None = None


class PurgeIn(_In):
    events: Ids = []
    memories: Ids = []
    whole_namespace: bool = False


# --------------------------------------------------------------- responses
class WarningOut(BaseModel):
    """A write accepted but probably not meant: what stays hidden, and why."""

    warning: str = Field(description="UnknownParents or UnknownSources")
    message: str
    namespace: str
    ids: list[str] = Field(description="the items written that stay hidden")
    unknown: list[str] = Field(description="the parents or sources not in the tree")


_WARNINGS: Any = Field(
    default_factory=list,
    description="parents or sources named that are not in the tree: the write is "
    "stored, and what waits for them stays hidden until they arrive",
)


class EventOut(BaseModel):
    id: str
    parent: str | list[str] | None
    role: str
    content: str
    namespace: str
    meta: dict[str, Any] | None
    created_at: float


class MemoryOut(BaseModel):
    id: str
    content: str
    sources: list[str]
    kind: str
    key: str | None
    importance: float
    namespace: str
    meta: dict[str, Any] | None
    target: str | None
    created_at: float
    seq: int
    via: str | None
    expires_at: float | None
    valid_from: float | None
    valid_to: float | None


class WrittenMemoryOut(MemoryOut):
    warnings: list[WarningOut] = _WARNINGS


class SourceStatusOut(BaseModel):
    event_id: str
    state: str


class ExplanationOut(BaseModel):
    memory_id: str
    at: str | None
    visible: bool
    reason: str
    sources: list[SourceStatusOut]
    hidden_by: list[str]
    hidden_by_time: str | None


class HitExplanationOut(BaseModel):
    visibility: ExplanationOut
    scoring: str
    keyword_rank: int | None
    vector_rank: int | None
    relevance: float
    vector_pending: bool = Field(
        False, description="no vector yet (past the search's embedding budget): keyword only"
    )
    cutoff: str = Field("", description="why the relevance cut-off kept the hit")


class HitOut(BaseModel):
    memory: MemoryOut
    score: float
    via: str
    parts: dict[str, float]
    explanation: HitExplanationOut | None = None
    confidence: float = Field(0.0, description="calibrated match in [0, 1]")


class BranchOut(BaseModel):
    name: str
    head: str
    namespace: str
    fork_point: str | None
    parent: str | None
    created_at: float
    updated_at: float
    memories: int | None


class MergeOut(BaseModel):
    source: str
    into: str
    strategy: str
    head: str
    event: str | None
    fast_forward: bool
    noop: bool
    added: int
    overwritten: int
    conflicts: int
    conflict_ids: list[str]


class ConflictOut(BaseModel):
    id: str
    key: str
    members: list[str]
    event: str
    namespace: str
    created_at: float


class SnapshotOut(BaseModel):
    name: str
    branch: str
    event: str
    namespace: str
    created_at: float


class HeadMoveOut(BaseModel):
    branch: str
    from_head: str | None
    to_head: str | None
    why: str
    actor: str | None
    at: float
    namespace: str


class AuditEntryOut(BaseModel):
    at: float
    op: str
    ids: list[str]
    actor: str | None
    namespace: str
    seq: int


class _Paged(BaseModel):
    next_offset: int | None = Field(None, description="pass as offset= for the next page")


class EventsOut(_Paged):
    events: list[EventOut]


class WrittenEventsOut(EventsOut):
    warnings: list[WarningOut] = _WARNINGS


class MemoriesOut(_Paged):
    memories: list[MemoryOut]


class WrittenMemoriesOut(MemoriesOut):
    warnings: list[WarningOut] = _WARNINGS


class InspectedOut(BaseModel):
    memory: MemoryOut
    visible: bool = Field(description="shown by reads at the anchor now (the gate and time)")
    gate: bool = Field(description="the gate's answer alone, as `explain` gives it")
    reason: str
    hidden_by_time: str | None


class InspectOut(_Paged):
    memories: list[InspectedOut]


class MessageOut(BaseModel):
    role: str
    content: str


class ContextOut(BaseModel):
    at: str | list[str] | None
    query: str | None
    messages: list[MessageOut]
    memories: list[MemoryOut]
    text: str = Field(description="one prompt block: the memories, then the conversation")


class HitsOut(BaseModel):
    hits: list[HitOut]


class VisibleOut(BaseModel):
    visible: bool


class BranchesOut(_Paged):
    branches: list[BranchOut]


class ConflictsOut(_Paged):
    conflicts: list[ConflictOut]


class SnapshotsOut(_Paged):
    snapshots: list[SnapshotOut]


class HistoryOut(_Paged):
    moves: list[HeadMoveOut]


class AuditOut(_Paged):
    entries: list[AuditEntryOut]


class IdsOut(BaseModel):
    ids: list[str]


class ScoreOut(BaseModel):
    score: float


class PurgeOut(BaseModel):
    removed: list[str]


class DeletedOut(BaseModel):
    deleted: str


class MeOut(BaseModel):
    principal: str
    grants: list[str] = Field(description="NAMESPACE:ROLE[:branch=GLOB], namespace may be a glob")


class HealthOut(BaseModel):
    status: str
    version: str


class ErrorBody(BaseModel):
    type: str = Field(description="the exception class, e.g. UnknownAnchor")
    message: str
    detail: dict[str, Any]


class ErrorOut(BaseModel):
    error: ErrorBody
