"""A search's line in its query log: what it holds (`log_entry`) and where it
goes (`write_for`, which has the engine remember the log, for purge).

`branchmem.retrieval.querylog` reads the lines back and replays them.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Sequence
from typing import Any

from ..backends.base import QueryLogRegistry
from ..engine import Engine
from ..searchlog import QueryLog
from .hit import Hit

LOG_VERSION = 1


_KNOWN_LOCK = threading.Lock()


def write_for(
    engine: Engine, log: QueryLog | str | os.PathLike[str], entry: dict[str, Any]
) -> None:
    """Append ``entry`` to ``log`` for a search through ``engine``, which remembers
    the log first (so that a crash between the two leaves no unknown line). A
    log given by path records query hashes when the store has a redactor."""
    hashed = engine.redactor is not None
    ql = log if isinstance(log, QueryLog) else QueryLog(log, hash_queries=hashed)
    key = str(ql.path.resolve())
    with _KNOWN_LOCK:
        new = key not in engine.query_logs
    if new:
        engine.identifier(key, "query log path")  # kept in the store, for purge
        b = engine.backend
        if isinstance(b, QueryLogRegistry) and not getattr(b, "readonly", False):
            with b.transaction():
                b.add_query_log(key)
        with _KNOWN_LOCK:
            engine.query_logs.add(key)
    ql.write(entry)


def log_entry(*, hits: Sequence[Hit], **fields: Any) -> dict[str, Any]:
    """A log line for one search (``fields`` as `search` received them)."""
    return {
        "v": LOG_VERSION,
        "time": time.time(),
        **fields,
        "hits": [
            {"id": h.memory.id, "via": h.via, "score": h.score, "parts": dict(h.parts)}
            for h in hits
        ],
    }
