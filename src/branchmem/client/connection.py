"""The connection under `branchmem.client.RemoteStore`: requests, errors, pages.

A `Connection` holds one `httpx.Client` (and through it one transport), the
key it sends, and the namespace calls default to. An error answer is rebuilt
as the exception the store raised, from its ``type`` (see
`branchmem.server.errors`); a server that does not answer is a `StorageError`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

import httpx

from ..errors import InvalidInput, StorageError
from ..notices import notify, warning_from
from ..server.errors import from_payload
from ..validate import check_anchors, check_id, check_int, check_namespace

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


class Connection:
    """A served store at ``url``, as one key sees it.

    ``transport`` is any `httpx.BaseTransport` (`httpx.MockTransport` in a
    test); ``http_client`` an `httpx.Client` of your own, whose base URL is
    then the one used (starlette's ``TestClient`` of an app in this process).
    """

    def __init__(
        self,
        url: str,
        *,
        api_key: str | None = None,
        namespace: str = "default",
        timeout: float = 30.0,
        transport: httpx.BaseTransport | None = None,
        http_client: httpx.Client | None = None,
    ) -> None:
        if transport is not None and http_client is not None:
            raise InvalidInput(
                "pass transport= or http_client= (a client has its own transport), not both"
            )
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        if http_client is None:
            http_client = httpx.Client(base_url=url, timeout=timeout, transport=transport)
        self._http = http_client
        self.namespace = namespace

    def close(self) -> None:
        """Close the HTTP client (and its connection pool)."""
        self._http.close()

    def url(self, namespace: str | None, *parts: str) -> str:
        """The path of ``parts`` under ``namespace`` (the default one if None)."""
        ns = self.namespace if namespace is None else check_namespace(namespace)
        tail = "/".join(quote(check_id(p, "id"), safe="") for p in parts)
        return f"/v1/namespaces/{quote(ns, safe='')}/{tail}"

    def send(
        self,
        method: str,
        namespace: str | None,
        *parts: str,
        json: Any = None,
        params: Mapping[str, Any] | None = None,
    ) -> Any:
        """One request; the decoded JSON answer, or the store's exception raised."""
        _check_args(params)
        _check_args(json if isinstance(json, dict) else None)
        clean = None if params is None else {k: v for k, v in params.items() if v is not None}
        try:
            r = self._http.request(
                method, self.url(namespace, *parts), json=json, params=clean, headers=self._headers
            )
        except httpx.HTTPError as exc:
            raise StorageError(f"the server did not answer: {exc}") from exc
        try:
            body = r.json()
        except ValueError:
            body = None
        if r.status_code >= 400:
            raise from_payload(body, r.status_code)
        if isinstance(body, dict) and body.get("warnings"):
            for w in body["warnings"]:  # a write's, issued here as `Store` issues them
                notify(warning_from(w))
        return body

    def all(self, name: str, namespace: str | None, *parts: str, **params: Any) -> list[Any]:
        """Every page of a paginated list (the items under ``name`` of each page)."""
        out: list[Any] = []
        offset: int | None = 0
        while offset is not None:
            body = self.send("GET", namespace, *parts, params={**params, "offset": offset})
            out += body[name]
            offset = body.get("next_offset")
        return out

    def post_per_namespace(
        self, name: str, rows: list[tuple[str | None, dict[str, Any]]]
    ) -> list[Any]:
        """POST the items of ``rows`` (namespace, item) to ``name``, one request per
        namespace; the answers come back in the order of ``rows``."""
        by_ns: dict[str | None, list[int]] = {}
        for i, (ns, _) in enumerate(rows):
            by_ns.setdefault(ns, []).append(i)
        out: list[Any] = [None] * len(rows)
        for ns, idxs in by_ns.items():
            done = self.send("POST", ns, name, json={name: [rows[i][1] for i in idxs]})[name]
            for i, d in zip(idxs, done, strict=True):
                out[i] = d
        return out
