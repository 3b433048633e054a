"""`QueryLog`: the JSONL file a search appends to (``search(..., log=)``), and
the purge that rewrites it.

Queries are often personal data. ``QueryLog(path, hash_queries=True)`` writes
a SHA-256 of each query instead of its text, `QueryLog.purge` drops the lines
of a purged namespace or that returned purged records, and the file is
created readable by its owner only (0600). What a line holds, and its replay,
are `branchmem.retrieval.querylog`'s.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from .errors import InvalidInput


class QueryLog:
    """Appends one JSON line per search to ``path`` (created on first write).

    >>> import tempfile, os
    >>> log = QueryLog(os.path.join(tempfile.mkdtemp(), "q.jsonl"))
    >>> log.write({"query": "杭州"}); list(log.entries())[0]["query"]
    '杭州'
    """

    def __init__(self, path: str | os.PathLike[str], *, hash_queries: bool = False) -> None:
        self.path = Path(path)
        self.hash_queries = bool(hash_queries)
        self._lock = _lock_for(self.path)

    def write(self, entry: dict[str, Any]) -> None:
        """Append one search as a JSON line (with ``hash_queries``, the query's
        SHA-256 in ``query_sha256`` instead of its text)."""
        if self.hash_queries and isinstance(entry.get("query"), str):
            entry = dict(entry)
            entry["query_sha256"] = query_hash(entry.pop("query"))
        line = json.dumps(entry, ensure_ascii=False, sort_keys=True, allow_nan=False)
        try:
            with self._lock:
                fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
                with open(fd, "a", encoding="utf-8", errors="surrogatepass") as f:
                    f.write(line + "\n")
        except OSError as exc:
            raise InvalidInput(
                f"cannot write query log {str(self.path)!r}: {exc.strerror or exc}; "
                "pass the path of a file in a writable folder"
            ) from exc

    def purge(self, *, namespace: str, ids: Iterable[str] | None = None) -> int:
        """Drop the searches of ``namespace`` that returned any of ``ids`` (every
        search of the namespace when ``ids`` is None), as an erasure must.
        Returns how many lines went; the file is rewritten in one step.

        >>> import tempfile, os
        >>> log = QueryLog(os.path.join(tempfile.mkdtemp(), "q.jsonl"))
        >>> log.write({"namespace": "u1", "query": "花生", "hits": [{"id": "m1"}]})
        >>> log.purge(namespace="u1", ids=["m1"]), list(log.entries())
        (1, [])
        """
        want = None if ids is None else set(ids)
        with self._lock:
            try:
                lines = self.path.read_text(encoding="utf-8").splitlines(keepends=True)
            except FileNotFoundError:
                return 0  # never written, or removed: nothing left to purge
            except OSError as exc:
                raise InvalidInput(f"cannot read query log {str(self.path)!r}: {exc}") from exc
            keep = [ln for ln in lines if not _purged(ln, namespace, want)]
            if len(keep) == len(lines):
                return 0
            fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".querylog-")
            try:
                with open(fd, "w", encoding="utf-8") as f:
                    f.writelines(keep)
                os.replace(tmp, self.path)
            except BaseException:
                os.unlink(tmp)
                raise
            return len(lines) - len(keep)

    def entries(self) -> Iterator[dict[str, Any]]:
        """The logged searches, oldest first."""
        try:
            text = self.path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise InvalidInput(
                f"cannot read query log {str(self.path)!r}: {exc}; pass a JSONL file "
                "written by search(..., log=...)"
            ) from exc
        for n, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                entry = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InvalidInput(f"{self.path}:{n}: not a JSON line ({exc})") from exc
            if not isinstance(entry, dict):
                raise InvalidInput(f"{self.path}:{n}: expected a JSON object per line")
            yield entry


_PATH_LOCKS: dict[str, threading.Lock] = {}
_PATH_LOCKS_LOCK = threading.Lock()


def _key(path: Path) -> str:
    return str(path.resolve())


def _lock_for(path: Path) -> threading.Lock:
    """One lock per file in this process, whichever `QueryLog` object appends to
    or rewrites it (a purge's rewrite must not lose a concurrent append)."""
    with _PATH_LOCKS_LOCK:
        return _PATH_LOCKS.setdefault(_key(path), threading.Lock())


def query_hash(query: str) -> str:
    """The SHA-256 (hex) a hashed query log writes for ``query``."""
    return hashlib.sha256(query.encode("utf-8", "surrogatepass")).hexdigest()


def _purged(line: str, namespace: str, ids: set[str] | None) -> bool:
    try:
        e = json.loads(line)
    except json.JSONDecodeError:
        return False
    if not isinstance(e, dict) or e.get("namespace", "default") != namespace:
        return False
    if ids is None:
        return True
    hits = e.get("hits")
    return isinstance(hits, list) and any(isinstance(h, dict) and h.get("id") in ids for h in hits)
