"""The background work over the HTTP API: ``pending``, ``consolidate`` and
``profile``, written once as plans (`wire.Plan`) that `RemoteStore` and
`AsyncRemoteStore` run (`surface`), and why ``start_worker`` is the server's."""

from __future__ import annotations

from typing import Any

from ..backends.jobs import Job
from ..consolidate import Consolidation, Profile
from ..errors import InvalidInput
from ..model import Memory
from .doors import door
from .wire import Plan, Wire, call


def _memories(items: list[dict[str, Any]]) -> tuple[Memory, ...]:
    return tuple(Memory.from_dict(m) for m in items)


class BackgroundDoors:
    """Mixed into `surface.Surface`."""

    _c: Wire

    @door
    def pending(self, namespace: str | None = None) -> Plan[list[Job]]:
        """`Store.pending` of the served namespace (``GET .../jobs``)."""
        return [Job(**j) for j in (yield from call("GET", namespace, "jobs"))["jobs"]]

    @door
    def consolidate(
        self,
        at: str,
        *,
        namespace: str | None = None,
        contradictions: str = "recency",
        near: float = 0.8,
        embedder: Any = None,
        profile: bool = True,
        actor: str | None = None,
    ) -> Plan[Consolidation]:
        """`Store.consolidate` by the server (by rules: ``embedder`` is not sent)."""
        if embedder is not None:
            raise InvalidInput("embedder= is the server's, not per call; leave it out")
        body = {"at": at, "contradictions": contradictions, "near": near, "profile": profile}
        d = yield from call("POST", namespace, "consolidate", json=body)
        prof = d["profile"]
        return Consolidation(
            d["at"],
            _memories(d["merged"]),
            _memories(d["retractions"]),
            _memories(d["conflicts"]),
            None if prof is None else Memory.from_dict(prof),
        )

    @door
    def profile(self, at: str, *, namespace: str | None = None) -> Plan[Profile]:
        """`Store.profile` (``GET .../profile``)."""
        d = yield from call("GET", namespace, "profile", params={"at": at})
        rec = d["record"]
        return Profile(d["at"], dict(d["facts"]), None if rec is None else Memory.from_dict(rec))

    def start_worker(self, *args: Any, **kwargs: Any) -> Any:
        """A worker runs beside the store, not in a client."""
        raise InvalidInput(
            "a worker runs beside the store: start the server with `branchmem serve "
            "--worker`, or run `branchmem worker --db ...`"
        )
