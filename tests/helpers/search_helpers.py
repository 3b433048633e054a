"""Helpers shared by the search tests: a fake OpenAI-compatible embeddings server."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from branchmem import HashingEmbedder


@dataclass
class FakeServer:
    url: str
    requests: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    fail_with: int | None = None
    malformed: bool = False
    delay: float = 0.0  # seconds each answer takes (a slow embedder)


@contextmanager
def embeddings_server(dim: int = 32, delay: float = 0.0) -> Iterator[FakeServer]:
    """A local ``/v1/embeddings`` endpoint answering hashing vectors, on 127.0.0.1,
    each answer ``delay`` seconds late."""
    inner = HashingEmbedder(dim)
    state = FakeServer("", delay=delay)

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            state.requests.append(body)
            if state.delay:
                time.sleep(state.delay)
            state.headers.append(dict(self.headers))
            if self.path != "/v1/embeddings":
                self.send_response(404)
                self.end_headers()
                return
            if state.fail_with is not None:
                self.send_response(state.fail_with)
                self.end_headers()
                self.wfile.write(b'{"error": "boom"}')
                return
            vecs = inner.embed_passages(body["input"])
            data: Any = [
                {"object": "embedding", "index": i, "embedding": list(v)}
                for i, v in enumerate(vecs)
            ]
            data.reverse()  # the client must order by index
            payload = {"object": "list", "data": data, "model": body["model"]}
            if state.malformed:
                payload = {"unexpected": True}
            out = json.dumps(payload).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()


class GatedEmbedder:
    """Hashing vectors whose `embed_passages` waits while `gate` is closed, on the
    background embedder's thread only (or on every thread, ``everywhere=True``):
    a slow embedder a test controls. `entered` is set when a call waits."""

    def __init__(self, dim: int = 32, *, everywhere: bool = False, name: str = "") -> None:
        self.inner = HashingEmbedder(dim)
        self.name = name or f"gated-{dim}"
        self.dim = dim
        self.everywhere = everywhere
        self.gate = threading.Event()
        self.gate.set()
        self.entered = threading.Event()
        self.passages: list[str] = []
        self.calls: list[tuple[str, int]] = []  # (thread name, passages)

    def embed_queries(self, texts: Any) -> list[Any]:
        return self.inner.embed_queries(texts)

    def embed_passages(self, texts: Any) -> list[Any]:
        here = threading.current_thread().name
        self.calls.append((here, len(texts)))
        if self.everywhere or here == "branchmem-embed":
            self.entered.set()
            self.gate.wait(30)
        self.passages.extend(texts)
        return self.inner.embed_passages(texts)
