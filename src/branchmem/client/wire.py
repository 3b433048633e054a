"""What goes over the wire and what comes back, without doing any I/O.

A remote call is a *plan*: a generator that yields each `Request` it needs
and is sent back the decoded JSON answer, then returns the call's result
(``Event.from_dict(...)``, a list of hits). `RemoteStore` and
`AsyncRemoteStore` run the same plans, one with `httpx.Client`, one with
`httpx.AsyncClient` (`connection`); so a request is built, checked and
decoded, and an error answer rebuilt as the store's exception, in one place.
"""

from __future__ import annotations

from collections.abc import Generator, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import quote

from ..errors import InvalidInput, StorageError
from ..notices import notify, warning_from
from ..server.errors import from_payload
from ..validate import check_anchors, check_id, check_int, check_namespace

T = TypeVar("T")


@dataclass(frozen=True)
class Request:
    """One HTTP request of a plan, under ``namespace`` (None: the connection's)."""

    method: str
    namespace: str | None
    parts: tuple[str, ...]
    json: Any = None
    params: Mapping[str, Any] | None = None


Plan = Generator[Request, Any, T]
"""A remote call: yields its requests, is sent each decoded answer, returns the result."""


def call(
    method: str,
    namespace: str | None,
    *parts: str,
    json: Any = None,
    params: Mapping[str, Any] | None = None,
) -> Plan[Any]:
    """One request; its decoded answer (``yield from call(...)``)."""
    return (yield Request(method, namespace, parts, json, params))


def pages(name: str, namespace: str | None, *parts: str, **params: Any) -> Plan[list[Any]]:
    """Every page of a paginated list (the items under ``name`` of each page)."""
    out: list[Any] = []
    offset: int | None = 0
    while offset is not None:
        body = yield Request("GET", namespace, parts, None, {**params, "offset": offset})
        out += body[name]
        offset = body.get("next_offset")
    return out


def per_namespace(name: str, rows: list[tuple[str | None, dict[str, Any]]]) -> Plan[list[Any]]:
    """POST the items of ``rows`` (namespace, item) to ``name``, one request per
    namespace; the answers come back in the order of ``rows``."""
    by_ns: dict[str | None, list[int]] = {}
    for i, (ns, _) in enumerate(rows):
        by_ns.setdefault(ns, []).append(i)
    out: list[Any] = [None] * len(rows)
    for ns, idxs in by_ns.items():
        body = yield Request("POST", ns, (name,), {name: [rows[i][1] for i in idxs]})
        for i, d in zip(idxs, body[name], strict=True):
            out[i] = d
    return out


# Arguments checked here as `Store` checks them, so that a wrong type is the
# same `InvalidInput` before a request (the server's models would coerce "3").
_WHOLE = ("k", "limit", "window", "offset", "last")


def _check_args(values: Mapping[str, Any] | None) -> None:
    for key, v in (values or {}).items():
        if v is None:
            continue
        if key == "at" and not isinstance(v, str):
            check_anchors(v)
        elif key in _WHOLE:
            check_int(v, key)


class Wire:
    """The part of a connection that does no I/O: the key it sends, the namespace
    calls default to, and how a `Request` and an answer are read."""

    def __init__(self, *, api_key: str | None, namespace: str) -> None:
        self.headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.namespace = namespace

    def url(self, namespace: str | None, *parts: str) -> str:
        """The path of ``parts`` under ``namespace`` (the default one if None)."""
        ns = self.namespace if namespace is None else check_namespace(namespace)
        tail = "/".join(quote(check_id(p, "id"), safe="") for p in parts)
        return f"/v1/namespaces/{quote(ns, safe='')}/{tail}"

    def prepare(self, r: Request) -> dict[str, Any]:
        """The keyword arguments of ``httpx`` ``request()`` for ``r``, its
        arguments checked as `Store` checks them (`InvalidInput` before sending)."""
        _check_args(r.params)
        _check_args(r.json if isinstance(r.json, dict) else None)
        clean = None if r.params is None else {k: v for k, v in r.params.items() if v is not None}
        url = self.url(r.namespace, *r.parts)
        return {"method": r.method, "url": url, "json": r.json, "params": clean}

    @staticmethod
    def answer(status: int, read_json: Any) -> Any:
        """The decoded answer, or the store's exception raised (from the one JSON
        error shape of `branchmem.server.errors`)."""
        try:
            body = read_json()
        except ValueError:
            body = None
        if status >= 400:
            raise from_payload(body, status)
        if isinstance(body, dict) and body.get("warnings"):
            for w in body["warnings"]:  # a write's, issued here as `Store` issues them
                notify(warning_from(w))
        return body

    @staticmethod
    def unreachable(exc: Exception) -> StorageError:
        return StorageError(f"the server did not answer: {exc}")

    @staticmethod
    def one_of(transport: object, http_client: object) -> None:
        if transport is not None and http_client is not None:
            raise InvalidInput(
                "pass transport= or http_client= (a client has its own transport), not both"
            )
