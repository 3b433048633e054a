"""`RemoteStore` and `AsyncRemoteStore`: `Store`'s methods over a served store's
HTTP API, blocking (httpx.Client) and awaitable (httpx.AsyncClient).

Code moves between embedded and served by changing one line::

    store = Store("mem.db")
    store = RemoteStore("http://127.0.0.1:8080", api_key=KEY, namespace="alice")

Results are the same frozen dataclasses, and errors the same exception
classes (rebuilt from the error ``type`` the server answers, with their
message and ids). Needs only httpx. Differences: ``namespace`` defaults to
the one given to the constructor; ``actor=`` is accepted and ignored, since
the server records the key's principal as the actor of every write; search
takes only the options `branchmem.retrieval.options` marks as served
(``embedder`` and ``log`` are the server's).

The package, bottom to top: `wire` (a call as a *plan*: the requests it
yields, their checks, how answers and errors are read; no I/O),
`connection` (one httpx client, sync or async, that runs plans), `decode`
(answers back into dataclasses), one module of plans per area (`records`,
`retrieval`, `branches`, `admin`, `tree`, `graph`), `doors` and `surface`
(each method written once as a plan), and `remote`, where `RemoteStore` and
`AsyncRemoteStore` each hold a connection of their kind.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import BranchmemError
from .remote import AsyncRemoteStore, RemoteStore

if TYPE_CHECKING:
    from ..api import StoreAPI

    def _fits(store: RemoteStore) -> StoreAPI:
        return store  # checked by mypy: context, extract and importers take a RemoteStore


__all__ = ["AsyncRemoteStore", "BranchmemError", "RemoteStore"]
