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
    """A served store, as one key sees it, over an `httpx.Client` (whose base URL
    is the server's)."""

    def __init__(self, http: httpx.Client, *, api_key: str | None, namespace: str) -> None:
        super().__init__(api_key=api_key, namespace=namespace)
        self._http = http

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
    """`Connection` over an `httpx.AsyncClient`."""

    def __init__(self, http: httpx.AsyncClient, *, api_key: str | None, namespace: str) -> None:
        super().__init__(api_key=api_key, namespace=namespace)
        self._http = http

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
