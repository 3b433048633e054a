"""Two systems that consolidate on a schedule ("dreaming"), for the
``consolidation`` split: a profile written before the user edited or
switched branches must not outlive the branch that made it.

- ``dream_flat`` does it the way peers do: every `DREAM_EVERY` messages
  received it folds every fact it holds (the shared extractor's, no
  provenance) into a profile, the latest fact of each topic, and drops the
  facts folded; the model gets the profile and the facts since. The profile
  names no messages, so nothing can ever gate it again.
- ``branchmem_dream`` is `branchmem_memory_only` plus `Store.consolidate` at
  the message just received on the same schedule: merges and profiles are
  gated records sourced from all of their inputs, so a profile made on an
  abandoned branch is not visible at the anchor.
"""

from __future__ import annotations

from .base import MEMORY_HEADING, Settings, System, section
from .extract import Derived
from .scenario import Question, ScenarioEvent
from .systems import BranchmemMemoryOnly

DREAM_EVERY = 4
"""Messages received between two consolidations (in arrival order)."""


class DreamFlat(System):
    """Facts folded into a flat profile every `DREAM_EVERY` messages, no provenance."""

    name = "dream_flat"

    def __init__(self, settings: Settings | None = None) -> None:
        super().__init__(settings)
        self.profile: dict[str, str] = {}  # topic -> the latest fact folded in
        self.recent: list[Derived] = []  # facts since the last consolidation

    def receive(self, event: ScenarioEvent) -> None:
        super().receive(event)
        if len(self.arrival) % DREAM_EVERY == 0:
            self.dream()

    def on_record(self, record: Derived) -> None:
        if record.kind == "fact":
            self.recent.append(record)

    def dream(self) -> None:
        for f in self.recent:
            self.profile[f.key or f.content] = f.content
        self.recent = []

    def context(self, anchor: str, question: Question) -> str:
        lines = [*self.profile.values(), *(f.content for f in self.recent)]
        return section(MEMORY_HEADING, lines, "- ")


class BranchmemDream(BranchmemMemoryOnly):
    """`branchmem_memory_only`, consolidating at the newest message every
    `DREAM_EVERY` messages: its merges and profiles are gated records."""

    name = "branchmem_dream"

    def on_event(self, event: ScenarioEvent) -> None:
        super().on_event(event)  # stored and extracted
        if len(self.arrival) % DREAM_EVERY == 0 and self.store.path(event.id):
            self.store.consolidate(at=event.id)


DREAM_SYSTEMS: tuple[type[System], ...] = (DreamFlat, BranchmemDream)
