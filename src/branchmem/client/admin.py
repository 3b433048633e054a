"""Erasure and the audit log over the HTTP API (both need an admin grant).

Plain functions of a `Connection`, one per `Store` method of the same name;
`branchmem.client.RemoteStore` calls them. ``namespace=None`` is the
connection's own.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..branch_types import AuditEntry
from . import decode
from .connection import Connection


def purge(
    c: Connection,
    namespace: str | None,
    events: Sequence[str],
    memories: Sequence[str],
    whole_namespace: bool,
) -> list[str]:
    body: dict[str, Any] = {"events": list(events), "memories": list(memories)}
    body["whole_namespace"] = whole_namespace
    return list(c.send("POST", namespace, "purge", json=body)["removed"])


def audit(c: Connection, namespace: str | None, since: float | None) -> list[AuditEntry]:
    return [decode.audit_entry(d) for d in c.all("entries", namespace, "audit", since=since)]
