"""Graph-derived context for the branchmem systems (``--hops N``).

`EdgeExtractor` proposes the relation edges of every user and assistant
message (the library's rule patterns, `branchmem.extract.edges`), nothing
else, so the facts and summaries of a run are those without the graph.
`graph_lines` hands the model the paths of visible edges, at most ``hops``
long, from the entities a question names: ``store.graph(at=anchor)`` sees
only edges whose sources are all on the anchor's path, so the leak metric
over the context covers what the graph adds.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from branchmem import Store
    from branchmem.extract import Proposal
    from branchmem.model import Event, Memory

RELATIONS_HEADING = "相关关系："
EDGE_ROLES = ("user", "assistant")


class EdgeExtractor:
    """Edge proposals only, for each user or assistant message of the window."""

    def propose(self, window: list[Event], visible: list[Memory]) -> list[Proposal]:
        from branchmem.extract.edges import edge_proposals

        out: list[Proposal] = []
        for ev in window:
            if ev.role in EDGE_ROLES:
                out += edge_proposals(ev.id, ev.content)
        return out


def graph_lines(store: Store, anchor: str, question: str, hops: int) -> list[str]:
    """Each visible path of at most ``hops`` edges from an entity named in
    ``question`` (by name or alias, ignoring case), shortest first."""
    view = store.graph(at=anchor)
    asked = question.casefold()
    starts = [
        e.name
        for e in view.entities()
        if any(n.casefold() in asked for n in (e.name, *e.aliases) if n)
    ]
    if not starts:
        return []
    paths = [p for p in view.reach(starts, max_hops=hops).values() if p.hops]
    paths.sort(key=lambda p: (p.hops, str(p)))
    return list(dict.fromkeys(str(p) for p in paths))
