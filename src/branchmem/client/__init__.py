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

The package, bottom to top: `connection` (one httpx client with its
transport, the key and the default namespace: requests, errors, pages),
`decode` (answers back into dataclasses), one module of plain functions of
the connection per area (`records`, `retrieval`, `branches`, `admin`), and
`remote`, where `RemoteStore` holds a connection and hands each method to
its area.
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
