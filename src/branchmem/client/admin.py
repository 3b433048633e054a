"""Erasure and the audit log over the HTTP API (both need an admin grant).

Plans (`wire.Plan`), one per `Store` method of the same name, that
`RemoteStore` and `AsyncRemoteStore` run (`surface`). ``namespace=None`` is the
connection's own.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..branch_types import AuditEntry
from . import decode
from .wire import Plan, call, pages


def purge(
    namespace: str | None,
    events: Sequence[str],
    memories: Sequence[str],
    whole_namespace: bool,
) -> Plan[list[str]]:
    body: dict[str, Any] = {"events": list(events), "memories": list(memories)}
    body["whole_namespace"] = whole_namespace
    return list((yield from call("POST", namespace, "purge", json=body))["removed"])


def audit(namespace: str | None, since: float | None) -> Plan[list[AuditEntry]]:
    return [
        decode.audit_entry(d)
        for d in (yield from pages("entries", namespace, "audit", since=since))
    ]
