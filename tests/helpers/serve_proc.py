"""`branchmem serve` as real processes on free loopback ports, for the tests
that need more than the in-process app (several servers on one store)."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import httpx

SERVE = [sys.executable, "-m", "branchmem", "serve"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def serving(
    args: list[str], logs: Path, count: int = 1, timeout: float = 60.0
) -> Iterator[list[str]]:
    """Run ``count`` processes of ``branchmem serve ARGS --port P`` (started at
    once) until the block ends; yields their URLs once each ``/healthz``
    answers. Output goes to ``logs/serve-N.log`` (a file, not a pipe: a full
    pipe would stall a server)."""
    with ExitStack() as stack:
        started = []
        for n in range(count):
            port = free_port()
            log = logs / f"serve-{n}.log"
            with log.open("wb") as out:
                proc = subprocess.Popen(
                    [*SERVE, *args, "--port", str(port)], stdout=out, stderr=subprocess.STDOUT
                )
            stack.callback(_stop, proc)
            started.append((proc, f"http://127.0.0.1:{port}", log))
        deadline = time.monotonic() + timeout
        for proc, url, log in started:
            wait_healthy(proc, url, log, deadline - time.monotonic())
        yield [url for _, url, _ in started]


def wait_healthy(proc: subprocess.Popen[bytes], url: str, log: Path, timeout: float) -> None:
    """Wait until ``url/healthz`` answers 200; raise with ``log``'s text if ``proc``
    ends first or ``timeout`` seconds pass."""
    deadline = time.monotonic() + timeout
    while not _healthy(url):
        if proc.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"server did not start: {log.read_text()}")
        time.sleep(0.1)


def _healthy(url: str) -> bool:
    try:
        return httpx.get(f"{url}/healthz", timeout=1).status_code == 200
    except httpx.HTTPError:
        return False


def _stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    proc.wait(timeout=30)
