"""The query log (JSONL, one search per line) and its replay.

Each line records everything needed to run the search again — namespace,
anchors, query, k, mode, embedder and tokenizer names, weights, filters, the
``now`` used for recency — and what it returned: hit ids, ``via``, scores
and score parts. `replay` runs every logged search again and reports those
whose results changed.

Queries are often personal data. ``QueryLog(path, hash_queries=True)`` writes
a SHA-256 of each query instead of its text (such lines cannot be replayed),
`QueryLog.purge` drops the lines of a purged namespace or that returned
purged records, and the file is created readable by its owner only (0600).

A store remembers the logs its searches wrote to (`write_for`; kept in the
store file where the backend can, else for the `Store` object's life), so
that `Store.purge` reaches them without being told (`logs_of`).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import threading
import time
import weakref
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..backends.base import QueryLogRegistry
from ..errors import InvalidInput

if TYPE_CHECKING:
    from ..store import Store
    from .hit import Hit

LOG_VERSION = 1
SCORE_TOLERANCE = 1e-6
"""Score changes smaller than this are float noise, not a changed result."""


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


_KNOWN: weakref.WeakKeyDictionary[Store, set[str]] = weakref.WeakKeyDictionary()
_KNOWN_LOCK = threading.Lock()


def write_for(store: Store, log: QueryLog | str | os.PathLike[str], entry: dict[str, Any]) -> None:
    """Append ``entry`` to ``log`` for a search of ``store``, which remembers the
    log first (so that a crash between the two leaves no unknown line). A log
    given by path records query hashes when the store has a redactor."""
    hashed = store.redactor is not None
    ql = log if isinstance(log, QueryLog) else QueryLog(log, hash_queries=hashed)
    key = _key(ql.path)
    with _KNOWN_LOCK:
        known = _KNOWN.setdefault(store, set())
        new = key not in known
    if new:
        store._identifier(key, "query log path")  # kept in the store, for purge
        b = store._b
        if isinstance(b, QueryLogRegistry) and not getattr(b, "readonly", False):
            with b.transaction():
                b.add_query_log(key)
        with _KNOWN_LOCK:
            known.add(key)
    ql.write(entry)


def logs_of(store: Store) -> list[QueryLog]:
    """The query logs ``store``'s searches wrote to: those kept in the store
    (by any process) and those this `Store` object wrote to."""
    with _KNOWN_LOCK:
        paths = set(_KNOWN.get(store, ()))
    b = store._b
    if isinstance(b, QueryLogRegistry):
        with b.reading():
            paths.update(b.query_logs())
    return [QueryLog(p) for p in sorted(paths)]


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


@dataclass(frozen=True)
class ReplayChange:
    """One logged search whose results differ now.

    ``before`` and ``after`` are ``(memory id, via)`` in rank order;
    ``added``/``removed`` are ids; ``score_changes`` maps ids found in both to
    (old, new) scores that moved by more than `SCORE_TOLERANCE`.
    """

    line: int
    query: str
    anchors: tuple[str, ...]
    before: tuple[tuple[str, str], ...]
    after: tuple[tuple[str, str], ...]
    added: tuple[str, ...]
    removed: tuple[str, ...]
    score_changes: dict[str, tuple[float, float]]

    def __str__(self) -> str:
        parts = []
        if self.added:
            parts.append("added " + ", ".join(self.added))
        if self.removed:
            parts.append("removed " + ", ".join(self.removed))
        if not parts and self.before != self.after:
            parts.append(
                "order or via changed: "
                + " ".join(f"{i}@{v}" for i, v in self.before)
                + " -> "
                + " ".join(f"{i}@{v}" for i, v in self.after)
            )
        if self.score_changes:
            parts.append(
                "scores "
                + ", ".join(f"{i} {a:.4f}->{b:.4f}" for i, (a, b) in self.score_changes.items())
            )
        return f"line {self.line}: {self.query!r} at {list(self.anchors)}: " + "; ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        return {
            "line": self.line,
            "query": self.query,
            "anchors": list(self.anchors),
            "before": [list(x) for x in self.before],
            "after": [list(x) for x in self.after],
            "added": list(self.added),
            "removed": list(self.removed),
            "score_changes": {k: list(v) for k, v in self.score_changes.items()},
        }


@dataclass(frozen=True)
class ReplayReport:
    """What `replay` found: how many searches ran, and the changed ones."""

    searches: int
    changes: tuple[ReplayChange, ...]


def replay(store: Store, log: QueryLog | str | os.PathLike[str]) -> ReplayReport:
    """Run every search of ``log`` again against ``store``; report those that changed.

    Each search runs with the embedder, tokenizer, weights, filters and
    ``now`` it was logged with, so an unchanged store gives unchanged results.

    >>> import tempfile, os
    >>> from branchmem import Store
    >>> store = Store()
    >>> _ = store.add_event("e1", content="我对花生过敏")
    >>> _ = store.add_memory("用户对花生过敏", sources=["e1"], id="m1")
    >>> path = os.path.join(tempfile.mkdtemp(), "q.jsonl")
    >>> _ = store.search("花生", at="e1", embedder="hashing", log=path)
    >>> replay(store, path).changes
    ()
    """
    from .fusion import Weights
    from .search import search

    ql = log if isinstance(log, QueryLog) else QueryLog(log)
    changes: list[ReplayChange] = []
    n = 0
    for line, e in enumerate(ql.entries(), 1):
        if "query" not in e and "query_sha256" in e:
            continue  # a hashed query cannot be run again
        try:
            filters = e.get("filters") or {}
            hits = search(
                store,
                e["query"],
                at=e["anchors"],
                k=int(e["k"]),
                namespace=e.get("namespace", "default"),
                mode=e.get("mode", "hybrid"),
                embedder=e.get("embedder") or "hashing",
                tokenizer=e.get("tokenizer"),
                weights=Weights.from_dict(e["weights"]) if e.get("weights") else None,
                scope_weights=e.get("scope_weights"),
                kind=filters.get("kind"),
                key_prefix=filters.get("key_prefix"),
                meta=filters.get("meta"),
                now=e.get("now"),
                as_of=e.get("as_of"),
            )
            old = [(h["id"], h["via"], float(h["score"])) for h in e["hits"]]
        except (KeyError, TypeError, ValueError) as exc:
            if isinstance(exc, InvalidInput):
                raise
            raise InvalidInput(f"{ql.path}: entry {line} is not a logged search ({exc!r})") from exc
        n += 1
        before = tuple((i, v) for i, v, _ in old)
        after = tuple((h.memory.id, h.via) for h in hits)
        old_scores = {i: s for i, _, s in old}
        new_scores = {h.memory.id: h.score for h in hits}
        moved = {
            i: (old_scores[i], new_scores[i])
            for i in old_scores
            if i in new_scores and abs(old_scores[i] - new_scores[i]) > SCORE_TOLERANCE
        }
        if before != after or moved:
            changes.append(
                ReplayChange(
                    line,
                    e["query"],
                    tuple(e["anchors"]),
                    before,
                    after,
                    tuple(i for i, _ in after if i not in old_scores),
                    tuple(i for i, _ in before if i not in new_scores),
                    moved,
                )
            )
    return ReplayReport(n, tuple(changes))
