"""A pure ASGI middleware that refuses request bodies over a size cap (413).

It reads the body before the application does, so a body sent without a
``Content-Length`` (chunked) is refused at the cap too, not buffered whole.
"""

from __future__ import annotations

import json
from typing import Any

from .errors import PayloadTooLarge, to_payload

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
        body = json.dumps(to_payload(exc, {"max_bytes": self.max_bytes})).encode()
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
