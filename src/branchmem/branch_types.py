"""Plain frozen dataclasses returned by branch operations (merge, snapshot, history, audit)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

CONFLICT = "conflict"
"""Kind of the gated records a ``keep_both`` merge writes (never a caller's kind)."""

STRATEGIES = ("append", "overwrite", "keep_both")
"""Merge strategies, see `Store.merge`."""


@dataclass(frozen=True)
class MergeResult:
    """What a merge did.

    ``event`` is the merge event (``None`` for a no-op or a fast-forward);
    ``head`` is the target branch's head afterwards. ``added`` counts the
    memories visible at the new head that were not visible at the old one,
    ``overwritten`` the target's memories retracted by ``overwrite``,
    ``conflicts`` the conflict records written by ``keep_both``.
    """

    source: str
    into: str
    strategy: str
    head: str
    event: str | None = None
    fast_forward: bool = False
    noop: bool = False
    added: int = 0
    overwritten: int = 0
    conflicts: int = 0
    conflict_ids: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["conflict_ids"] = list(self.conflict_ids)
        return d


@dataclass(frozen=True)
class Conflict:
    """An open conflict: memories with the same ``key`` and different content
    that a ``keep_both`` merge kept side by side. ``members`` are their ids
    (the target's first); ``event`` is the merge event the conflict is sourced from.
    """

    id: str
    key: str
    members: tuple[str, ...]
    event: str
    namespace: str = "default"
    created_at: float = field(default=0.0, compare=False)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["members"] = list(self.members)
        return d


@dataclass(frozen=True)
class Snapshot:
    """An immutable name for an event: the head of ``branch`` when it was taken."""

    name: str
    branch: str
    event: str
    namespace: str = "default"
    created_at: float = field(default=0.0, compare=False)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class HeadMove:
    """One move of a branch head: ``from_head`` is ``None`` when the branch was
    created, ``to_head`` is ``None`` when it was deleted. ``why`` names the
    operation (``create``, ``remember``, ``add_event``, ``merge``, ``rollback``,
    ``resolve``, ``set``, ``delete``)."""

    branch: str
    from_head: str | None
    to_head: str | None
    why: str
    actor: str | None = None
    at: float = 0.0
    namespace: str = "default"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class AuditEntry:
    """One line of the audit log: when, who (optional), what operation, which ids.

    Purges record the ids they removed, never the removed content. ``seq``
    numbers the lines of one namespace from 1, in write order.
    """

    at: float
    op: str
    ids: tuple[str, ...]
    actor: str | None = None
    namespace: str = "default"
    seq: int = field(default=0, compare=False)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["ids"] = list(self.ids)
        return d
