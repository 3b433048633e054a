"""The audit log: one append-only line per write, merge, rollback, resolve,
archive, restore and purge, with its time, optional actor, operation and ids.

Lines are written inside the same transaction as the change they describe,
so the log never claims a change that did not land, nor misses one that did.
A purge logs the ids it removed, never their content.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from .branch_types import AuditEntry
from .validate import check_namespace, check_time

if TYPE_CHECKING:
    from .store import Store


class AuditOps:
    """`Store.audit` (mixed into `Store`)."""

    def audit(self, namespace: str = "default", since: float | None = None) -> list[AuditEntry]:
        """The audit log of ``namespace``, oldest first; ``since`` keeps entries at
        or after that time.

        >>> from branchmem import Store
        >>> store = Store()
        >>> _ = store.add_event("e1")
        >>> _ = store.create_branch("main", at="e1", actor="alice")
        >>> [(a.op, a.ids, a.actor) for a in store.audit("default")][-1]
        ('create_branch', ('main', 'e1'), 'alice')
        """
        s = cast("Store", self)
        ns = check_namespace(namespace)
        low = check_time(since, "since")
        with s._b.reading():
            return s._b.audit(ns, low)
