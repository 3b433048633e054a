"""The relation graph, gated: edges are derived records of kind ``"edge"``,
visible where all their sources are on the anchor's path (`Store.add_edge`,
`Store.graph`); see docs/graph.md."""

from .model import ALIAS, MAX_HOPS, SINGLE_VALUED, Edge, Entity, Path, norm
from .view import GraphView

__all__ = ["ALIAS", "MAX_HOPS", "SINGLE_VALUED", "Edge", "Entity", "GraphView", "Path", "norm"]
