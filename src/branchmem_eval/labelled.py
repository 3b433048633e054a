"""Recall@K and MRR of search over a labelled set.

A labelled set is JSONL. Lines with ``"type": "event"`` or ``"memory"``
carry the store's content (loaded with `load_labelled`); lines with
``"type": "query"`` carry a question::

    {"type": "query", "id": "edit-01/q1", "namespace": "edit-01", "at": "e8",
     "query": "我打算搬去哪个城市？", "expected_ids": ["f3"], "expected_keywords": ["青岛"]}

A hit is relevant when its id is in ``expected_ids`` or, for a query with no
ids, when its content holds one of ``expected_keywords``. Recall@K is the
share of queries with a relevant hit in the top K (the usual "hit rate" for
one answer); MRR is the mean of 1 / rank of the first relevant hit.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from branchmem.errors import InvalidInput
from branchmem.retrieval.embed import Embedder
from branchmem.retrieval.fusion import Weights

if TYPE_CHECKING:
    from branchmem.api import StoreAPI

KS = (1, 5, 10)


@dataclass(frozen=True)
class LabelledQuery:
    id: str
    namespace: str
    at: tuple[str, ...]
    query: str
    expected_ids: tuple[str, ...] = ()
    expected_keywords: tuple[str, ...] = ()

    def relevant(self, memory_id: str, content: str) -> bool:
        if self.expected_ids:
            return memory_id in self.expected_ids
        return any(kw in content for kw in self.expected_keywords)


@dataclass(frozen=True)
class LabelledSet:
    """Queries, plus the events and memories to build a store from (may be empty)."""

    queries: tuple[LabelledQuery, ...]
    events: tuple[dict[str, Any], ...] = ()
    memories: tuple[dict[str, Any], ...] = ()


@dataclass(frozen=True)
class RecallRow:
    """Recall@K and MRR of one (embedder, mode) over ``queries`` queries."""

    embedder: str
    mode: str
    queries: int
    recall: dict[int, float] = field(default_factory=dict)
    mrr: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "embedder": self.embedder,
            "mode": self.mode,
            "queries": self.queries,
            **{f"recall@{k}": v for k, v in self.recall.items()},
            "mrr": self.mrr,
        }


def read_labelled(path: str | os.PathLike[str]) -> LabelledSet:
    """Parse a labelled-set JSONL file (see the module docstring)."""
    p = Path(path)
    try:
        lines = p.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"cannot read labelled set {p}: {exc}; pass a UTF-8 JSONL file") from exc
    queries: list[LabelledQuery] = []
    events: list[dict[str, Any]] = []
    memories: list[dict[str, Any]] = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            d = json.loads(line)
            t = d.pop("type")
            if t == "event":
                events.append(d)
            elif t == "memory":
                memories.append(d)
            elif t == "query":
                at = d["at"]
                queries.append(
                    LabelledQuery(
                        id=str(d.get("id", f"line{n}")),
                        namespace=str(d.get("namespace", "default")),
                        at=(at,) if isinstance(at, str) else tuple(at),
                        query=str(d["query"]),
                        expected_ids=tuple(d.get("expected_ids") or ()),
                        expected_keywords=tuple(d.get("expected_keywords") or ()),
                    )
                )
            else:
                raise ValueError(f"unknown type {t!r}")
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise InvalidInput(
                f"{p}:{n}: expected a JSON object with type event, memory or query ({exc})"
            ) from exc
        if t == "query" and not (queries[-1].expected_ids or queries[-1].expected_keywords):
            raise InvalidInput(f"{p}:{n}: a query needs expected_ids or expected_keywords")
    return LabelledSet(tuple(queries), tuple(events), tuple(memories))


def load_labelled(store: StoreAPI, data: LabelledSet) -> None:
    """Add the set's events and memories to ``store`` (re-adding is a no-op)."""
    if data.events:
        store.add_events(data.events)
    if data.memories:
        store.add_memories(data.memories)


def recall(
    store: StoreAPI,
    queries: Sequence[LabelledQuery],
    *,
    mode: str = "hybrid",
    embedder: Embedder | str | None = None,
    tokenizer: str | None = None,
    weights: Weights | None = None,
    now: float | None = None,
    ks: Sequence[int] = KS,
) -> RecallRow:
    """Recall@K for each K in ``ks`` and MRR of `search` over ``queries``.

    >>> from branchmem import Store
    >>> store = Store()
    >>> _ = store.add_event("e1", content="我对花生过敏")
    >>> _ = store.add_memory("用户对花生过敏", sources=["e1"], id="m1")
    >>> q = LabelledQuery("q1", "default", ("e1",), "花生", expected_ids=("m1",))
    >>> recall(store, [q], mode="keyword").recall[1]
    1.0
    """
    depth = max(ks)
    found = dict.fromkeys(ks, 0)
    rr = 0.0
    name = "-"
    if mode != "vector" and tokenizer not in (None, "bigram"):
        name = f"-/{tokenizer}"
    for q in queries:
        hits = store.search(
            q.query,
            at=list(q.at),
            k=depth,
            namespace=q.namespace,
            mode=mode,
            embedder=embedder if mode != "keyword" else None,
            tokenizer=tokenizer,
            weights=weights,
            now=now,
            cutoff="off",  # ranking figures; the cut-off is measured by the scenario sets
        )
        first = next(
            (r for r, h in enumerate(hits, 1) if q.relevant(h.memory.id, h.memory.content)), None
        )
        if first is not None:
            rr += 1 / first
            for k in ks:
                found[k] += first <= k
    if mode != "keyword":
        from branchmem.retrieval.search import _embedder

        name = _embedder(embedder).name + (name[1:] if name != "-" else "")
    n = len(queries)
    return RecallRow(
        name, mode, n, {k: (found[k] / n if n else 0.0) for k in ks}, rr / n if n else 0.0
    )
