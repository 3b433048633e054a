"""The relation graph's plain values: `Edge`, `Entity`, `Path`, and how names
and predicates are normalised.

An edge is stored as a derived record of kind `EDGE` (so every backend keeps
and gates it like any other record): its ``content`` reads "subject predicate
object" and its ``meta["edge"]`` holds the three parts and the attributes.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field
from typing import Any

from ..model import EDGE, Memory

ALIAS = "same as"
"""The predicate of an alias edge: ``add_edge("爱丽丝", "same as", "Alice")``
makes both names one entity wherever the edge is visible."""

SINGLE_VALUED = frozenset({"located in", "reports to", "owned by", "lives in", "version"})
"""Predicates with one value per subject: a new object supersedes the old
edge on the new edge's path (`Store.add_edge`'s ``single`` overrides)."""

ONE_SUBJECT = frozenset({"owns", "maintains"})
"""Predicates with one subject per object (a service has one owner): a new
subject supersedes the old edge on the new edge's path."""

MAX_HOPS = 8
"""The most hops a path or a search's expansion may take."""

MAX_EDGES = 1_000_000
"""The most edges one traversal may look at."""


def norm(name: str) -> str:
    """The key an entity is merged by: NFKC, case-folded, spaces collapsed.

    >>> norm("  Auth-Service ") == norm("auth-service")
    True
    """
    return " ".join(unicodedata.normalize("NFKC", name).casefold().split())


@dataclass(frozen=True, slots=True)
class Edge:
    """One visible relation: ``subject -predicate-> object``, from ``sources``."""

    id: str
    subject: str
    predicate: str
    object: str
    sources: tuple[str, ...]
    attrs: dict[str, Any] | None = None
    importance: float = 0.5
    valid_from: float | None = None
    valid_to: float | None = None
    seq: int = field(default=0, compare=False)

    def __repr__(self) -> str:
        return (
            f"Edge({self.subject} -{self.predicate}-> {self.object}, "
            f"sources=[{', '.join(self.sources)}])"
        )

    def other_end(self, node: tuple[str, ...]) -> str:
        """The end of the edge that is not ``node`` (an entity's normalised names)."""
        return self.object if norm(self.subject) in node else self.subject

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "subject": self.subject,
            "predicate": self.predicate,
            "object": self.object,
            "sources": list(self.sources),
            "attrs": None if self.attrs is None else dict(self.attrs),
            "importance": self.importance,
            "valid_from": self.valid_from,
            "valid_to": self.valid_to,
        }


@dataclass(frozen=True, slots=True)
class Entity:
    """A named node: its ``name`` and the other names (``aliases``) merged into
    it by visible alias edges."""

    name: str
    aliases: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "aliases": list(self.aliases)}


@dataclass(frozen=True, slots=True)
class Path:
    """A walk of visible edges from ``start``: ``nodes[i]`` to ``nodes[i+1]``
    along ``edges[i]`` (in either direction)."""

    nodes: tuple[str, ...]
    edges: tuple[Edge, ...]

    @property
    def hops(self) -> int:
        return len(self.edges)

    def __str__(self) -> str:
        out = self.nodes[0]
        for e, n in zip(self.edges, self.nodes[1:], strict=True):
            out += (
                f" -{e.predicate}-> {n}" if norm(e.object) == norm(n) else f" <-{e.predicate}- {n}"
            )
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "nodes": list(self.nodes),
            "edges": [e.to_dict() for e in self.edges],
            "text": str(self),
        }


def edge_content(subject: str, predicate: str, obj: str) -> str:
    """The record's text: what a search over records sees of an edge."""
    return f"{subject} {predicate} {obj}"


def edge_of(m: Memory) -> Edge:
    """The `Edge` an edge record stores."""
    if m.kind != EDGE:
        raise ValueError(f"record {m.id!r} is a {m.kind} record, not an edge")
    d = (m.meta or {}).get("edge") or {}
    return Edge(
        id=m.id,
        subject=str(d.get("subject", "")),
        predicate=str(d.get("predicate", "")),
        object=str(d.get("object", "")),
        sources=m.sources,
        attrs=d.get("attrs"),
        importance=m.importance,
        valid_from=m.valid_from,
        valid_to=m.valid_to,
        seq=m.seq,
    )
