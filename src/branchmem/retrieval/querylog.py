"""The query log (JSONL, one search per line) and its replay.

Each line records everything needed to run the search again — namespace,
anchors, query, k, mode, embedder and tokenizer names, weights, filters, the
``now`` used for recency — and what it returned: hit ids, ``via``, scores
and score parts. `replay` runs every logged search again and reports those
whose results changed.

Queries are often personal data. ``QueryLog(path, hash_queries=True)`` writes
a SHA-256 of each query instead of its text (such lines cannot be replayed),
`QueryLog.purge` drops the lines of a purged namespace or that returned
purged records, and the file is created readable by its owner only (0600);
the file itself is `branchmem.searchlog`'s.

A store remembers the logs its searches wrote to (`write_for`; kept in the
store file where the backend can, else by the engine for the `Store`
object's life), so that `Store.purge` reaches them without being told
(`branchmem.ops.purge.logs_of`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from ..engine import Engine, SupportsEngine
from ..errors import InvalidInput
from ..searchlog import QueryLog, query_hash
from .fusion import Weights
from .logwrite import LOG_VERSION, log_entry
from .search import search

__all__ = [
    "LOG_VERSION",
    "SCORE_TOLERANCE",
    "QueryLog",
    "ReplayChange",
    "ReplayReport",
    "log_entry",
    "query_hash",
    "replay",
]

SCORE_TOLERANCE = 1e-6
"""Score changes smaller than this are float noise, not a changed result."""


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


def replay(store: Engine | SupportsEngine, log: QueryLog | str | os.PathLike[str]) -> ReplayReport:
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
                filter=filters.get("filter"),
                min_score=e.get("min_score"),
                cutoff=e.get("cutoff", "off"),  # a log from before the cut-off: none
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
