"""What an extractor proposes, and the protocol every extractor follows.

An extractor reads the window (the last events on the path to the anchor)
and the memories visible there, and proposes changes; it never writes.
`branchmem.extract.writer` checks each proposal against the gate and
writes it as a gated record.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, runtime_checkable

from ..errors import ExtractionError
from ..model import Event, Memory

ADD = "add"
UPDATE = "update"
DELETE = "delete"
EDGE = "edge"
OPS = (ADD, UPDATE, DELETE, EDGE)


@dataclass(frozen=True)
class Proposal:
    """One change an extractor proposes.

    * ``add``: a new record (``content``, ``key``, ``kind``, ``importance``, ``meta``;
      ``kind`` defaults to ``"semantic"``, ``importance`` to 0.5).
    * ``update``: ``target`` (a visible memory's id, or the `proposal_id` of an
      ``add`` earlier in the same batch) is replaced by ``content``; a
      `Store.supersede`, so the old value stays on paths without the change.
      Fields left ``None`` keep the old record's.
    * ``delete``: ``target`` is retracted (a `Store.retract`).
    * ``edge``: the relation ``triple`` (subject, predicate, object), written by
      `Store.add_edge`; one already visible is not written again.

    ``sources`` are the events the change comes from; they must lie on the
    anchor's path, or the proposal is dropped.

    >>> Proposal("add", "User is allergic to peanuts", ("e1",), key="user.allergy").op
    'add'
    """

    op: str
    content: str = ""
    sources: tuple[str, ...] = ()
    key: str | None = None
    target: str | None = None
    kind: str | None = None
    importance: float | None = None
    meta: dict[str, Any] | None = field(default=None, compare=False)
    triple: tuple[str, str, str] | None = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-friendly dict of every field (``triple`` only on an edge)."""
        return ({"triple": list(self.triple)} if self.triple is not None else {}) | {
            "op": self.op,
            "content": self.content,
            "sources": list(self.sources),
            "key": self.key,
            "target": self.target,
            "kind": self.kind,
            "importance": self.importance,
            "meta": self.meta,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Proposal:
        """The inverse of `to_dict` (missing fields take their defaults)."""
        return cls(
            op=data["op"],
            content=data.get("content", ""),
            sources=tuple(data.get("sources", ())),
            key=data.get("key"),
            target=data.get("target"),
            kind=data.get("kind"),
            importance=data.get("importance"),
            meta=data.get("meta"),
            triple=tuple(data["triple"]) if data.get("triple") else None,
        )


@dataclass(frozen=True)
class Dropped:
    """A proposal the writer refused (fail closed), and why."""

    proposal: Proposal
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {"proposal": self.proposal.to_dict(), "reason": self.reason}


@runtime_checkable
class Extractor(Protocol):
    """Anything with ``propose(window, visible) -> list[Proposal]``.

    ``window`` is the last events on the path to the anchor, root first;
    ``visible`` the memories visible at the anchor (no retractions).
    """

    def propose(self, window: list[Event], visible: list[Memory]) -> list[Proposal]: ...


class ChainExtractor:
    """Several extractors in turn; each later one sees what earlier ones proposed
    as if it were already visible, so a summary can follow a fact's change.

    >>> from branchmem.extract import RuleExtractor, SummaryExtractor
    >>> chain = ChainExtractor(RuleExtractor(), SummaryExtractor(every=4))
    """

    def __init__(self, *extractors: Extractor) -> None:
        if not extractors:
            raise ExtractionError("ChainExtractor needs at least one extractor")
        self.extractors = extractors

    def propose(self, window: list[Event], visible: list[Memory]) -> list[Proposal]:
        out: list[Proposal] = []
        for ex in self.extractors:
            out += checked_proposals(ex.propose(window, apply(visible, out)), ex)
        return out


def proposal_id(p: Proposal) -> str:
    """The id the record of ``p`` gets: the same proposal always gets the same id,
    so extracting twice writes once, and an ``update`` may target an ``add``
    of the same batch by this id.

    >>> proposal_id(Proposal("add", "x", ("e1",))) == proposal_id(Proposal("add", "x", ("e1",)))
    True
    """
    fields: list[Any] = [p.op, p.target, p.content, p.key, sorted(p.sources)]
    if p.triple is not None:
        fields.append(list(p.triple))
    blob = json.dumps(fields, ensure_ascii=False)
    return "x_" + hashlib.sha256(blob.encode("utf-8")).hexdigest()[:32]


def updated_meta(old: Memory, p: Proposal) -> dict[str, Any] | None:
    """The meta of the record that replaces ``old``: the proposal's (or the old
    one's), plus ``previous``, every value this fact held before on the path
    (the old record's ``previous`` and ``value``, and any the proposal names),
    so that a summary written later can leave superseded values out."""
    meta = dict(p.meta) if p.meta is not None else dict(old.meta or {})
    prior = list((old.meta or {}).get("previous", []))
    prior += [v for v in (p.meta or {}).get("previous", []) if v not in prior]
    value = (old.meta or {}).get("value")
    if isinstance(value, str) and value and value != meta.get("value") and value not in prior:
        prior.append(value)
    if prior:
        meta["previous"] = prior
    return meta or None


def apply(visible: list[Memory], proposals: list[Proposal]) -> list[Memory]:
    """``visible`` as it will be once ``proposals`` are written (ids by `proposal_id`).

    Proposals whose target is not there are skipped here; the writer drops them.
    """
    if not proposals:
        return visible
    cur = {m.id: m for m in visible}
    for p in proposals:
        if p.op == EDGE:
            continue  # an edge is no memory: it is not among the visible ones
        if p.op == ADD:
            cur[proposal_id(p)] = Memory(
                proposal_id(p),
                p.content,
                p.sources,
                kind=p.kind or "semantic",
                key=p.key,
                importance=0.5 if p.importance is None else p.importance,
                meta=p.meta,
            )
        elif p.target in cur:
            old = cur.pop(p.target)
            if p.op == UPDATE:
                cur[proposal_id(p)] = replace(
                    old,
                    id=proposal_id(p),
                    content=p.content,
                    sources=p.sources,
                    kind=p.kind or old.kind,
                    key=old.key if p.key is None else p.key,
                    importance=old.importance if p.importance is None else p.importance,
                    meta=updated_meta(old, p),
                )
    return list(cur.values())


def checked_proposals(result: Any, extractor: object) -> list[Proposal]:
    """``result`` as a list of proposals, or `ExtractionError` naming the extractor."""
    name = type(extractor).__name__
    if not isinstance(result, (list, tuple)):
        raise ExtractionError(
            f"{name}.propose() must return a list of Proposal, got {type(result).__name__}"
        )
    for p in result:
        if not isinstance(p, Proposal):
            raise ExtractionError(
                f"{name}.propose() returned a {type(p).__name__} where a Proposal belongs; "
                "build each change with branchmem.extract.Proposal"
            )
    return list(result)
