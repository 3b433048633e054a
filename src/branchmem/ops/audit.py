"""The audit log: one append-only line per write, merge, rollback, resolve,
archive, restore and purge, with its time, optional actor, operation and ids.

Lines are written inside the same transaction as the change they describe
(`log`), so the log never claims a change that did not land, nor misses one
that did. A purge logs the ids it removed, never their content.
"""

from __future__ import annotations

from ..branch_types import AuditEntry
from ..engine import Engine
from ..validate import check_namespace, check_time


def log(engine: Engine, ns: str, op: str, ids: list[str], actor: str | None, now: float) -> None:
    """Write an audit line, inside the caller's transaction. On a redacting store
    the actor is redacted, and so are the ids (ids stored through it hold nothing
    to redact; one written before it was given a redactor, being purged, must not
    be logged again)."""
    if engine.scrub is not None:
        actor = actor and engine.redact(actor)
        ids = [engine.redact(i) for i in ids]
    engine.backend.add_audit(ns, [AuditEntry(now, op, tuple(ids), actor, ns)])


def audit(engine: Engine, namespace: str, since: float | None) -> list[AuditEntry]:
    """`Store.audit`."""
    ns = check_namespace(namespace)
    low = check_time(since, "since")
    with engine.backend.reading():
        return engine.backend.audit(ns, low)
