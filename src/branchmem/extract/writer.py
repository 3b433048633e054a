"""The writer: proposals in, gated records out, failing closed.

Every proposal is checked before anything is written: its sources must be
events of the window read on the path to the anchor (or sources of a memory
visible there, which the gate already put on the path), its target a memory visible there (or an
``add`` earlier in the same batch), its fields valid. A proposal that fails
is dropped and reported in `Extraction.dropped`, never written. Record ids
come from the proposal (`proposal_id`), so running the same extraction again
finds every record already there and writes nothing.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from ..errors import ExtractionError, InvalidInput, UnknownMemory
from ..model import KINDS, Event, Memory
from ..ops.dedup import same_text
from ..validate import check_id, check_importance, check_int, check_meta, check_namespace
from .proposal import (
    ADD,
    DELETE,
    EDGE,
    OPS,
    UPDATE,
    Dropped,
    Extractor,
    Proposal,
    checked_proposals,
    proposal_id,
    updated_meta,
)
from .summary import revise_summaries

if TYPE_CHECKING:
    from ..api import StoreAPI

log = logging.getLogger("branchmem.extract")


@dataclass(frozen=True)
class Extraction:
    """What one `extract` call did: records written, proposals dropped (and
    why), and how many proposals were already written by an earlier call."""

    at: str
    written: tuple[Memory, ...]
    dropped: tuple[Dropped, ...]
    already: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "at": self.at,
            "written": [m.to_dict() for m in self.written],
            "dropped": [d.to_dict() for d in self.dropped],
            "already": self.already,
        }


def extract(
    store: StoreAPI,
    at: str,
    *,
    extractor: Extractor | None = None,
    window: int = 8,
    namespace: str = "default",
    actor: str | None = None,
) -> Extraction:
    """Run ``extractor`` (default: `RuleExtractor`) on the last ``window``
    events of the path to ``at`` and the memories visible there, and write
    what it proposes as gated records.

    >>> from branchmem import Store
    >>> store = Store()
    >>> _ = store.add_event("e1", content="I'm allergic to peanuts.")
    >>> [m.content for m in extract(store, "e1").written]
    ['User is allergic to peanuts']
    >>> extract(store, "e1").written
    ()
    """
    check_int(window, "window (events to read)", 1)
    if not isinstance(at, str) or not at:
        raise InvalidInput(f"`at` must be an event id or a branch name, got {at!r}")
    ns = check_namespace(namespace)
    if extractor is None:
        from .rules import RuleExtractor

        extractor = RuleExtractor()
    elif not callable(getattr(extractor, "propose", None)):
        raise InvalidInput(
            f"extractor must have propose(window, visible), got {type(extractor).__name__}"
        )
    events, visible = window_at(store, at, ns, window)
    if not events:
        return Extraction(at, (), (), 0)
    proposals = checked_proposals(extractor.propose(events, visible), extractor)
    proposals += revise_summaries(visible, proposals)
    # On the path: the window, and the sources of what is visible (the gate put them there).
    on_path = {e.id for e in events} | {s for m in visible for s in m.sources}
    good, dropped = _check(proposals, on_path, {m.id: m for m in visible})
    for d in dropped:
        log.warning("extract at %r dropped a proposal: %s", at, d.reason)
    known = _visible_triples(store, at, ns) if any(p.op == EDGE for p, _ in good) else set()
    written, already = _write(store, ns, good, actor, known)
    return Extraction(at, tuple(written), tuple(dropped), already)


def window_at(store: StoreAPI, at: str, ns: str, window: int) -> tuple[list[Event], list[Memory]]:
    """What an extractor reads at ``at``: the last ``window`` events of the
    path (`UnknownAnchor` for an unknown anchor) and the memories visible there."""
    events = store.path(at, namespace=ns, last=window)
    if not events:
        return [], []
    visible = [
        m for m in store.memories(at=at, namespace=ns) if m.target is None and m.kind in KINDS
    ]
    return events, visible


def _check(
    proposals: list[Proposal], on_path: set[str], visible: dict[str, Memory]
) -> tuple[list[tuple[Proposal, Memory | None]], list[Dropped]]:
    """Split into (proposal, its target) pairs to write and dropped ones."""
    good: list[tuple[Proposal, Memory | None]] = []
    dropped: list[Dropped] = []
    live = dict(visible)  # what a later proposal may target
    seen: set[str] = set()
    for p in proposals:
        why = _problem(p, on_path)
        target = live.get(p.target) if p.target is not None else None
        if why is None and p.op not in (ADD, EDGE) and target is None:
            why = (
                f"target {p.target!r} is not a memory visible at the anchor (or it was "
                "already changed in this extraction)"
            )
        if why is not None:
            dropped.append(Dropped(p, why))
            continue
        rid = proposal_id(p)
        if rid in seen:
            continue
        seen.add(rid)
        if target is not None:
            del live[target.id]
        if p.op == UPDATE and target is not None:
            p = replace(p, meta=updated_meta(target, p))
        if p.op != DELETE:
            live[rid] = _as_memory(rid, p, target)
        good.append((p, target))
    return good, dropped


def _problem(p: Proposal, on_path: set[str]) -> str | None:
    if p.op not in OPS:
        return f"op {p.op!r} is not one of {', '.join(OPS)}"
    if not p.sources or not all(isinstance(s, str) for s in p.sources):
        return "a proposal must name its source events (sources=[event ids])"
    off = [s for s in p.sources if s not in on_path]
    if off:
        return (
            f"source(s) {off!r} are not events read on the path to the anchor (the "
            "window) nor sources of a memory visible there"
        )
    if p.op == EDGE:
        t = p.triple
        if (
            not isinstance(t, tuple)
            or len(t) != 3
            or not all(isinstance(x, str) and x.strip() for x in t)
        ):
            return "an edge needs triple=(subject, predicate, object), three non-empty names"
        return None
    if p.op == ADD and p.target is not None:
        return "an add has no target; use op='update' to change a memory"
    if p.op != ADD and not isinstance(p.target, str):
        return f"an {p.op} needs target=<id of a visible memory>"
    if p.op == DELETE:
        return None
    if not isinstance(p.content, str) or not p.content.strip():
        return "content must be non-empty text"
    if p.kind is not None and p.kind not in KINDS:
        return f"kind {p.kind!r} is not one of {', '.join(KINDS)}"
    try:
        if p.key is not None:
            check_id(p.key, "key")
        if p.importance is not None:
            check_importance(p.importance)
        check_meta(p.meta)
    except InvalidInput as exc:
        return str(exc)
    return None


def _repeats(store: StoreAPI, ns: str, p: Proposal) -> bool:
    """Is the proposal's text visible under its key at its first source already?"""
    if p.key is None or not p.sources:
        return False
    want = same_text(p.content)
    seen = store.memories(at=p.sources[0], namespace=ns)
    return any(m.key == p.key and m.target is None and same_text(m.content) == want for m in seen)


def _as_memory(rid: str, p: Proposal, old: Memory | None) -> Memory:
    return Memory(
        rid,
        p.content,
        p.sources,
        kind=p.kind or (old.kind if old else "semantic"),
        key=p.key if p.key is not None or old is None else old.key,
        meta=p.meta,
    )


def _visible_triples(store: StoreAPI, at: str, ns: str) -> set[tuple[str, str, str]]:
    """The relations the edges visible at ``at`` state (normalised)."""
    out = set()
    for m in store.memories(at=at, namespace=ns, kind=EDGE):
        e = (m.meta or {}).get("edge") or {}
        out.add(_triple_key((e.get("subject", ""), e.get("predicate", ""), e.get("object", ""))))
    return out


def _triple_key(t: tuple[str, str, str]) -> tuple[str, str, str]:
    a, b, c = (" ".join(str(x).casefold().split()) for x in t)
    return a, b, c


def _write(
    store: StoreAPI,
    ns: str,
    good: list[tuple[Proposal, Memory | None]],
    actor: str | None = None,
    known: set[tuple[str, str, str]] | None = None,
) -> tuple[list[Memory], int]:
    written: list[Memory] = []
    already = 0
    for p, target in good:
        rid = proposal_id(p)
        if p.op == EDGE and p.triple is not None:
            key = _triple_key(p.triple)
            if key in (known or set()):
                already += 1
                continue
            s, pred, o = p.triple
            try:
                store.add_edge(
                    s, pred, o, sources=list(p.sources), namespace=ns, id=rid, actor=actor
                )
            except InvalidInput as exc:
                log.warning("extract dropped an edge: %s", exc)
                continue
            written.append(store.get_memory(rid, namespace=ns))
            (known if known is not None else set()).add(key)
            continue
        try:
            store.get_memory(rid, namespace=ns)
            already += 1
            continue
        except UnknownMemory:
            pass
        if p.op == ADD and _repeats(store, ns, p):
            already += 1  # one fact once: the same text is visible under the key already
            continue
        if p.op == ADD:
            fields: dict[str, Any] = {"kind": p.kind or "semantic", "key": p.key, "meta": p.meta}
            if p.importance is not None:
                fields["importance"] = p.importance
            written.append(
                store.add_memory(
                    p.content, sources=list(p.sources), namespace=ns, id=rid, actor=actor, **fields
                )
            )
        elif p.op == UPDATE:
            assert target is not None
            extra: dict[str, Any] = {
                k: v
                for k, v in (("kind", p.kind), ("key", p.key), ("importance", p.importance))
                if v is not None
            }
            written.append(
                store.supersede(
                    target.id,
                    p.content,
                    sources=list(p.sources),
                    namespace=ns,
                    id=rid,
                    meta=p.meta,
                    actor=actor,
                    **extra,
                )
            )
        else:
            assert target is not None
            written.append(
                store.retract(target.id, sources=list(p.sources), namespace=ns, id=rid, actor=actor)
            )
    return written, already


__all__ = ["Extraction", "ExtractionError", "extract"]
