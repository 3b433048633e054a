"""What every system shares: settings, the event intake, paths, windows, context layout.

A `System` receives every event in arrival order (abandoned branches
included), passes it through the shared `Extractor`, and hands each derived
record to its subclass, which decides what to keep. One instance serves one
scenario: ``receive`` each event, ``finish`` once, then ``context`` per
question. Systems that use raw messages keep only the last ``window`` of
them when a window is set, as real apps truncate.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from itertools import pairwise
from typing import ClassVar

from .extract import FACT_PREFIX, SUMMARY_EVERY, Derived, Extractor, line
from .scenario import Question, ScenarioEvent

TOP_K = 5
"""Facts the relevance-ranked systems keep per question."""

MEMORY_HEADING = "相关记忆："
CONVERSATION_HEADING = "对话记录："
SUMMARY_HEADING = "对话摘要："


@dataclass(frozen=True)
class Settings:
    """What every system of a run shares: the raw-message window, top-k, summary size."""

    window: int | None = None
    top_k: int = TOP_K
    summary_every: int = SUMMARY_EVERY
    hops: int = 0
    """Graph-derived context (branchmem systems): edges within this many hops
    of the entities a question names; 0 (the default) leaves the graph out."""


def bigrams(text: str) -> set[str]:
    """Character bigrams of the letters and digits of ``text`` (punctuation dropped)."""
    chars = [c for c in text.casefold() if c.isalnum()]
    return {a + b for a, b in pairwise(chars)}


def rank_facts(facts: list[Derived], question: str, k: int) -> list[Derived]:
    """The ``k`` facts sharing the most character bigrams with ``question``.

    Like a vector retriever, it always returns ``k`` facts when it has them;
    ties go to the newer fact. Deterministic, no model.
    """
    q = bigrams(question)
    scored = [
        (len(q & bigrams(f.content.removeprefix(FACT_PREFIX))), i, f) for i, f in enumerate(facts)
    ]
    scored.sort(key=lambda t: (-t[0], -t[1]))
    return [f for _, _, f in scored[:k]]


def section(heading: str, lines: list[str], bullet: str = "") -> str:
    """A heading and its lines, or "" when there are no lines."""
    if not lines:
        return ""
    return heading + "\n" + "\n".join(bullet + x for x in lines)


def join_sections(*parts: str) -> str:
    """The non-empty sections, separated by a blank line."""
    return "\n\n".join(p for p in parts if p)


class System(ABC):
    """A memory design under test; subclasses say what they keep and how they gate it."""

    name: ClassVar[str]

    def __init__(self, settings: Settings | None = None) -> None:
        self.settings = settings or Settings()
        self.extractor = Extractor(self.settings.summary_every)
        self.events: dict[str, ScenarioEvent] = {}
        self.arrival: list[str] = []
        self.current: str | None = None

    def receive(self, event: ScenarioEvent) -> None:
        """Take one arriving event and whatever the extractor derives from it."""
        self.events[event.id] = event
        self.arrival.append(event.id)
        self.current = event.id
        self.on_event(event)
        for record in self.extractor.observe(event):
            self.on_record(record)

    def finish(self) -> None:
        """Called once after the last event: summarise what is not yet summarised."""
        for record in self.extractor.flush():
            self.on_record(record)

    def on_event(self, event: ScenarioEvent) -> None:  # noqa: B027 - optional hook
        """Hook: a system that stores events does so here."""

    def on_record(self, record: Derived) -> None:  # noqa: B027 - optional hook
        """Hook: a system that keeps derived records does so here."""

    @abstractmethod
    def context(self, anchor: str, question: Question) -> str:
        """The text handed to a model for ``question`` asked at ``anchor``."""

    def path(self, anchor: str) -> list[ScenarioEvent]:
        """The anchor and its received ancestors, root first (every parent before its child).

        Conversation order, not arrival order: a parent that arrived after its
        child still comes first, as in `branchmem.Store.path`.
        """
        order: list[str] = []
        seen: set[str] = set()
        stack: list[tuple[str, bool]] = [(anchor, False)]
        while stack:
            eid, parents_done = stack.pop()
            if parents_done:
                order.append(eid)
                continue
            if eid in seen or eid not in self.events:
                continue
            seen.add(eid)
            stack.append((eid, True))
            stack.extend((p, False) for p in reversed(self.events[eid].parents))
        return [self.events[e] for e in order]

    def windowed(self, events: list[ScenarioEvent]) -> list[ScenarioEvent]:
        """The last ``window`` events (all of them when the window is unlimited)."""
        w = self.settings.window
        return events if w is None else events[-w:] if w > 0 else []

    def raw_section(self, events: list[ScenarioEvent]) -> str:
        """The windowed events as the conversation section of a context."""
        return section(CONVERSATION_HEADING, [line(e) for e in self.windowed(events)])
