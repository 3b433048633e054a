"""A deliberately naive reference for the gate: walk every parent link, check every source.

No segments, no index, no caching. It is the definition the fast code is
checked against, so it must stay obviously right rather than fast.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class RefRecord:
    id: str
    sources: tuple[str, ...]
    target: str | None = None


@dataclass
class Reference:
    parents: dict[str, tuple[str, ...]] = field(default_factory=dict)
    records: list[RefRecord] = field(default_factory=list)

    def add_event(self, event_id: str, parents: tuple[str, ...]) -> None:
        self.parents[event_id] = parents

    def add_record(self, rec: RefRecord) -> None:
        self.records.append(rec)

    def connected(self, event_id: str) -> bool:
        """Arrived, and so has every ancestor. (The store refuses cycles, so
        parent links never lead back.)"""
        seen: set[str] = set()
        stack = [event_id]
        while stack:
            e = stack.pop()
            if e not in self.parents:
                return False
            if e not in seen:
                seen.add(e)
                stack.extend(self.parents[e])
        return True

    def ancestors(self, anchor: str) -> set[str]:
        """The anchor and everything reachable by parent links; empty if not connected."""
        if not self.connected(anchor):
            return set()
        out: set[str] = set()
        stack = [anchor]
        while stack:
            e = stack.pop()
            if e not in out:
                out.add(e)
                stack.extend(self.parents[e])
        return out

    def gate(self, rec: RefRecord, anc: set[str]) -> bool:
        return all(s in anc for s in rec.sources)

    def visible(self, record_id: str, anchor: str) -> bool:
        anc = self.ancestors(anchor)
        rec = next(r for r in self.records if r.id == record_id)
        if not self.gate(rec, anc):
            return False
        if rec.target is not None:
            return True
        return not any(r.target == record_id and self.gate(r, anc) for r in self.records)

    def memories(self, anchor: str) -> list[str]:
        anc = self.ancestors(anchor)
        hidden = {r.target for r in self.records if r.target is not None and self.gate(r, anc)}
        return [
            r.id
            for r in self.records
            if r.target is None and self.gate(r, anc) and r.id not in hidden
        ]

    def retractions(self, anchor: str) -> list[RefRecord]:
        anc = self.ancestors(anchor)
        return [r for r in self.records if r.target is not None and self.gate(r, anc)]

    def chain(self, anchors: list[str], *, retractions: bool = False) -> list[tuple[str, str]]:
        """A scope chain: ``(id, via)`` for each record visible from any anchor, once,
        ``via`` the first anchor that sees it; earlier anchors' records first.
        With ``retractions``, the retractions instead, as ``(target, via)``."""
        seen: set[str] = set()
        out = []
        for a in anchors:
            if retractions:
                got = [(r.id, r.target or "") for r in self.retractions(a)]
            else:
                got = [(rid, rid) for rid in self.memories(a)]
            for rid, shown in got:
                if rid not in seen:
                    seen.add(rid)
                    out.append((shown, a))
        return out
