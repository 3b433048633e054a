"""Request and response bodies of the HTTP API (pydantic), so /openapi.json
names every field. Responses are the ``to_dict()`` of the library's frozen
dataclasses; these models only describe them."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, create_model


class _In(BaseModel):
    model_config = ConfigDict(extra="forbid")


# ---------------------------------------------------------------- requests
class EventIn(_In):
    id: str
    parent: str | list[str] | None = None
    role: str = "user"
    content: str = ""
    meta: dict[str, Any] | None = None
    branch: str | None = Field(None, description="append under this branch's head (one event)")
    expected_head: str | None = None


class EventsIn(_In):
    events: list[EventIn]


class MemoryIn(_In):
    content: str
    sources: list[str] | None = Field(None, description="event ids; omit for a branch write")
    kind: str = "semantic"
    key: str | None = None
    importance: float = 0.5
    meta: dict[str, Any] | None = None
    id: str | None = None
    expires_at: float | None = None
    valid_from: float | None = None
    valid_to: float | None = None
    branch: str | None = Field(None, description="write on this branch (remember)")
    event_id: str | None = None
    role: str | None = None
    expected_head: str | None = None


class MemoriesIn(_In):
    memories: list[MemoryIn]


class RetractIn(_In):
    sources: list[str]
    id: str | None = None


class SupersedeIn(_In):
    content: str
    sources: list[str]
    kind: str | None = None
    key: str | None = None
    importance: float | None = None
    meta: dict[str, Any] | None = None
    id: str | None = None
    expires_at: float | None = None
    valid_from: float | None = None
    valid_to: float | None = None


class SearchIn(_In):
    query: str
    at: str | list[str] | None
    k: int = Field(10, ge=1)
    mode: str | None = None
    kind: str | list[str] | None = None
    key_prefix: str | None = None
    meta: dict[str, Any] | None = None
    now: float | None = None
    as_of: float | None = None
    explain: bool = False


def search_in(limits: Any) -> type[SearchIn]:
    """`SearchIn` with the server's query length in its schema (``maxLength``)."""
    cap = int(limits.max_query)
    field = Field(
        max_length=cap,
        description=f"at most {cap} characters (422 above; `branchmem serve --max-query`)",
    )
    return create_model("SearchIn", __base__=SearchIn, query=(str, field))


class ExtractIn(_In):
    at: str
    window: int = Field(8, ge=1)


class BranchIn(_In):
    name: str
    at: str


class HeadIn(_In):
    to: str
    expected_head: str | None = None


class MergeIn(_In):
    source: str
    into: str
    strategy: str = "append"
    fast_forward: bool = True
    event_id: str | None = None
    expected_head: str | None = None


class ResolveIn(_In):
    keep: str
    branch: str
    expected_head: str | None = None


class SnapshotIn(_In):
    branch: str
    name: str


class RollbackIn(_In):
    branch: str
    to: str
    expected_head: str | None = None


class TouchIn(_In):
    ids: list[str]
    now: float | None = None


class ArchiveIn(_In):
    now: float | None = None


class PruneIn(_In):
    prefix: str
    older_than: float
    now: float | None = None


class PurgeIn(_In):
    events: list[str] = []
    memories: list[str] = []
    whole_namespace: bool = False


# --------------------------------------------------------------- responses
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


class HitOut(BaseModel):
    memory: MemoryOut
    score: float
    via: str
    parts: dict[str, float]
    explanation: HitExplanationOut | None = None


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


class MemoriesOut(_Paged):
    memories: list[MemoryOut]


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
