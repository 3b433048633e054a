"""The one exception tree of branchmem.

::

    BranchmemError
    ├── InvalidInput (ValueError)          bad argument: empty id, unknown kind, ...
    │   ├── CycleError                     an event would be its own ancestor
    │   ├── ConflictingEvent               an id re-added with other fields
    │   ├── ConflictingRecord              a record id re-added with other fields
    │   ├── NameClash                      a branch name equal to an event id
    │   ├── BranchExists                   create_branch() of a name already in use
    │   ├── SnapshotExists                 a snapshot name already names another event
    │   ├── NotAnAncestor                  rollback() to an event the branch never held
    │   └── ConflictClosed                 resolve() of a conflict not open on the branch
    ├── NotFound (KeyError)                an id or name that names nothing known
    │   ├── UnknownEvent
    │   ├── UnknownMemory
    │   ├── UnknownBranch
    │   ├── UnknownSnapshot
    │   ├── UnknownConflict
    │   ├── UnknownNamespace               a namespace that holds nothing
    │   ├── UnknownEntity                  a name no visible edge or record names
    │   └── UnknownAnchor                  `at=` names no event and no branch
    ├── BranchConflict (RuntimeError)      a branch head moved under a compare-and-set
    ├── StorageError                       the backend failed (driver error, foreign file)
    │   ├── StoreLocked (TimeoutError)     another process held the write lock too long
    │   └── ReadOnlyStore (PermissionError) a write to a store opened read-only
    ├── EmbeddingError                     an embedder failed (endpoint down, bad answer)
    ├── EmbeddingPending                   a vector search needs vectors not made yet (503)
    └── ExtractionError                    an extractor failed (bad model reply, timeout)

    BranchmemWarning (UserWarning)         accepted, but probably not what was meant
    ├── UnknownParents                     events stored waiting for parents not stored
    └── UnknownSources                     records stored hidden: sources not in the tree

Every leaf also subclasses the natural built-in, so ``except KeyError`` keeps
working for callers who do not know about branchmem. Errors carry the ids
involved as attributes.

A write whose parents or sources are not in the tree yet is accepted (they may
arrive later; until then what waits stays hidden, failing closed) and says so
with a warning through Python's `warnings` (`branchmem.caught_warnings` collects
them per call instead; a served store sends them in the response's ``warnings``).
``warnings.simplefilter("error", UnknownSources)`` turns them into errors.
"""

from __future__ import annotations


class BranchmemError(Exception):
    """Root of every error branchmem raises on purpose."""

    #: The HTTP status a served store answers with (the nearest class's wins).
    http_status = 500


class InvalidInput(BranchmemError, ValueError):
    """An argument is malformed; the message says what to pass instead."""

    http_status = 422


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
    """An event id was re-added with a different parent, role, content or meta
    (``in_batch``: the id came twice in one batch)."""

    def __init__(
        self, event_id: str, namespace: str, field: str, *, in_batch: bool = False
    ) -> None:
        self.event_id = event_id
        self.namespace = namespace
        self.field = field
        self.in_batch = in_batch
        said = (
            f"is repeated in the batch with a different {field}; give each event of "
            "a batch its own id"
            if in_batch
            else f"already exists with a different {field}; events are immutable, so add "
            "the change as a new event with a new id"
        )
        super().__init__(f"event {event_id!r} in namespace {namespace!r} {said}")


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


class BranchExists(InvalidInput):
    """`create_branch` was given a name that already names a branch."""

    def __init__(self, name: str, namespace: str, head: str) -> None:
        self.name = name
        self.namespace = namespace
        self.head = head
        super().__init__(
            f"branch {name!r} already exists in namespace {namespace!r} (head {head!r}); "
            "pick another name, or use rollback() or set_branch() to move it"
        )


class SnapshotExists(InvalidInput):
    """A snapshot name is immutable: it already names another event."""

    def __init__(self, name: str, namespace: str, event_id: str) -> None:
        self.name = name
        self.namespace = namespace
        self.event_id = event_id
        super().__init__(
            f"snapshot {name!r} in namespace {namespace!r} already names event "
            f"{event_id!r}; snapshots never move, so pick another name"
        )


class NotAnAncestor(InvalidInput):
    """`rollback` was asked to move a head somewhere it may not go."""

    def __init__(self, branch: str, namespace: str, target: str) -> None:
        self.branch = branch
        self.namespace = namespace
        self.target = target
        super().__init__(
            f"cannot roll branch {branch!r} in namespace {namespace!r} to {target!r}: it is "
            "neither an ancestor of the head nor a head the branch held before; "
            "use merge() to bring in other work, or create_branch() to start from it"
        )


class ConflictClosed(InvalidInput):
    """`resolve` of a conflict that is not open at the branch's head."""

    def __init__(self, conflict_id: str, branch: str, namespace: str) -> None:
        self.conflict_id = conflict_id
        self.branch = branch
        self.namespace = namespace
        super().__init__(
            f"conflict {conflict_id!r} is not open on branch {branch!r} in namespace "
            f"{namespace!r} (already resolved there, or not visible from its head); "
            "see conflicts(at=branch) for the open ones"
        )


class NotFound(BranchmemError, KeyError):
    """Something named by id does not exist."""

    http_status = 404

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0]) if self.args else ""


class UnknownEvent(NotFound):
    """No event with this id in the namespace."""

    def __init__(self, event_id: str, namespace: str) -> None:
        self.event_id = event_id
        self.namespace = namespace
        super().__init__(f"no event {event_id!r} in namespace {namespace!r}")


class UnknownMemory(NotFound):
    """No record with this id in the namespace."""

    def __init__(self, memory_id: str, namespace: str) -> None:
        self.memory_id = memory_id
        self.namespace = namespace
        super().__init__(
            f"no memory {memory_id!r} in namespace {namespace!r}; "
            "use the id returned by add_memory()"
        )


class UnknownEntity(NotFound):
    """No visible edge names this entity at the anchor, and no visible record mentions it."""

    def __init__(self, name: str, at: object, namespace: str) -> None:
        self.name = name
        self.at = at
        self.namespace = namespace
        if at is None or at == [] or at == ():  # no anchor: nothing is visible
            super().__init__(
                f"no anchor, no entities: {name!r} is not visible in a graph read with "
                "at=None; pass at= an event id or a branch name"
            )
            return
        super().__init__(
            f"no visible edge or record names {name!r} at {at!r} in namespace {namespace!r}; "
            "graph(at=...).entities() lists the entities there"
        )


class UnknownBranch(NotFound):
    """No branch with this name in the namespace."""

    def __init__(self, name: str, namespace: str) -> None:
        self.name = name
        self.namespace = namespace
        super().__init__(
            f"no branch {name!r} in namespace {namespace!r}; create_branch() creates one"
        )


class UnknownNamespace(NotFound):
    """The namespace holds nothing (nothing was ever written to it, or it was purged)."""

    def __init__(self, namespace: str) -> None:
        self.namespace = namespace
        super().__init__(
            f"namespace {namespace!r} holds nothing; check its spelling "
            "(namespaces are case-sensitive)"
        )


class UnknownAnchor(NotFound):
    """`at=` (or a branch argument) names neither an event nor a branch."""

    def __init__(self, at: str, namespace: str) -> None:
        self.at = at
        self.namespace = namespace
        super().__init__(
            f"{at!r} names no event and no branch in namespace {namespace!r}; "
            "pass an event id or a branch name of that namespace"
        )


class UnknownSnapshot(NotFound):
    """No snapshot (or event) with this name in the namespace."""

    def __init__(self, name: str, namespace: str) -> None:
        self.name = name
        self.namespace = namespace
        super().__init__(
            f"no snapshot or event {name!r} in namespace {namespace!r}; "
            "snapshot(branch, name) creates one"
        )


class UnknownConflict(NotFound):
    """No conflict record with this id in the namespace."""

    def __init__(self, conflict_id: str, namespace: str) -> None:
        self.conflict_id = conflict_id
        self.namespace = namespace
        super().__init__(
            f"no conflict {conflict_id!r} in namespace {namespace!r}; "
            "use an id from conflicts(at=...)"
        )


class BranchConflict(BranchmemError, RuntimeError):
    """A branch head moved between reading it and writing under it.

    Raised when ``expected_head=`` no longer matches; read the head again
    (`Store.branch_head`) and retry.
    """

    http_status = 409

    def __init__(self, name: str, namespace: str, expected: str | None, actual: str) -> None:
        self.name = name
        self.namespace = namespace
        self.expected = expected
        self.actual = actual
        super().__init__(
            f"branch {name!r} in namespace {namespace!r} is at {actual!r}, not the expected "
            f"{expected!r}: another writer moved it; read branch_head() again and retry"
        )


class StorageError(BranchmemError):
    """The storage backend failed; the message carries the driver's reason."""

    http_status = 503


class EmbeddingError(BranchmemError):
    """An embedder failed (an endpoint down or answering badly, a wrong dimension)."""

    http_status = 502


class EmbeddingPending(BranchmemError):
    """A vector-only search found more records without a vector than it may embed
    itself (``max_embed=``). ``pending`` is how many are still waiting;
    ``retry_after`` how many seconds until they may be done (a served store sends it
    as ``Retry-After``). A hybrid search ranks such records by keyword instead."""

    http_status = 503

    def __init__(
        self, namespace: str, pending: int, retry_after: float, where: str = "visible here"
    ) -> None:
        self.namespace = namespace
        self.pending = pending
        self.retry_after = retry_after
        super().__init__(
            f"{pending} records {where} in namespace {namespace!r} have no vector yet, "
            f"more than this search may embed itself; retry in about {retry_after:g} s, "
            'or search with mode="hybrid" (they are ranked by keyword until embedded)'
        )


class ExtractionError(BranchmemError):
    """An extractor failed: a model's reply that is not the promised JSON, an
    endpoint that timed out or answered with an HTTP error, or an extractor
    that returned something other than proposals. ``reply`` holds the first
    200 characters of what came back (``""`` when nothing did)."""

    http_status = 502

    def __init__(self, message: str, reply: str = "") -> None:
        self.reply = reply[:200]
        super().__init__(message + (f"; the reply began: {self.reply!r}" if self.reply else ""))


class StoreLocked(StorageError, TimeoutError):
    """Another connection held the store's write lock for longer than ``busy_timeout``."""

    def __init__(self, path: str, waited: float) -> None:
        self.path = path
        self.waited = waited
        super().__init__(
            f"SQLite store {path!r} is locked: another process (or another Store on this "
            f"file) held its write lock for over {waited:g} s. Retry, or open the store "
            "with a longer busy_timeout=, and keep write transactions short"
        )


class ReadOnlyStore(StorageError, PermissionError):
    """A write to a store opened with ``readonly=True``."""

    def __init__(self, path: str) -> None:
        self.path = path
        super().__init__(
            f"store {path!r} was opened read-only (readonly=True); open it without "
            "readonly=True to write"
        )


class BranchmemWarning(UserWarning):
    """Root of the warnings of a write that was accepted but is probably not what
    was meant. ``ids``: the items written that stay hidden; ``unknown``: the ids
    they wait for."""

    def __init__(
        self, message: str, namespace: str, ids: tuple[str, ...], unknown: tuple[str, ...]
    ) -> None:
        self.namespace = namespace
        self.ids = ids
        self.unknown = unknown
        super().__init__(message)

    def to_dict(self) -> dict[str, object]:
        """The JSON shape a served store answers with, in ``warnings``."""
        return {
            "warning": type(self).__name__,
            "message": str(self),
            "namespace": self.namespace,
            "ids": list(self.ids),
            "unknown": list(self.unknown),
        }


def _listed(ids: tuple[str, ...], most: int = 5) -> str:
    shown = ", ".join(repr(i) for i in ids[:most])
    return shown + (f" and {len(ids) - most} more" if len(ids) > most else "")


class UnknownParents(BranchmemWarning):
    """Events were stored under parents that are not in the tree (not stored, or
    stored and waiting themselves): they wait, hidden, until those arrive."""

    def __init__(self, namespace: str, ids: tuple[str, ...], unknown: tuple[str, ...]) -> None:
        super().__init__(
            f"{len(ids)} event(s) in namespace {namespace!r} ({_listed(ids)}) wait for "
            f"parent(s) not in the tree: {_listed(unknown)}; they stay hidden, with what "
            "is derived from them, until those events are added (check the parent ids)",
            namespace,
            ids,
            unknown,
        )


class UnknownSources(BranchmemWarning):
    """Records were stored with sources that are not in the tree (not stored, or
    stored and waiting for a parent): they stay hidden at every anchor until those
    arrive and connect."""

    def __init__(self, namespace: str, ids: tuple[str, ...], unknown: tuple[str, ...]) -> None:
        super().__init__(
            f"{len(ids)} record(s) in namespace {namespace!r} ({_listed(ids)}) name "
            f"source(s) not in the tree: {_listed(unknown)}; they stay hidden at every "
            "anchor until those events are added and connected (check the source ids; "
            "explain() says which source each waits for)",
            namespace,
            ids,
            unknown,
        )
