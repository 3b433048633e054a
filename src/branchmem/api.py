"""`StoreAPI`: the part of `Store`'s public API that code built on top of it uses.

`branchmem.context`, `branchmem.extract`, `branchmem.importers` and the
evaluation harnesses (the package `branchmem_eval`, beside this one) take
any object with these methods, like a client would: a `Store`, or a
`RemoteStore` over a served one. They never import `Store` (so nothing
below the shells does), and they reach nothing but this.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from .graph.model import Edge
    from .model import Branch, Event, Explanation, Memory
    from .retrieval.embed import Embedder
    from .retrieval.fusion import Weights
    from .retrieval.hit import Hit
    from .retrieval.tokenize import Tokenizer
    from .searchlog import QueryLog


class StoreAPI(Protocol):
    """The methods of `Store` (and `RemoteStore`) that the layers above use."""

    def __enter__(self) -> StoreAPI: ...

    def __exit__(self, *exc: object) -> None: ...

    def close(self) -> None: ...

    def add_event(
        self,
        id: str,
        *,
        parent: str | Sequence[str] | None = None,
        role: str = "user",
        content: str = "",
        namespace: str = "default",
        meta: dict[str, Any] | None = None,
        branch: str | None = None,
        actor: str | None = None,
        expected_head: str | None = None,
    ) -> Event: ...

    def add_events(
        self, events: Iterable[Event | Mapping[str, Any]], *, actor: str | None = None
    ) -> list[Event]: ...

    def add_memory(
        self,
        content: str,
        *,
        sources: Sequence[str],
        kind: str = "semantic",
        key: str | None = None,
        importance: float = 0.5,
        namespace: str = "default",
        meta: dict[str, Any] | None = None,
        id: str | None = None,
        expires_at: float | None = None,
        valid_from: float | None = None,
        valid_to: float | None = None,
        actor: str | None = None,
    ) -> Memory: ...

    def add_memories(
        self, items: Iterable[Memory | Mapping[str, Any]], *, actor: str | None = None
    ) -> list[Memory]: ...

    def retract(
        self,
        memory_id: str,
        *,
        sources: Sequence[str],
        namespace: str = "default",
        id: str | None = None,
        actor: str | None = None,
    ) -> Memory: ...

    def supersede(
        self,
        memory_id: str,
        content: str,
        *,
        sources: Sequence[str],
        namespace: str = "default",
        actor: str | None = None,
        **fields: Any,
    ) -> Memory: ...

    def purge(
        self,
        *,
        events: Sequence[str] = (),
        memories: Sequence[str] = (),
        namespace: str = "default",
        whole_namespace: bool = False,
        actor: str | None = None,
    ) -> list[str]: ...

    def get_event(self, event_id: str, namespace: str = "default") -> Event: ...

    def get_memory(self, memory_id: str, namespace: str = "default") -> Memory: ...

    def add_edge(
        self, subject: str, predicate: str, object: str, *, sources: Sequence[str], **options: Any
    ) -> Edge: ...

    def memories(
        self,
        *,
        at: str | Sequence[str] | None,
        kind: str | None = None,
        namespace: str = "default",
        now: float | None = None,
        as_of: float | None = None,
        include_archived: bool = False,
    ) -> list[Memory]: ...

    def explain(
        self,
        memory_id: str,
        *,
        at: str | None,
        namespace: str = "default",
        now: float | None = None,
    ) -> Explanation: ...

    def path(
        self, at: str | None, namespace: str = "default", *, last: int | None = None
    ) -> list[Event]: ...

    def branch_head(self, name: str, *, namespace: str = "default") -> str: ...

    def set_branch(
        self,
        name: str,
        event_id: str,
        *,
        namespace: str = "default",
        actor: str | None = None,
        expected_head: str | None = None,
    ) -> Branch: ...

    def search(
        self,
        query: str,
        *,
        at: str | Sequence[str] | None,
        k: int = 10,
        namespace: str = "default",
        mode: str = "hybrid",
        embedder: Embedder | str | None = None,
        tokenizer: Tokenizer | str | None = None,
        weights: Weights | None = None,
        scope_weights: Sequence[float] | None = None,
        kind: str | Sequence[str] | None = None,
        key_prefix: str | None = None,
        meta: Mapping[str, Any] | None = None,
        now: float | None = None,
        as_of: float | None = None,
        explain: bool = False,
        log: QueryLog | str | os.PathLike[str] | None = None,
        max_embed: int | None = None,
        hops: int = 0,
        min_score: float | None = None,
        cutoff: str | None = None,
        filter: Mapping[str, Any] | None = None,
    ) -> list[Hit]: ...
