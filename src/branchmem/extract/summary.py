"""Summaries whose sources are exactly what they summarise, and how a change of
mind reaches them.

`SummaryExtractor` condenses every ``every`` messages on the path into one
episodic record sourced from exactly those messages: a summary of a shared
prefix is visible on every branch below it, one covering an abandoned message
is hidden off that branch.

A summary states values, and a value can change later on the path. Two rules
keep a superseded value from surviving in a summary on that path:

* `revise_summaries`: when a fact is updated or deleted, every visible summary
  whose text states a value it replaces (the old value, or one the change
  names in its ``meta["previous"]``) is rewritten (a supersede sourced from the
  summary's messages *and* the change), without the clauses that state it and,
  for an update, with the new fact appended. Only paths with the change see
  the rewrite; elsewhere the old summary stays.
* A summary written after the change leaves out clauses stating a value that a
  visible fact has replaced (its ``meta["previous"]``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ..errors import InvalidInput
from ..model import Event, Memory
from .proposal import ADD, DELETE, UPDATE, Proposal, apply
from .rules import language

_PIECES = re.compile(r"([^，。！？；,.!?;]*[，。！？；,.!?;]?)")
_LABELS = {
    "zh": {"user": "用户", "assistant": "助手", "tool": "工具", "system": "系统", "note": "备注"},
    "en": {"user": "User", "assistant": "Assistant", "tool": "Tool", "system": "System"},
}
_FIX = {"zh": "更正：", "en": "Update: "}


def is_summary(m: Memory) -> bool:
    """Whether ``m`` is a summary record (``meta["summary"]`` is true)."""
    return bool((m.meta or {}).get("summary"))


def without(text: str, old: Iterable[str], keep: Iterable[str] = ()) -> str:
    """``text`` without the clauses that state an ``old`` value. A ``keep``
    value (one still current) is masked first, so it neither saves a clause
    that also states an old value nor loses one whose only match lies inside
    it ("二十五号" contains "十五号").

    >>> without("我在腾讯做产品经理。我养了猫。", ["腾讯"], ["产品经理"])
    '我养了猫。'
    >>> without("我二十五号出发。", ["十五号"], ["二十五号"])
    '我二十五号出发。'
    """
    olds = [o.casefold() for o in old if o]
    keeps = sorted((k.casefold() for k in keep if k), key=len, reverse=True)
    out = []
    for piece in _PIECES.findall(text):
        low = piece.casefold()
        for k in keeps:
            low = low.replace(k, "\0")
        if any(o in low for o in olds):
            continue
        out.append(piece)
    return "".join(out).strip(" ；;，,")


class SummaryExtractor:
    """Every ``every`` messages on the path not yet covered by a visible summary
    become one summary, each message clipped to ``clip`` characters.
    ``partial=True`` also summarises a shorter tail (before a model call).

    >>> from branchmem import Store
    >>> store = Store()
    >>> _ = store.add_event("e1", content="你好")
    >>> _ = store.add_event("e2", parent="e1", role="assistant", content="你好！")
    >>> [m.content for m in store.extract(at="e2", extractor=SummaryExtractor(every=2))]
    ['用户：你好；助手：你好！']
    """

    def __init__(self, *, every: int = 4, clip: int = 60, partial: bool = False) -> None:
        for name, v in (("every", every), ("clip", clip)):
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise InvalidInput(f"{name} must be a positive integer, got {v!r}")
        self.every = every
        self.clip = clip
        self.partial = partial

    def propose(self, window: list[Event], visible: list[Memory]) -> list[Proposal]:
        covered = {s for m in visible if is_summary(m) for s in m.sources}
        start = 0
        for i, e in enumerate(window):
            if e.id in covered:
                start = i + 1
        rest = window[start:]
        facts = [m for m in visible if not is_summary(m)]
        old = [v for m in facts for v in (m.meta or {}).get("previous", []) if isinstance(v, str)]
        keep = [v for m in facts if isinstance(v := (m.meta or {}).get("value"), str)]
        out = []
        while len(rest) >= self.every or (self.partial and rest):
            chunk, rest = rest[: self.every], rest[self.every :]
            out.append(self._summary(chunk, old, keep))
        return out

    def _summary(self, chunk: list[Event], old: list[str], keep: list[str]) -> Proposal:
        lang = language("".join(e.content for e in chunk))
        sep = "；" if lang == "zh" else "; "
        colon = "：" if lang == "zh" else ": "
        labels = _LABELS[lang]
        lines = []
        for e in chunk:
            text = " ".join(without(e.content, old, keep).split())
            if len(text) > self.clip:
                text = text[: self.clip] + "…"
            if text:
                lines.append(f"{labels.get(e.role, e.role)}{colon}{text}")
        meta = {"summary": True, "events": len(chunk), "lang": lang, "extractor": "summary"}
        return Proposal(
            ADD,
            sep.join(lines) or "…",
            tuple(e.id for e in chunk),
            key="summary",
            kind="episodic",
            importance=0.3,
            meta=meta,
        )


_LABEL = re.compile(r"^(?:用户|助手|工具|系统|备注|更正|User|Assistant|Tool|System|Update)[：:] ?")


def _revise_lines(lines: list[str], old: list[str], keep: list[str]) -> list[str]:
    """The summary's lines without the clauses stating ``old``; a line left
    empty goes, its role label with it."""
    out = []
    for line in lines:
        m = _LABEL.match(line)
        label, body = (m.group(0), line[m.end() :]) if m else ("", line)
        body = without(body, old, keep)
        if body:
            out.append(label + body)
    return out


def _replaced(target: Memory, p: Proposal) -> list[str]:
    """The values a change of ``target`` replaces: its ``value``, the values it
    replaced before, and those ``p`` names (an assistant's restatement of the
    old value in other words, say) in its ``meta["previous"]``."""
    values = [(target.meta or {}).get("value")]
    values += (target.meta or {}).get("previous", []) + (p.meta or {}).get("previous", [])
    return list(dict.fromkeys(v for v in values if isinstance(v, str) and v))


def revise_summaries(visible: list[Memory], proposals: list[Proposal]) -> list[Proposal]:
    """The rewrites of visible summaries that state a value ``proposals`` change.

    For each ``update`` or ``delete`` of a fact, every summary visible (after
    the earlier proposals) whose text states a value the change replaces (the
    fact's ``meta["value"]`` and ``meta["previous"]``, and the proposal's
    ``meta["previous"]``) is superseded by one without it, sourced from its
    own sources and the change's.
    """
    out: list[Proposal] = []
    for p in proposals:
        if p.op not in (UPDATE, DELETE) or p.target is None:
            continue
        state = {m.id: m for m in apply(visible, proposals[: proposals.index(p)] + out)}
        target = state.get(p.target)
        if target is None or is_summary(target):
            continue
        new = (p.meta or {}).get("value") if p.op == UPDATE else None
        keep = [new] if isinstance(new, str) else []
        old = [v for v in _replaced(target, p) if v not in keep]
        for s in state.values():
            low = s.content.casefold()
            if not is_summary(s) or not any(v.casefold() in low for v in old):
                continue
            lang = (s.meta or {}).get("lang", language(s.content))
            sep = "；" if lang == "zh" else "; "
            lines = _revise_lines(s.content.split(sep), old, keep)
            if sep.join(lines) == s.content:
                continue
            if p.op == UPDATE:
                lines.append(f"{_FIX.get(lang, 'Update: ')}{p.content}")
            text = sep.join(lines)
            sources = tuple(dict.fromkeys(s.sources + p.sources))
            meta = {**(s.meta or {}), "revised": True}
            out.append(Proposal(UPDATE, text or "…", sources, target=s.id, meta=meta))
    return out


__all__ = ["ADD", "SummaryExtractor", "is_summary", "revise_summaries", "without"]
