"""`RemoteStore`: `Store`'s methods over a served store's HTTP API.

Code moves between embedded and served by changing one line::

    store = Store("mem.db")
    store = RemoteStore("http://127.0.0.1:8080", api_key=KEY, namespace="alice")

Results are the same frozen dataclasses, and errors the same exception
classes (rebuilt from the error ``type`` the server answers, with their
message and ids). Needs only httpx. Differences: ``namespace`` defaults to
the one given to the constructor; ``actor=`` is accepted and ignored, since
the server records the key's principal as the actor of every write; search
takes only JSON-friendly options (``embedder`` and ``log`` are the server's).
"""

from __future__ import annotations

from collections.abc import Sequence

from .branch_types import AuditEntry
from .client_branches import RemoteBranchOps
from .client_records import RemoteRecordOps
from .client_retrieval import RemoteRetrievalOps
from .errors import BranchmemError


class RemoteStore(RemoteRecordOps, RemoteRetrievalOps, RemoteBranchOps):
    """A served store, with `Store`'s methods.

    >>> store = RemoteStore("http://127.0.0.1:8080", api_key="bm_...", namespace="alice")
    ... # doctest: +SKIP
    """

    def __enter__(self) -> RemoteStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def purge(
        self,
        *,
        events: Sequence[str] = (),
        memories: Sequence[str] = (),
        namespace: str | None = None,
        whole_namespace: bool = False,
        actor: str | None = None,
    ) -> list[str]:
        """`Store.purge` (needs an admin grant)."""
        body = {
            "events": list(events),
            "memories": list(memories),
            "whole_namespace": whole_namespace,
        }
        return list(self._send("POST", namespace, "purge", json=body)["removed"])

    def audit(self, namespace: str | None = None, since: float | None = None) -> list[AuditEntry]:
        """`Store.audit` (needs an admin grant)."""
        found = self._all("entries", namespace, "audit", since=since)
        return [AuditEntry(**{**d, "ids": tuple(d["ids"])}) for d in found]


__all__ = ["BranchmemError", "RemoteStore"]
