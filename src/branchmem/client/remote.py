"""`RemoteStore` and `AsyncRemoteStore`: `Store`'s methods over a served store's
HTTP API, blocking and awaitable. Both are a `surface.Surface` (each method
written once, as a plan) on a connection (`connection`) of their own kind."""

from __future__ import annotations

from typing import Any

import httpx

from ..importers.model import ImportReport
from ..validate import MAX_MESSAGE_BYTES
from .connection import AsyncConnection, Connection
from .surface import Surface
from .wire import Wire


class RemoteStore(Surface):
    """A served store, with `Store`'s methods.

    ``transport`` is any httpx transport: here `httpx.MockTransport` stands in
    for a server, to show what goes over the wire and what comes back::

    >>> import httpx
    >>> from branchmem.errors import UnknownBranch
    >>> from branchmem.server.errors import to_payload
    >>> seen = []
    >>> def server(request: httpx.Request) -> httpx.Response:
    ...     seen.append((request.method, request.url.path, request.headers["authorization"]))
    ...     name = request.url.path.rsplit("/", 1)[-1]
    ...     if name == "main":
    ...         return httpx.Response(200, json={"name": "main", "head": "e2"})
    ...     return httpx.Response(404, json=to_payload(UnknownBranch(name, "alice")))
    >>> store = RemoteStore(
    ...     "http://memory.example", api_key="bm_k", namespace="alice",
    ...     transport=httpx.MockTransport(server),
    ... )
    >>> store.branch_head("main")
    'e2'
    >>> seen
    [('GET', '/v1/namespaces/alice/branches/main', 'Bearer bm_k')]
    >>> store.branch_head("draft")  # the server's error, rebuilt as the same class
    Traceback (most recent call last):
    ...
    branchmem.errors.UnknownBranch: no branch 'draft' in namespace 'alice'; ...
    >>> store.close()

    ``http_client`` is an `httpx.Client` of your own instead (its base URL is
    the one used): starlette's ``TestClient`` serves an app in this process.
    """

    _c: Connection

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
        Wire.one_of(transport, http_client)
        if http_client is None:
            http_client = httpx.Client(base_url=url, timeout=timeout, transport=transport)
        self._c = Connection(http_client, api_key=api_key, namespace=namespace)

    def close(self) -> None:
        """Close the HTTP client (and its connection pool)."""
        self._c.close()

    def __enter__(self) -> RemoteStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def import_export(
        self,
        path: Any,
        *,
        format: str = "auto",
        namespace: str | None = None,
        progress: Any = None,
        max_message_bytes: int = MAX_MESSAGE_BYTES,
    ) -> ImportReport:
        """`Store.import_export`: the export is read here, and each conversation's
        new events go to the server in one request (then its branch is set)."""
        from ..importers import import_export

        store: Any = self  # the importers use only methods RemoteStore shares with Store
        ns = self.namespace if namespace is None else namespace
        return import_export(
            store,
            path,
            format=format,
            namespace=ns,
            progress=progress,
            max_message_bytes=max_message_bytes,
        )


class AsyncRemoteStore(Surface):
    """`RemoteStore` over `httpx.AsyncClient`: the same methods, awaited, the same
    answers and the same exception classes. ``transport`` is any
    `httpx.AsyncBaseTransport` (`httpx.ASGITransport` serves an app in this
    process); ``http_client`` an `httpx.AsyncClient` of your own. ``async with``
    closes it. `import_export` reads files and is not here: import with
    `RemoteStore` (or `branchmem import`).

    >>> import asyncio, httpx
    >>> def server(request: httpx.Request) -> httpx.Response:
    ...     return httpx.Response(200, json={"name": "main", "head": "e2"})
    >>> async def main() -> str:
    ...     transport = httpx.MockTransport(server)
    ...     async with AsyncRemoteStore("http://memory.example", transport=transport) as store:
    ...         return await store.branch_head("main")
    >>> asyncio.run(main())
    'e2'
    """

    _c: AsyncConnection

    def __init__(
        self,
        url: str,
        *,
        api_key: str | None = None,
        namespace: str = "default",
        timeout: float = 30.0,
        transport: httpx.AsyncBaseTransport | None = None,
        http_client: httpx.AsyncClient | None = None,
    ) -> None:
        Wire.one_of(transport, http_client)
        if http_client is None:
            http_client = httpx.AsyncClient(base_url=url, timeout=timeout, transport=transport)
        self._c = AsyncConnection(http_client, api_key=api_key, namespace=namespace)

    async def close(self) -> None:
        """Close the HTTP client (and its connection pool)."""
        await self._c.close()

    async def __aenter__(self) -> AsyncRemoteStore:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
