"""What every route takes first: the namespace in the path and the caller's
context (its key's principal and grants), checked for a read of it."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request
from fastapi import Path as FPath

from .auth import key_of
from .schema import Id
from .served import Served
from .service import Ctx

NSName = Annotated[Id, FPath(description="the namespace")]


def context(namespace: NSName, request: Request) -> Ctx:
    """The caller's context; a namespace unknown to its key: 404 before anything else."""
    served: Served = request.app.state.served
    key = key_of(request)
    c = served.ctx(served.principal(key), key)
    c.allow(namespace, "read")
    return c


C = Annotated[Ctx, Depends(context)]
