"""The remote stores' relation-graph methods: ``POST .../edges``, ``GET .../graph``,
written as plans (`wire.Plan`) of the store object and bound in its class body."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..graph.model import Edge
from ..validate import check_anchors
from .tree import Remote
from .wire import Plan, call


def add_edge(
    self: Remote,
    /,
    subject: str,
    predicate: str,
    object: str,
    *,
    sources: Sequence[str],
    **options: Any,
) -> Plan[Edge]:
    """`Store.add_edge` (``namespace`` and the same options; ``actor`` is the key's)."""
    ns = options.pop("namespace", None)
    options.pop("actor", None)
    body: dict[str, Any] = {"subject": subject, "predicate": predicate, "object": object}
    body |= {"sources": list(sources), **options}
    if "replaces" in body:
        body["replaces"] = list(body["replaces"])
    d = yield from call("POST", ns, "edges", json=body)
    return Edge(
        id=d["id"],
        subject=d["subject"],
        predicate=d["predicate"],
        object=d["object"],
        sources=tuple(d["sources"]),
        attrs=d.get("attrs"),
        importance=d.get("importance", 0.5),
        valid_from=d.get("valid_from"),
        valid_to=d.get("valid_to"),
    )


def graph_neighbors(
    self: Remote,
    entity: str | None,
    *,
    at: str | Sequence[str] | None,
    hops: int = 1,
    namespace: str | None = None,
    now: float | None = None,
) -> Plan[dict[str, Any]]:
    """The served ``GET .../graph``: around ``entity`` up to ``hops`` visible
    edges (or, with ``entity=None``, the whole visible graph), as a dict of
    ``entities``, ``edges`` and ``paths`` (`GraphView.to_dict`'s shape)."""
    if at is None:
        return {"at": None, "namespace": namespace, "entities": [], "edges": [], "paths": []}
    params: dict[str, Any] = {
        "at": [at] if isinstance(at, str) else check_anchors(at),
        "entity": entity,
    }
    params |= {"hops": hops, "now": now}
    out: dict[str, Any] = yield from call("GET", namespace, "graph", params=params)
    return out
