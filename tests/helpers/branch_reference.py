"""A naive reference for branch operations, built on `reference.Reference`.

Branches are a dict of heads; every answer is recomputed from scratch by
walking parent links. Merge semantics are restated here plainly (which
memories collide, what a fast-forward is) so that the store's merge is
checked against the rule rather than against itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from helpers.reference import Reference, RefRecord


@dataclass
class RefMemory:
    id: str
    key: str | None
    content: str


@dataclass
class BranchReference:
    ref: Reference = field(default_factory=Reference)
    kinds: dict[str, str] = field(default_factory=dict)  # id -> memory/conflict/retraction
    mems: dict[str, RefMemory] = field(default_factory=dict)
    members: dict[str, tuple[str, ...]] = field(default_factory=dict)
    heads: dict[str, str] = field(default_factory=dict)
    held: dict[str, set[str]] = field(default_factory=dict)
    snaps: dict[str, str] = field(default_factory=dict)
    n_ret: int = 0

    # graph ------------------------------------------------------------------
    def add_event(self, eid: str, parents: tuple[str, ...]) -> None:
        self.ref.add_event(eid, parents)

    def is_ancestor(self, a: str, b: str) -> bool:
        return a in self.ref.ancestors(b)

    # records ----------------------------------------------------------------
    def add_memory(self, mid: str, source: str, key: str | None, content: str) -> None:
        self.ref.add_record(RefRecord(mid, (source,)))
        self.kinds[mid] = "memory"
        self.mems[mid] = RefMemory(mid, key, content)

    def add_retraction(self, target: str, source: str, rid: str | None = None) -> None:
        if rid is None:
            self.n_ret += 1
            rid = f"__ref_r{self.n_ret}"
        self.ref.add_record(RefRecord(rid, (source,), target))
        self.kinds[rid] = "retraction"

    def add_conflict(self, cid: str, source: str, members: tuple[str, ...]) -> None:
        self.ref.add_record(RefRecord(cid, (source,)))
        self.kinds[cid] = "conflict"
        self.members[cid] = members

    # answers ----------------------------------------------------------------
    def memories(self, anchor: str) -> list[str]:
        return [i for i in self.ref.memories(anchor) if self.kinds[i] == "memory"]

    def conflicts(self, anchor: str) -> list[str]:
        return [i for i in self.ref.memories(anchor) if self.kinds[i] == "conflict"]

    # branches ---------------------------------------------------------------
    def move(self, name: str, head: str) -> None:
        self.heads[name] = head
        self.held.setdefault(name, set()).add(head)

    def collisions(
        self, visible: list[str], target: set[str]
    ) -> list[tuple[str, list[str], list[str]]]:
        """(key, target's losing ids, incoming ids) per colliding key, keys sorted."""
        out = []
        keys = sorted({k for i in visible if (k := self.mems[i].key) is not None})
        for k in keys:
            tside = [i for i in visible if self.mems[i].key == k and i in target]
            inc = [i for i in visible if self.mems[i].key == k and i not in target]
            if not tside or not inc:
                continue
            incoming_contents = {self.mems[i].content for i in inc}
            losers = [i for i in tside if self.mems[i].content not in incoming_contents]
            if losers:
                out.append((k, losers, inc))
        return out
