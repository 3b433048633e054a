"""Consolidation at an anchor, keeping its evidence: `consolidate` and `profile`.

Every output is a gated record sourced from the union of its inputs' sources,
so it is visible exactly where all of them are; it lists its inputs in
``meta["consolidated_from"]``, so a later retraction (or supersede, or
purge) of any input takes it down too (`branchmem.ops.cascade`). Ids come
from the inputs, so a second run at the same anchor writes nothing.

- **merge**: duplicates and near-duplicates (`plan.duplicate_groups`) become
  one record with the latest one's text, and a retraction of each input
  sourced from the union: where the merge shows, they do not.
- **contradictions** (records of one key whose texts differ): ``"recency"``
  keeps the one whose evidence is latest on the path and retracts each
  other from the union of both's sources; ``"flag"`` writes a conflict
  note listing them, and retracts nothing.
- **profile**: a record of key ``"profile"`` holding the current fact of each
  key (``meta["facts"]``); a new one retracts the profiles visible before it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import InvalidInput
from ..model import CONSOLIDATED_FROM, KINDS, Memory
from ..ops.cascade import derived_id, own_retraction_id
from ..validate import MAX_SOURCES, check_namespace, show
from .plan import (
    Similar,
    contradictions,
    duplicate_groups,
    recency,
    text_similar,
    union_sources,
    vector_similar,
)

if TYPE_CHECKING:
    from ..api import StoreAPI
    from ..retrieval.embed import Embedder

PROFILE_KEY = "profile"
"""The key of a profile record."""

WHAT = "consolidation"
"""The ``meta`` field that says what a consolidated record is: merge, conflict, profile."""

MAX_FACTS = 50
"""Facts a profile holds at most (the most important)."""

MODES = ("recency", "flag")


@dataclass(frozen=True)
class Consolidation:
    """What one `consolidate` call wrote: merged records, retractions (of
    merged inputs, of contradicted facts, of older profiles), conflict notes
    and the new profile."""

    at: str
    merged: tuple[Memory, ...]
    retractions: tuple[Memory, ...]
    conflicts: tuple[Memory, ...]
    profile: Memory | None

    @property
    def written(self) -> int:
        n = len(self.merged) + len(self.retractions) + len(self.conflicts)
        return n + (self.profile is not None)

    def to_dict(self) -> dict[str, Any]:
        return {
            "at": self.at,
            "merged": [m.to_dict() for m in self.merged],
            "retractions": [m.to_dict() for m in self.retractions],
            "conflicts": [m.to_dict() for m in self.conflicts],
            "profile": None if self.profile is None else self.profile.to_dict(),
        }


@dataclass(frozen=True)
class Profile:
    """The profile visible at ``at``: the current fact of each key, and the
    record that holds them (None where no profile is visible)."""

    at: str
    facts: dict[str, str]
    record: Memory | None

    def to_dict(self) -> dict[str, Any]:
        rec = None if self.record is None else self.record.to_dict()
        return {"at": self.at, "facts": dict(self.facts), "record": rec}


def what(m: Memory) -> str | None:
    """``"merge"``, ``"conflict"`` or ``"profile"`` for a consolidated record."""
    got = (m.meta or {}).get(WHAT)
    return got if isinstance(got, str) else None


def profile(store: StoreAPI, at: str, *, namespace: str = "default") -> Profile:
    """The latest profile visible at ``at`` (`consolidate` writes them)."""
    ns = check_namespace(namespace)
    found = [m for m in store.memories(at=at, namespace=ns) if what(m) == "profile"]
    if not found:
        return Profile(at, {}, None)
    rec = max(found, key=lambda m: m.seq)
    facts = (rec.meta or {}).get("facts")
    return Profile(at, dict(facts) if isinstance(facts, dict) else {}, rec)


def consolidate(
    store: StoreAPI,
    at: str,
    *,
    namespace: str = "default",
    contradictions_by: str = "recency",
    near: float = 0.8,
    embedder: Embedder | None = None,
    write_profile: bool = True,
    max_facts: int = MAX_FACTS,
    actor: str | None = None,
) -> Consolidation:
    """Consolidate the records visible at ``at`` (see the module)."""
    ns = check_namespace(namespace)
    if contradictions_by not in MODES:
        raise InvalidInput(
            f"contradictions must be one of {', '.join(MODES)}, got {show(contradictions_by)}"
        )
    if isinstance(near, bool) or not isinstance(near, (int, float)) or not 0 < near <= 1:
        raise InvalidInput(f"near must be a number in (0, 1], got {show(near)}")
    order = {e.id: i for i, e in enumerate(store.path(at, namespace=ns))}
    newest = recency(order)
    visible = [
        m for m in store.memories(at=at, namespace=ns) if m.target is None and m.kind in KINDS
    ]
    profiles = [m for m in visible if what(m) == "profile"]
    facts = [m for m in visible if what(m) not in ("profile", "conflict")]
    similar = _similar(facts, embedder, near)
    new: list[Memory] = []
    retract: list[tuple[str, list[str], str]] = []  # (target, sources, retraction id)
    live = {m.id: m for m in facts}
    for group in duplicate_groups(facts, similar):
        group = _fitting(sorted(group, key=newest))
        if len(group) < 2:
            continue
        last = group[-1]
        ids = sorted(m.id for m in group)
        cid = derived_id("cm", *ids)
        srcs = union_sources(group)
        merged = Memory(
            id=cid, content=last.content, sources=tuple(srcs), kind=last.kind, key=last.key,
            importance=max(m.importance for m in group), namespace=ns,
            meta={CONSOLIDATED_FROM: ids, WHAT: "merge"}, seq=last.seq,
        )  # fmt: skip
        new.append(merged)
        retract += [(m.id, srcs, own_retraction_id(cid, m.id)) for m in group]
        for m in group:
            del live[m.id]
        live[cid] = merged
    for group in contradictions(list(live.values())):
        group = sorted(group, key=newest)
        win = group[-1]
        if contradictions_by == "recency":
            for lose in group[:-1]:
                srcs = union_sources([lose, win])
                if len(srcs) <= MAX_SOURCES:
                    retract.append((lose.id, srcs, derived_id("cx", lose.id, win.id)))
                    del live[lose.id]
            continue
        group = _fitting(group)
        ids = sorted(m.id for m in group)
        texts = " | ".join(m.content for m in group)
        new.append(
            Memory(
                id=derived_id("cf", *ids), content=f"conflict on {win.key}: {texts}",
                sources=tuple(union_sources(group)), kind="working", namespace=ns,
                meta={CONSOLIDATED_FROM: ids, WHAT: "conflict", "key": win.key},
            )
        )  # fmt: skip
    prof = _profile(list(live.values()), newest, max_facts, ns) if write_profile else None
    if prof is not None and prof.id not in {p.id for p in profiles}:
        new.append(prof)
        retract += [
            (p.id, union_sources([p, prof]), own_retraction_id(prof.id, p.id)) for p in profiles
        ]
    else:
        prof = None
    retract = [r for r in retract if len(r[1]) <= MAX_SOURCES]
    items = [_item(m) for m in new]
    stored = store.add_memories(items, actor=actor) if items else []
    gone = [store.retract(t, sources=s, id=rid, namespace=ns, actor=actor) for t, s, rid in retract]
    by_id = {m.id: m for m in stored}
    return Consolidation(
        at,
        tuple(by_id[m.id] for m in new if what(m) == "merge"),
        tuple(gone),
        tuple(by_id[m.id] for m in new if what(m) == "conflict"),
        None if prof is None else by_id[prof.id],
    )


def _similar(facts: list[Memory], embedder: Embedder | None, near: float) -> Similar:
    if embedder is None:
        return text_similar(near)
    from ..retrieval.vectors import unit_vectors

    vecs = unit_vectors(embedder.embed_passages([m.content for m in facts]), embedder)
    return vector_similar({m.id: list(v) for m, v in zip(facts, vecs, strict=True)}, near)


def _fitting(group: list[Memory]) -> list[Memory]:
    """The latest members of ``group`` (by recency) whose sources fit one record."""
    out: list[Memory] = []
    for m in reversed(group):
        if len(union_sources([*out, m])) > MAX_SOURCES:
            break
        out.insert(0, m)
    return out


def _profile(live: list[Memory], newest: Any, max_facts: int, ns: str) -> Memory | None:
    """The profile of ``live`` (the latest semantic fact of each key: no
    summaries, steps or notes), or None without keys."""
    latest: dict[str, Memory] = {}
    for m in sorted((m for m in live if m.key is not None and m.kind == "semantic"), key=newest):
        latest[m.key or ""] = m
    chosen: list[Memory] = []
    for m in sorted(latest.values(), key=lambda m: (-m.importance, m.key or "")):
        if len(chosen) < max_facts and len(union_sources([*chosen, m])) <= MAX_SOURCES:
            chosen.append(m)
    if not chosen:
        return None
    chosen.sort(key=lambda m: m.key or "")
    facts = {m.key or "": m.content for m in chosen}
    return Memory(
        id=derived_id("cp", *(f"{m.key}={m.id}" for m in chosen)),
        content="\n".join(f"{k}: {v}" for k, v in facts.items()),
        sources=tuple(union_sources(chosen)), kind="semantic", key=PROFILE_KEY,
        importance=1.0, namespace=ns,
        meta={CONSOLIDATED_FROM: [m.id for m in chosen], WHAT: "profile", "facts": facts},
    )  # fmt: skip


def _item(m: Memory) -> dict[str, Any]:
    return {
        "id": m.id, "content": m.content, "sources": list(m.sources), "kind": m.kind,
        "key": m.key, "importance": m.importance, "namespace": m.namespace, "meta": m.meta,
    }  # fmt: skip
