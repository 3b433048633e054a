"""A consolidation falls with any of its inputs.

A consolidated record (a merge of duplicates, a profile: `branchmem.consolidate`)
names its inputs in ``meta["consolidated_from"]`` and is sourced from the
union of their sources, so the gate shows it only where every input's
evidence is. An input retracted or superseded later must take it down too:
when a retraction of a record is written, a retraction of every
consolidation that lists that record is written with it, from the same
sources (so it hides the consolidation exactly where the first retraction
hides the input), and so on up (a profile built on a merge); and a
consolidation written after an input was retracted on some branch gets a
retraction from that retraction's sources as it is written. The
consolidation's own retractions of its inputs (`own_retraction_id`) are the
exception: they are how it replaces them.
"""

from __future__ import annotations

import hashlib

from ..engine import Engine
from ..model import CONSOLIDATED_FROM, RETRACTION, Memory


def derived_id(prefix: str, *parts: str) -> str:
    """A stable record id from ``parts`` (a second run writes the same ids)."""
    h = hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:24]
    return f"{prefix}-{h}"


def own_retraction_id(consolidation: str, input_id: str) -> str:
    """The id of the retraction by which ``consolidation`` replaces ``input_id``."""
    return derived_id("cr", consolidation, input_id)


def inputs_of(m: Memory) -> list[str]:
    """The inputs a consolidated record lists (none for any other record)."""
    got = (m.meta or {}).get(CONSOLIDATED_FROM)
    return [x for x in got if isinstance(x, str)] if isinstance(got, list) else []


def cascade(engine: Engine, ns: str, fresh: list[Memory]) -> list[Memory]:
    """The retractions that ``fresh`` (records just written) call for: for a
    retraction, one of every consolidation listing the record it retracts;
    for a consolidation, one for every retraction already written of any of
    its inputs (on some branch the input fell before it was consolidated)."""
    b = engine.backend
    out: list[Memory] = []
    made = [m for m in fresh if m.target is None and inputs_of(m)]
    if made:
        for row in b.retractions_of(ns, {x for c in made for x in inputs_of(c)}):
            r = row.memory
            for c in made:
                if r.target in inputs_of(c) and r.id != own_retraction_id(c.id, r.target or ""):
                    out.append(_falls(r, c, ns))
    hits = {m.target: m for m in fresh if m.target is not None}
    if not hits:
        return out
    # The consolidations of the namespace (read through their index): any one
    # listing a retracted record is sourced from that record's sources too.
    near = b.get_records(ns, b.consolidations(ns))
    for row in near.values():
        c = row.memory
        if c.target is not None:
            continue
        for x in inputs_of(c):
            hit = hits.get(x)
            if hit is not None and hit.id != own_retraction_id(c.id, x):
                out.append(_falls(hit, c, ns))
    return out


def _falls(r: Memory, c: Memory, ns: str) -> Memory:
    """The retraction of consolidation ``c`` that retraction ``r`` (of an input) calls for."""
    return Memory(
        id=derived_id("cc", r.id, c.id),
        content=f"retracts {c.id}",
        sources=r.sources,
        kind=RETRACTION,
        namespace=ns,
        target=c.id,
        importance=0.0,
        created_at=r.created_at,
    )


def consolidations_of(engine: Engine, ns: str, ids: list[str]) -> list[str]:
    """Ids of the consolidated records that list any of ``ids`` among their
    inputs (a purge of an input takes them too: they hold its text)."""
    b = engine.backend
    gone = set(ids)
    near = b.get_records(ns, b.consolidations(ns))
    return [i for i, row in near.items() if gone.intersection(inputs_of(row.memory))]
