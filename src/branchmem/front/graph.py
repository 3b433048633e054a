"""`Store`'s doors to the relation graph: add an edge (`branchmem.graph.write`),
and the graph visible at an anchor (`branchmem.graph.read`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..graph import read as _graph_read
from ..graph import write as _graph_write

if TYPE_CHECKING:
    from ..graph.model import Edge
    from ..graph.view import GraphView
    from . import Front


def add_edge(
    self: Front,
    /,
    subject: str,
    predicate: str,
    object: str,
    *,
    sources: Sequence[str],
    **options: Any,
) -> Edge:
    """Store the relation ``subject -predicate-> object`` as a gated record.

    ``options``: ``attrs``, ``importance``, ``namespace``, ``id``, ``valid_from``,
    ``valid_to``, ``single``, ``replaces``, ``actor`` (docs/graph.md).

    >>> store = Store()
    >>> _ = store.add_event("e1", content="Alice 负责 auth-service")
    >>> store.add_edge("Alice", "owns", "auth-service", sources=["e1"])
    Edge(Alice -owns-> auth-service, sources=[e1])
    """
    return _graph_write.add_edge(
        self._engine, subject, predicate, object, sources=sources, **options
    )


def graph(
    self: Front,
    *,
    at: str | Sequence[str] | None,
    namespace: str = "default",
    now: float | None = None,
) -> GraphView:
    """The relation graph visible at ``at`` (an anchor or a scope chain): `GraphView`.

    >>> Store().graph(at=None).edges()
    []
    """
    return _graph_read.graph(self._engine, at=at, namespace=namespace, now=now)
