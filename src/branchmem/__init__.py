"""branchmem: memory for LLM agents and chat apps whose history is a tree.

A derived memory is visible at an anchor only if every one of its source
events is the anchor or one of its ancestors. Start with `Store`.
"""

from .errors import (
    BranchmemError,
    ConflictingEvent,
    ConflictingRecord,
    CycleError,
    InvalidInput,
    NameClash,
    NotFound,
    StorageError,
    UnknownAnchor,
    UnknownBranch,
    UnknownEvent,
    UnknownMemory,
)
from .model import KINDS, Branch, Event, Explanation, Memory, SourceStatus
from .store import Store

__all__ = [
    "KINDS",
    "Branch",
    "BranchmemError",
    "ConflictingEvent",
    "ConflictingRecord",
    "CycleError",
    "Event",
    "Explanation",
    "InvalidInput",
    "Memory",
    "NameClash",
    "NotFound",
    "SourceStatus",
    "StorageError",
    "Store",
    "UnknownAnchor",
    "UnknownBranch",
    "UnknownEvent",
    "UnknownMemory",
]

__version__ = "0.1.0"
