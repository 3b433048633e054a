"""Request guards as pure ASGI middleware, answering in the one error shape.

`BodyLimit` refuses request bodies over a size cap (413). It reads the body
before the application does, so a body sent without a ``Content-Length``
(chunked) is refused at the cap too, not buffered whole.

`LoopbackHosts` guards a server without keys: it answers only requests whose
``Host`` is a loopback name, so a web page cannot reach it through DNS
rebinding (a name of the attacker's that resolves to 127.0.0.1).
"""

from __future__ import annotations

import json
from typing import Any

from ..errors import BranchmemError
from .errors import Forbidden, PayloadTooLarge, to_payload

ASGI = Any


class BodyLimit:
    def __init__(self, app: ASGI, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            await self._refuse(send, int(declared))
            return
        body = b""
        while True:
            message = await receive()
            if message["type"] != "http.request":
                break  # a disconnect: hand it on below
            body += message.get("body", b"")
            if len(body) > self.max_bytes:
                await self._refuse(send, len(body))
                return
            if not message.get("more_body", False):
                message = {"type": "http.request", "body": body, "more_body": False}
                break
        replay = [message]

        async def again() -> Any:
            return replay.pop() if replay else await receive()

        await self.app(scope, again, send)

    async def _refuse(self, send: Any, size: int) -> None:
        exc = PayloadTooLarge(
            f"the request body is {size} bytes or more; this server takes at most "
            f"{self.max_bytes}: send smaller batches"
        )
        await answer(send, exc, {"max_bytes": self.max_bytes})


LOOPBACK_NAMES = (b"127.0.0.1", b"localhost", b"[::1]")


class LoopbackHosts:
    def __init__(self, app: ASGI) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            host = dict(scope.get("headers") or []).get(b"host", b"")
            name = host.rsplit(b":", 1)[0] if not host.endswith(b"]") else host
            if name not in LOOPBACK_NAMES:
                exc = Forbidden(
                    f"this server has no keys and answers only loopback hosts "
                    f"(127.0.0.1, localhost, [::1]), not {host.decode(errors='replace')!r}"
                )
                await answer(send, exc)
                return
        await self.app(scope, receive, send)


async def answer(send: Any, exc: BranchmemError, detail: dict[str, Any] | None = None) -> None:
    """Send ``exc`` as the one error shape, from outside the application."""
    body = json.dumps(to_payload(exc, detail)).encode()
    await send(
        {
            "type": "http.response.start",
            "status": exc.http_status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
