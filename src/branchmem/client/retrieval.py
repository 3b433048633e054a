"""Search, context, extraction and the lifecycle over the HTTP API.

Plans (`wire.Plan`), one per `Store` method of the same name, that
`RemoteStore` and `AsyncRemoteStore` run (`surface`). ``namespace=None`` is the
connection's own. The embedder, tokenizer, query log and extractor are the
server's: a call that names one is refused rather than silently ignored.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ..context import Context
from ..errors import InvalidInput
from ..model import Memory
from ..retrieval import options as spec
from ..retrieval.hit import Hit
from ..validate import check_anchors
from . import decode
from .wire import Plan, call

OPTIONS = frozenset(o.name for o in spec.SEARCH) - {"query", "at", "k", "namespace"}
"""`RemoteStore.search`'s keywords after ``namespace`` (and `RemoteStore.context`'s)."""
SERVED = frozenset(spec.served(spec.SEARCH)) & OPTIONS
"""The ones sent per search; the others are the server's (``branchmem serve``)."""


def search(
    namespace: str | None,
    query: str,
    at: str | Sequence[str] | None,
    k: int,
    options: dict[str, Any],
) -> Plan[list[Hit]]:
    for option in sorted(OPTIONS - SERVED):
        if options.get(option) is not None:
            raise InvalidInput(
                f"{option}= is not sent per search over HTTP (what ranks and logs a search "
                "is chosen by the server, branchmem serve; scope_weights is not served); "
                "leave it out"
            )
    anchors = at if at is None or isinstance(at, str) else check_anchors(at)
    given = {key: v for key, v in options.items() if v is not None and v is not False}
    spec.check_served({"k": k, **given})
    if isinstance(given.get("kind"), (tuple, set, frozenset)):
        given["kind"] = list(given["kind"])
    body = {"query": query, "at": anchors, "k": k, **given}
    return [
        decode.hit(h) for h in (yield from call("POST", namespace, "search", json=body))["hits"]
    ]


def touch(namespace: str | None, ids: Iterable[str], now: float | None) -> Plan[None]:
    if isinstance(ids, str):
        raise InvalidInput("touch() takes a list of memory ids, e.g. touch([m.id])")
    (yield from call("POST", namespace, "touch", json={"ids": list(ids), "now": now}))


def score(namespace: str | None, memory_id: str, now: float | None) -> Plan[float]:
    d = yield from call("GET", namespace, "memories", memory_id, "score", params={"now": now})
    return float(d["score"])


def archive_expired(namespace: str | None, now: float | None) -> Plan[list[str]]:
    return list((yield from call("POST", namespace, "archive", json={"now": now}))["ids"])


def restore(namespace: str | None, memory_id: str) -> Plan[Memory]:
    return Memory.from_dict((yield from call("POST", namespace, "memories", memory_id, "restore")))


def extract(namespace: str | None, at: str, extractor: Any, window: int) -> Plan[list[Memory]]:
    """With the server's offline rule extractor."""
    if extractor is not None:
        raise InvalidInput("extractor= is the server's, not per call; leave it out")
    d = yield from call("POST", namespace, "extract", json={"at": at, "window": window})
    return [Memory.from_dict(m) for m in d["memories"]]


def context(
    namespace: str | None,
    at: str | Sequence[str] | None,
    *,
    query: str | None,
    window: int | None,
    k: int | None,
    search_options: dict[str, Any],
) -> Plan[Context]:
    if any(v is not None for v in search_options.values()):
        raise InvalidInput("search options are the server's, not per call; leave them out")
    anchors = [at] if isinstance(at, str) else None if at is None else check_anchors(at)
    params = {"at": anchors, "query": query, "window": window, "k": k}
    d = yield from call("GET", namespace, "context", params=params)
    chain = tuple(d["at"]) if isinstance(d["at"], list) else d["at"]
    mems = [Memory.from_dict(m) for m in d["memories"]]
    return Context(chain, [dict(m) for m in d["messages"]], mems, d["query"])
