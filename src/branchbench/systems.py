"""The seven memory systems branchbench compares, from no filtering to the gated store.

They share one extractor (see `base.System`), so they differ only in what
they keep and how they gate it. `SYSTEMS` lists them in report order.
"""

from __future__ import annotations

from typing import ClassVar

from .base import (
    MEMORY_HEADING,
    SUMMARY_HEADING,
    TOP_K,
    Settings,
    System,
    join_sections,
    rank_facts,
    section,
)
from .extract import CLIP, Derived
from .graphctx import RELATIONS_HEADING, EdgeExtractor, graph_lines
from .scenario import Question, ScenarioEvent

__all__ = ["SYSTEMS", "TOP_K", "Settings", "System", "make_system"]

EXTRACT_WINDOW = 8
"""Events the branchmem systems' extraction reads (`Store.extract`'s default)."""


class FullHistory(System):
    """Every message received, in arrival order: no filtering at all."""

    name = "full_history"

    def context(self, anchor: str, question: Question) -> str:
        return self.raw_section([self.events[e] for e in self.arrival])


class WholeSummary(System):
    """One running summary over everything received, branches mixed as they arrived."""

    name = "whole_summary"

    def __init__(self, settings: Settings | None = None) -> None:
        super().__init__(settings)
        self.summaries: list[str] = []

    def on_record(self, record: Derived) -> None:
        if record.kind == "summary":
            self.summaries.append(record.content)

    def context(self, anchor: str, question: Question) -> str:
        return section(SUMMARY_HEADING, self.summaries)


class ExtractFlat(System):
    """Facts from every message in one flat store, no provenance, top-k by relevance."""

    name = "extract_flat"

    def __init__(self, settings: Settings | None = None) -> None:
        super().__init__(settings)
        self.facts: list[Derived] = []

    def on_record(self, record: Derived) -> None:
        if record.kind == "fact":
            self.facts.append(record)

    def fact_section(self, question: Question) -> str:
        """The top-k facts for the question, as the memory section of a context."""
        top = rank_facts(self.facts, question.question, self.settings.top_k)
        return section(MEMORY_HEADING, [f.content for f in top], "- ")

    def context(self, anchor: str, question: Question) -> str:
        return self.fact_section(question)


class ExtractFlatBranchRaw(ExtractFlat):
    """The flat facts plus only the current branch's raw messages."""

    name = "extract_flat_branch_raw"

    def context(self, anchor: str, question: Question) -> str:
        return join_sections(self.fact_section(question), self.raw_section(self.path(anchor)))


class BranchTags(System):
    """Memories tagged with the branch current when written, filtered by the anchor's tag.

    A branch tag is assigned to every event as it arrives: an event whose
    (first) parent has arrived and has no earlier-arrived child extends that
    branch and inherits its tag; a root, an event whose parent has not
    arrived yet, and an event whose parent already has a child (a fork) start
    a new branch tagged with the event's own id (a parent that arrives after
    its child already counts as having that child). The current branch is the
    tag of the most recently arrived event, and every record is tagged with
    it when written. This equals tagging with the tip a write extends and
    re-tagging when the tip advances. Tags are never rewritten afterwards,
    so a summary of a shared prefix keeps the tag of the branch that was
    current then. At question time only records carrying the anchor's tag
    are shown.
    """

    name = "branch_tags"

    def __init__(self, settings: Settings | None = None) -> None:
        super().__init__(settings)
        self.tag_of: dict[str, str] = {}
        self.has_child: set[str] = set()
        self.records: list[tuple[str, Derived]] = []

    def on_event(self, event: ScenarioEvent) -> None:
        parent = event.parents[0] if event.parents else None
        if parent is not None and parent in self.tag_of and parent not in self.has_child:
            self.tag_of[event.id] = self.tag_of[parent]
        else:
            self.tag_of[event.id] = event.id
        self.has_child.update(event.parents)

    def on_record(self, record: Derived) -> None:
        tag = self.tag_of[self.current] if self.current is not None else ""
        self.records.append((tag, record))

    def context(self, anchor: str, question: Question) -> str:
        tag = self.tag_of.get(anchor)
        return section(MEMORY_HEADING, [r.content for t, r in self.records if t == tag], "- ")


class CurrentBranchRaw(System):
    """Only the raw messages on the anchor's path: the upper bound for raw filtering."""

    name = "current_branch_raw"

    def context(self, anchor: str, question: Question) -> str:
        return self.raw_section(self.path(anchor))


class Branchmem(System):
    """The library's product path: `Store.extract` after every message, `Store.context`
    at question time (the current branch's raw messages plus the gated memories).

    Every event goes into a `branchmem.Store` as it arrives; each connected
    event is then extracted at itself (`slots.SlotExtractor` facts, whose
    changes of mind are supersedes, and the library's `SummaryExtractor`
    every `Settings.summary_every` messages on the path). Before a question
    the messages not yet summarised on the anchor's path are summarised too.
    The shared extractor's records are not used: the store derives its own.
    """

    name = "branchmem"
    messages: ClassVar[bool] = True

    def __init__(self, settings: Settings | None = None) -> None:
        super().__init__(settings)
        from branchmem import Store  # imported here so the other systems run without it
        from branchmem.extract import ChainExtractor, Extractor, SummaryExtractor

        from .slots import SlotExtractor

        every = self.settings.summary_every
        self.store = Store()
        parts: list[Extractor] = [SlotExtractor(), SummaryExtractor(every=every, clip=CLIP)]
        if self.settings.hops:
            parts.append(EdgeExtractor())
        self.chain = ChainExtractor(*parts)
        self.tail = SummaryExtractor(every=every, clip=CLIP, partial=True)
        self.waiting: list[str] = []

    def on_event(self, event: ScenarioEvent) -> None:
        parents = list(event.parents)
        parent: str | list[str] | None = (
            None if not parents else parents[0] if len(parents) == 1 else parents
        )
        # A child may arrive before its parent here on purpose (the scenario's
        # arrival order): the store's warning that it waits is expected, not shown.
        from branchmem import caught_warnings

        with caught_warnings():
            self.store.add_event(event.id, parent=parent, role=event.role, content=event.content)
        # Extract at each event once it is connected.
        self.waiting.append(event.id)
        still = []
        for eid in self.waiting:
            if self.store.path(eid):
                self.store.extract(at=eid, extractor=self.chain, window=EXTRACT_WINDOW)
            else:
                still.append(eid)
        self.waiting = still

    def context(self, anchor: str, question: Question) -> str:
        self.store.extract(at=anchor, extractor=self.tail, window=EXTRACT_WINDOW)
        window = self.settings.window if self.messages else 0
        text = self.store.context(at=self.scope(anchor), window=window, k=None).text()
        if not self.settings.hops:
            return text
        relations = graph_lines(self.store, anchor, question.question, self.settings.hops)
        return join_sections(text, section(RELATIONS_HEADING, relations, "- "))

    def scope(self, anchor: str) -> str | list[str]:
        """``anchor``, then the newest event of every other thread (a root and
        what is below it, by first parents), as a scope chain: memory shared
        across threads, as the threads split (format v1.1) expects."""
        newest: dict[str, str] = {}
        for eid in self.events:  # arrival order
            newest[self.root(eid)] = eid
        own = self.root(anchor)
        others = [h for r, h in newest.items() if r != own]
        return [anchor, *others] if others else anchor

    def root(self, eid: str) -> str:
        """The first-parent root above ``eid`` among the received events."""
        seen = {eid}
        while eid in self.events and self.events[eid].parents:
            up = self.events[eid].parents[0]
            if up in seen or up not in self.events:
                break
            seen.add(up)
            eid = up
        return eid


class BranchmemMemoryOnly(Branchmem):
    """`branchmem` without raw messages: only the gated memories, what a model
    sees once the conversation is longer than its window."""

    name = "branchmem_memory_only"
    messages: ClassVar[bool] = False


SYSTEMS: dict[str, type[System]] = {
    cls.name: cls
    for cls in (
        FullHistory,
        WholeSummary,
        ExtractFlat,
        ExtractFlatBranchRaw,
        BranchTags,
        CurrentBranchRaw,
        Branchmem,
        BranchmemMemoryOnly,
    )
}
"""Every system, in report order (no filtering first, the gated store last)."""

# Two that consolidate on a schedule (the consolidation split), after the gated store.
from .systems_dream import DREAM_SYSTEMS  # noqa: E402

SYSTEMS.update({cls.name: cls for cls in DREAM_SYSTEMS})

# Two more, through a real LangGraph graph (when the langgraph extra is installed).
from .systems_langgraph import langgraph_systems  # noqa: E402

SYSTEMS.update(langgraph_systems())


def make_system(name: str, settings: Settings | None = None) -> System:
    """A fresh instance of the system called ``name``."""
    try:
        cls = SYSTEMS[name]
    except KeyError:
        raise ValueError(f"unknown system {name!r}; choose from {', '.join(SYSTEMS)}") from None
    return cls(settings)
