"""The connections under `RemoteStore` and `AsyncRemoteStore`: they run plans.

A `Connection` holds one `httpx.Client`, an `AsyncConnection` one
`httpx.AsyncClient`; each sends the requests a plan (`wire.Plan`) yields and
sends it back their answers. Everything else, the key, the default
namespace, checking arguments, reading answers and errors, is their common
`wire.Wire`: an error answer is rebuilt as the exception the store raised,
from its ``type`` (see `branchmem.server.errors`); a server that does not
answer is a `StorageError`.
"""

from __future__ import annotations

from typing import TypeVar

import httpx

from .wire import Plan, Request, Wire

T = TypeVar("T")


class Connection(Wire):
    """A served store at ``url``, as one key sees it, over `httpx.Client`.

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
        self.one_of(transport, http_client)
        super().__init__(api_key=api_key, namespace=namespace)
        if http_client is None:
            http_client = httpx.Client(base_url=url, timeout=timeout, transport=transport)
        self._http = http_client

    def close(self) -> None:
        """Close the HTTP client (and its connection pool)."""
        self._http.close()

    def send(self, r: Request) -> object:
        """One request; the decoded JSON answer, or the store's exception raised."""
        args = self.prepare(r)
        try:
            got = self._http.request(**args, headers=self.headers)
        except httpx.HTTPError as exc:
            raise self.unreachable(exc) from exc
        return self.answer(got.status_code, got.json)

    def run(self, plan: Plan[T]) -> T:
        """Run ``plan`` to its result, one request at a time."""
        try:
            r = next(plan)
            while True:
                r = plan.send(self.send(r))
        except StopIteration as done:
            result: T = done.value
            return result


class AsyncConnection(Wire):
    """`Connection` over `httpx.AsyncClient` (``transport``: an
    `httpx.AsyncBaseTransport`, such as `httpx.ASGITransport` of an app)."""

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
        self.one_of(transport, http_client)
        super().__init__(api_key=api_key, namespace=namespace)
        if http_client is None:
            http_client = httpx.AsyncClient(base_url=url, timeout=timeout, transport=transport)
        self._http = http_client

    async def close(self) -> None:
        """Close the HTTP client (and its connection pool)."""
        await self._http.aclose()

    async def send(self, r: Request) -> object:
        """One request; the decoded JSON answer, or the store's exception raised."""
        args = self.prepare(r)
        try:
            got = await self._http.request(**args, headers=self.headers)
        except httpx.HTTPError as exc:
            raise self.unreachable(exc) from exc
        return self.answer(got.status_code, got.json)

    async def run(self, plan: Plan[T]) -> T:
        """Run ``plan`` to its result, one request at a time."""
        try:
            r = next(plan)
            while True:
                r = plan.send(await self.send(r))
        except StopIteration as done:
            result: T = done.value
            return result
