"""Errors that only a served store raises, and the one JSON error shape.

They extend the tree of `branchmem.errors`::

    BranchmemError
    ├── Unauthorized                       no key, or a key that is unknown or revoked (401)
    ├── Forbidden                          the key's grant is too weak for this call (403)
    ├── TooManyRequests                    the key has as many requests in flight as allowed (429)
    ├── ShuttingDown                       the server is stopping (503)
    ├── InvalidInput (ValueError)
    │   ├── PayloadTooLarge                a body or batch over the server's cap (413)
    │   └── LimitExceeded                  an argument over the server's cap (k, query length) (422)
    └── NotFound (KeyError)
        ├── UnknownNamespace               no such namespace, or none this key may see (404)
        └── UnknownRoute                   no such path or method on the server (404/405)

Every error crosses HTTP as ``{"error": {"type", "message", "detail"}}`` with
the status of the class attribute ``http_status`` (and, for an error that
carries ``retry_after``, a ``Retry-After`` header); `to_payload` and
`from_payload` are the two directions, used by the server and by
`branchmem.client.RemoteStore`. This module imports no third-party package.
"""

from __future__ import annotations

import math
from typing import Any

from .. import errors as core
from ..errors import BranchmemError, InvalidInput, NotFound


class Unauthorized(BranchmemError):
    """A request without a key, or with one the server does not know (or revoked)."""

    http_status = 401


class Forbidden(BranchmemError):
    """The key may see the namespace but its grant does not allow this call."""

    http_status = 403


class TooManyRequests(BranchmemError):
    """The key already has ``limit`` requests in flight; retry after ``retry_after`` s."""

    http_status = 429

    def __init__(self, limit: int, retry_after: float = 1.0) -> None:
        self.limit = limit
        self.retry_after = retry_after
        super().__init__(
            f"this key already has {limit} requests in flight, as many as this server "
            f"takes at once; wait for one to finish, or retry in {retry_after:g} s"
        )


class ShuttingDown(BranchmemError):
    """The server is stopping and takes no more calls."""

    http_status = 503

    def __init__(self) -> None:
        self.retry_after = 1.0
        super().__init__("the server is shutting down; retry in a moment")


class PayloadTooLarge(InvalidInput):
    """A request body or batch larger than the server accepts."""

    http_status = 413


class LimitExceeded(InvalidInput):
    """An argument above the server's cap (``k`` of a search, a query's length)."""


class UnknownNamespace(NotFound):
    """No namespace of that name that this key may see.

    A namespace the key has no grant on answers exactly like one that does not
    exist, so a key cannot probe for other tenants.
    """

    def __init__(self, namespace: str) -> None:
        self.namespace = namespace
        super().__init__(
            f"no namespace {namespace!r}; use a namespace your key was granted "
            "(see `branchmem keys list`)"
        )


class UnknownRoute(NotFound):
    """No such path, or no such method on it."""


_CLASSES: dict[str, type[BranchmemError]] = {
    name: obj
    for name, obj in [*vars(core).items(), *globals().items()]
    if isinstance(obj, type) and issubclass(obj, BranchmemError)
}


def status_of(exc: BranchmemError) -> int:
    """The HTTP status of an error: the nearest ``http_status`` up its classes."""
    return int(getattr(exc, "http_status", 500))


def _jsonable(value: Any) -> bool:
    if value is None or isinstance(value, (str, bool, int)):
        return True
    if isinstance(value, float):
        return math.isfinite(value)
    return False


def to_payload(exc: BranchmemError, detail: dict[str, Any] | None = None) -> dict[str, Any]:
    """The one error shape: type (the class name), message, detail (the ids it carries)."""
    found = {k: v for k, v in vars(exc).items() if not k.startswith("_") and _jsonable(v)}
    if detail:
        found.update(detail)
    return {"error": {"type": type(exc).__name__, "message": str(exc), "detail": found}}


def from_payload(payload: Any, status: int) -> BranchmemError:
    """Rebuild the exception a server answered with: the same class, message and ids.

    An unknown ``type`` becomes the nearest base for the status (a 404 is a
    `NotFound`, another 4xx an `InvalidInput`, the rest `BranchmemError`).
    """
    err = payload.get("error") if isinstance(payload, dict) else None
    if not isinstance(err, dict):
        return BranchmemError(f"the server answered HTTP {status} without an error body")
    message = str(err.get("message", ""))
    cls = _CLASSES.get(str(err.get("type")))
    if cls is None:
        cls = NotFound if status == 404 else InvalidInput if 400 <= status < 500 else BranchmemError
    exc = cls.__new__(cls)
    Exception.__init__(exc, message)  # the leaves' own __init__ would rebuild the message
    detail = err.get("detail")
    if isinstance(detail, dict):
        for k, v in detail.items():
            if isinstance(k, str) and k.isidentifier() and not k.startswith("_"):
                setattr(exc, k, v)
    return exc
