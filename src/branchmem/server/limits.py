"""Request guards as pure ASGI middleware, answering in the one error shape.

`BodyLimit` refuses request bodies over a size cap (413). It reads the body
before the application does, so a body sent without a ``Content-Length``
(chunked) is refused at the cap too, not buffered whole; and it refuses a
JSON body whose object names one key twice (422), which JSON readers resolve
differently (one keeps the first, another the last).

`Limits` holds the caps a server puts on one request, checked by the service
layer (batch items and rows, `k`, pages, queries) and the middleware here.

`LoopbackHosts` guards a server without keys: it answers only requests whose
``Host`` is a loopback name, so a web page cannot reach it through DNS
rebinding (a name of the attacker's that resolves to 127.0.0.1).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from ..errors import BranchmemError, InvalidInput
from ..validate import MAX_CONTENT_BYTES
from .errors import Forbidden, LimitExceeded, PayloadTooLarge, to_payload

ASGI = Any
T = TypeVar("T")


@dataclass(frozen=True)
class Limits:
    """Caps a server puts on one request (over them: 413, 422, 429 or 503).

    ``max_query``: characters of a search query (422). ``max_embed``: records
    without a vector one search embeds itself; past it a hybrid search ranks
    the rest by keyword and a vector-only one answers 503 (`EmbeddingPending`).
    ``max_concurrent``: requests of one key in flight at once (429 past it).
    ``max_rows``: rows one batch write may add: each item one, and one more
    per parent of an event or source of a record (413 past it); the store's
    own limits per item (`MAX_PARENTS`, `MAX_SOURCES`, `MAX_CONTENT_BYTES`)
    hold too. The body's default takes one item at the content limit.
    """

    max_body_bytes: int = 4 * MAX_CONTENT_BYTES
    max_batch: int = 1_000
    max_k: int = 100
    max_page: int = 1_000
    max_query: int = 2_000
    max_embed: int = 32
    max_concurrent: int = 16
    max_rows: int = 10_000

    def query(self, text: object) -> None:
        if isinstance(text, str) and len(text) > self.max_query:
            raise LimitExceeded(
                f"the query is {len(text)} characters; this server takes at most "
                f"{self.max_query}: send a shorter one"
            )

    def batch(self, items: Sequence[T], what: str) -> Sequence[T]:
        if len(items) > self.max_batch:
            raise PayloadTooLarge(
                f"{len(items)} {what} in one request; this server takes at most "
                f"{self.max_batch}: send them in several requests"
            )
        return items

    def rows(self, items: Sequence[Mapping[str, Any]], inner: str, what: str) -> None:
        """Refuse a batch that adds more than `max_rows` rows: one per item and
        one per entry of its ``inner`` list (an event's parents, a record's sources)."""
        n = sum(1 + _count(i.get(inner)) for i in items)
        if inner == "parents":
            n += sum(_count(i.get("parent")) for i in items)
        if n > self.max_rows:
            raise PayloadTooLarge(
                f"these {what} add {n} rows (one per item, one per {inner[:-1]}); this server "
                f"takes at most {self.max_rows} per request (--max-rows): send them in "
                "several requests"
            )

    def page(self, limit: int | None) -> int:
        if limit is None:
            return self.max_page
        if limit < 1 or limit > self.max_page:
            raise LimitExceeded(f"limit must be between 1 and {self.max_page}, got {limit}")
        return limit


def _count(value: object) -> int:
    """How many ids a parent or sources value names (a list, one id, or none)."""
    if isinstance(value, (list, tuple)):
        return len(value)
    return 0 if value is None else 1


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
        twice = repeated_key(body) if body else None
        if twice is not None:
            exc = InvalidInput(
                f"the request body names the key {twice!r} twice in one object; JSON "
                "readers disagree on which one counts, so send each key once"
            )
            await answer(send, exc, {"key": twice})
            return
        replay = [message]

        async def again() -> Any:
            return replay.pop() if replay else await receive()

        await self.app(scope, again, send)

    async def _refuse(self, send: Any, size: int) -> None:
        exc = PayloadTooLarge(
            f"the request body is {size} bytes or more; this server takes at most "
            f"{self.max_bytes} (--max-body). A batch: send fewer items per request. One "
            f"item: the content of an event or record holds at most {MAX_CONTENT_BYTES} "
            "bytes of UTF-8 at every door (MAX_CONTENT_BYTES): split it, or keep the "
            "text elsewhere and store a reference"
        )
        await answer(send, exc, {"max_bytes": self.max_bytes})


class _Twice(Exception):
    pass


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _Twice(key)
        out[key] = value
    return out


def repeated_key(body: bytes) -> str | None:
    """A key that an object of the JSON ``body`` names twice, or None (also
    for a body that is not JSON: the application answers that)."""
    try:
        json.loads(body, object_pairs_hook=_pairs)
    except _Twice as twice:
        return str(twice.args[0])
    except (ValueError, RecursionError):
        pass
    return None


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
