"""The one exception tree of branchmem.

::

    BranchmemError
    ├── InvalidInput (ValueError)          bad argument: empty id, unknown kind, ...
    │   ├── CycleError                     an event would be its own ancestor
    │   ├── ConflictingEvent               an id re-added with other fields
    │   ├── ConflictingRecord              a record id re-added with other fields
    │   └── NameClash                      a branch name equal to an event id
    ├── NotFound (KeyError)                an id or name that names nothing known
    │   ├── UnknownEvent
    │   ├── UnknownMemory
    │   ├── UnknownBranch
    │   └── UnknownAnchor                  `at=` names no event and no branch
    └── StorageError                       the backend failed (driver error, locked file)

Every leaf also subclasses the natural built-in, so ``except KeyError`` keeps
working for callers who do not know about branchmem. Errors carry the ids
involved as attributes.
"""

from __future__ import annotations


class BranchmemError(Exception):
    """Root of every error branchmem raises on purpose."""


class InvalidInput(BranchmemError, ValueError):
    """An argument is malformed; the message says what to pass instead."""


class CycleError(InvalidInput):
    """Adding the event would make it its own ancestor."""

    def __init__(self, event_id: str, namespace: str) -> None:
        self.event_id = event_id
        self.namespace = namespace
        super().__init__(
            f"event {event_id!r} in namespace {namespace!r} would be its own ancestor "
            "(its parents lead back to it); events form a DAG, so give it a parent "
            "that does not descend from it"
        )


class ConflictingEvent(InvalidInput):
    """An event id was re-added with a different parent, role, content or meta."""

    def __init__(self, event_id: str, namespace: str, field: str) -> None:
        self.event_id = event_id
        self.namespace = namespace
        self.field = field
        super().__init__(
            f"event {event_id!r} in namespace {namespace!r} already exists with a different "
            f"{field}; events are immutable, so add the change as a new event with a new id"
        )


class ConflictingRecord(InvalidInput):
    """A record id was re-added with different fields."""

    def __init__(self, record_id: str, namespace: str) -> None:
        self.record_id = record_id
        self.namespace = namespace
        super().__init__(
            f"record {record_id!r} in namespace {namespace!r} already exists with other "
            "fields; records are immutable, so use supersede() to replace it"
        )


class NameClash(InvalidInput):
    """A branch name equal to an event id of the same namespace (or the reverse)."""

    def __init__(self, name: str, namespace: str, what: str) -> None:
        self.name = name
        self.namespace = namespace
        super().__init__(
            f"{name!r} in namespace {namespace!r} already names {what}; `at=` must stay "
            "unambiguous, so pick another name"
        )


class NotFound(BranchmemError, KeyError):
    """Something named by id does not exist."""

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0]) if self.args else ""


class UnknownEvent(NotFound):
    def __init__(self, event_id: str, namespace: str) -> None:
        self.event_id = event_id
        self.namespace = namespace
        super().__init__(f"no event {event_id!r} in namespace {namespace!r}")


class UnknownMemory(NotFound):
    def __init__(self, memory_id: str, namespace: str) -> None:
        self.memory_id = memory_id
        self.namespace = namespace
        super().__init__(
            f"no memory {memory_id!r} in namespace {namespace!r}; "
            "use the id returned by add_memory()"
        )


class UnknownBranch(NotFound):
    def __init__(self, name: str, namespace: str) -> None:
        self.name = name
        self.namespace = namespace
        super().__init__(f"no branch {name!r} in namespace {namespace!r}; set_branch() creates one")


class UnknownAnchor(NotFound):
    def __init__(self, at: str, namespace: str) -> None:
        self.at = at
        self.namespace = namespace
        super().__init__(
            f"`at={at!r}` names no event and no branch in namespace {namespace!r}; "
            "pass an event id or a branch name of that namespace"
        )


class StorageError(BranchmemError):
    """The storage backend failed; the message carries the driver's reason."""
