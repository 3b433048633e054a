"""`RemoteStore` methods for search, context, extraction and the lifecycle.

The embedder, tokenizer, query log and extractor are the server's: a call
that names one is refused rather than silently ignored.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .client_records import explanation_from
from .client_transport import Transport
from .context import Context
from .errors import InvalidInput
from .model import Memory
from .retrieval.hit import Hit, HitExplanation


class RemoteRetrievalOps(Transport):
    """`RemoteStore` methods for search, context, extraction, use and archive
    (mixed into `RemoteStore`)."""

    def search(
        self,
        query: str,
        *,
        at: str | Sequence[str] | None,
        k: int = 10,
        namespace: str | None = None,
        **options: Any,
    ) -> list[Hit]:
        """`Store.search` (options: ``mode``, ``kind``, ``key_prefix``, ``meta``,
        ``now``, ``as_of``, ``explain``). The embedder is the server's."""
        for option in ("embedder", "tokenizer", "weights", "log"):
            if options.get(option) is not None:
                raise InvalidInput(
                    f"{option}= is chosen by the server (branchmem serve), not per search; "
                    "leave it out"
                )
        anchors = at if at is None or isinstance(at, str) else list(at)
        body = {"query": query, "at": anchors, "k": k, **options}
        return [_hit(h) for h in self._send("POST", namespace, "search", json=body)["hits"]]

    def touch(
        self,
        ids: Iterable[str],
        *,
        namespace: str | None = None,
        now: float | None = None,
        actor: str | None = None,
    ) -> None:
        """`Store.touch`."""
        if isinstance(ids, str):
            raise InvalidInput("touch() takes a list of memory ids, e.g. touch([m.id])")
        self._send("POST", namespace, "touch", json={"ids": list(ids), "now": now})

    def score(
        self, memory_id: str, *, now: float | None = None, namespace: str | None = None
    ) -> float:
        """`Store.score`."""
        d = self._send("GET", namespace, "memories", memory_id, "score", params={"now": now})
        return float(d["score"])

    def archive_expired(
        self, now: float | None = None, *, namespace: str | None = None, actor: str | None = None
    ) -> list[str]:
        """`Store.archive_expired`."""
        return list(self._send("POST", namespace, "archive", json={"now": now})["ids"])

    def restore(
        self, memory_id: str, *, namespace: str | None = None, actor: str | None = None
    ) -> Memory:
        """`Store.restore`."""
        return Memory.from_dict(self._send("POST", namespace, "memories", memory_id, "restore"))

    def extract(
        self,
        at: str,
        *,
        extractor: Any = None,
        window: int = 8,
        namespace: str | None = None,
        actor: str | None = None,
    ) -> list[Memory]:
        """`Store.extract` with the server's offline rule extractor."""
        if extractor is not None:
            raise InvalidInput("extractor= is the server's, not per call; leave it out")
        body = {"at": at, "window": window}
        return [
            Memory.from_dict(d)
            for d in self._send("POST", namespace, "extract", json=body)["memories"]
        ]

    def context(
        self,
        at: str | Sequence[str] | None,
        *,
        query: str | None = None,
        window: int | None = 8,
        k: int | None = 10,
        namespace: str | None = None,
        **search_options: Any,
    ) -> Context:
        """`Store.context` (search options are the server's)."""
        if search_options:
            raise InvalidInput("search options are the server's, not per call; leave them out")
        anchors = [at] if isinstance(at, str) else None if at is None else list(at)
        params = {"at": anchors, "query": query, "window": window, "k": k}
        d = self._send("GET", namespace, "context", params=params)
        chain = tuple(d["at"]) if isinstance(d["at"], list) else d["at"]
        mems = [Memory.from_dict(m) for m in d["memories"]]
        return Context(chain, [dict(m) for m in d["messages"]], mems, d["query"])


def _hit(d: Mapping[str, Any]) -> Hit:
    e = d.get("explanation")
    explanation = None
    if e is not None:
        explanation = HitExplanation(
            explanation_from(e["visibility"]),
            e["scoring"],
            e["keyword_rank"],
            e["vector_rank"],
            e["relevance"],
            bool(e.get("vector_pending", False)),
        )
    return Hit(Memory.from_dict(d["memory"]), d["score"], d["via"], dict(d["parts"]), explanation)
