"""`RuleExtractor`: offline, standard-library facts people state about themselves.

Patterns (``patterns.py``) turn a clause into a `Fact`: a key such as
``user.employer``, a value, and whether it states or negates. Against what
is visible at the anchor, a fact becomes a proposal: a new single-valued
value supersedes the old one, a negation retracts the value it names,
multi-valued keys accumulate, and anything already known is left alone.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache

from ..errors import InvalidInput
from ..model import ROLES, Event, Memory
from .devices import DEVICE_CHANGE, device_kind
from .edges import edge_proposals
from .patterns import (
    CLAUSE,
    EN,
    MOVING,
    MULTI,
    NOT_SELF,
    QUESTION,
    SINGLE,
    TEMPLATES,
    UPCOMING,
    ZH,
)
from .proposal import ADD, DELETE, UPDATE, Proposal, apply

_CJK = re.compile(r"[\u3400-\u9fff]")
_LEAD = re.compile(
    r"^(?:其实|对了|另外|嗯+|哦|啊|还有|不过|但是|所以|而且|哈哈|那|actually|also|oh|well|so|btw|"
    r"by the way|and|but)[，, ]*",
    re.IGNORECASE,
)
_TAIL_ZH = re.compile(r"(?:了|啦|呢|吧|的|哦|呀)+$")
_TAIL_EN = re.compile(r"\s+(?:anymore|now|too|as well|though)$", re.IGNORECASE)
_SELF = re.compile(r"^我(?!" + NOT_SELF + ")")
_SUBJECT = re.compile(r"^(?:我|你|他|她|它|这|那|大家|别人|" + NOT_SELF + ")")
_ALL = frozenset({"宠物", "pets", "a pet"})


@dataclass(frozen=True)
class Fact:
    """One thing a clause says about the user: ``op`` is ``"add"`` or ``"delete"``."""

    op: str
    key: str
    value: str
    lang: str
    upcoming: bool = False
    """A move still to come (``user.location`` only): the text says "is moving to"."""
    replaces: str | None = None
    """A change of device ("换了小米14", "switched to a Pixel"): the kind of
    device it replaces (``"phone"``, ``"laptop"``, ``"tablet"`` or ``"device"``)."""

    @property
    def content(self) -> str:
        """The record text, in the clause's language."""
        zh, en = MOVING if self.upcoming else TEMPLATES[self.key]
        return (zh if self.lang == "zh" else en).format(v=self.value)


def language(text: str) -> str:
    """``"zh"`` when ``text`` has Chinese characters, else ``"en"``."""
    return "zh" if _CJK.search(text) else "en"


def norm(value: str) -> str:
    """A value folded for comparison: case, spaces and punctuation dropped."""
    return "".join(c for c in value.casefold() if c.isalnum())


def same_value(a: str, b: str) -> bool:
    """Whether two values name the same thing (one contains the other)."""
    x, y = norm(a), norm(b)
    return bool(x and y) and (x == y or x in y or y in x)


class RuleExtractor:
    """Chinese and English patterns for name, where one lives or moves to, job,
    employer, school, likes, dislikes, diet, allergies, pets, family, birthday,
    devices (a change of device replaces the old one of its kind), sport and
    plans. Standard library only, deterministic.

    ``roles`` are the roles whose messages are read (``("user",)`` by
    default; add ``"assistant"`` to read replies too). ``edges=True`` also
    proposes the relations messages state between named things
    (`branchmem.extract.edges`: owns, member of, depends on, uses, ...).

    >>> [(f.key, f.value) for f in RuleExtractor().parse("我在腾讯做产品经理。")]
    [('user.employer', '腾讯'), ('user.job', '产品经理')]
    """

    def __init__(self, *, roles: Iterable[str] = ("user",), edges: bool = False) -> None:
        self.edges = edges
        self.roles = tuple(roles)
        bad = [r for r in self.roles if r not in ROLES]
        if not self.roles or bad:
            raise InvalidInput(f"roles must be some of {', '.join(ROLES)}, got {self.roles!r}")

    def parse(self, text: str) -> list[Fact]:
        """Every fact stated in ``text``, clause by clause (questions and
        suppositions state nothing)."""
        return list(_parse(text))

    def propose(self, window: list[Event], visible: list[Memory]) -> list[Proposal]:
        """Facts of the window's messages, reconciled with what is visible."""
        at = {e.id: i for i, e in enumerate(window)}
        out: list[Proposal] = []
        for i, ev in enumerate(window):
            if ev.role not in self.roles:
                continue
            for f in _parse(ev.content):
                state = apply(visible, out)
                mine = [m for m in state if m.key == f.key and m.target is None]

                def newer(m: Memory, i: int = i) -> bool:
                    return max((at.get(s, -1) for s in m.sources), default=-1) >= i

                out += _reconcile(f, ev.id, mine, newer)
            if self.edges:
                out += edge_proposals(ev.id, ev.content)
        return out


@lru_cache(maxsize=4096)
def _parse(text: str) -> tuple[Fact, ...]:
    """`RuleExtractor.parse`, cached: extraction after every message reads each
    message once per call while it stays in the window."""
    out: dict[tuple[str, str], Fact] = {}
    carry = False  # "我叫张伟，住在南京": the subject carries to the next clause
    for raw in CLAUSE.split(text):
        clause = _LEAD.sub("", raw.strip()).strip()
        if not clause or QUESTION.search(clause):
            carry = False
            continue
        lang = language(clause)
        if lang == "zh":
            if _SELF.match(clause):
                carry = True
            elif carry and not _SUBJECT.match(clause):
                clause = "我" + clause
            else:
                carry = False
        seen: set[str] = set()
        for key, op, pat in ZH if lang == "zh" else EN:
            if key in seen:
                continue
            m = pat.search(clause)
            if m is None:
                continue
            value = _clean(m.group("v"), lang)
            if value:
                seen.add(key)
                upcoming = key == "user.location" and op == "add" and bool(UPCOMING.search(clause))
                change = key == "user.device" and op == "add" and DEVICE_CHANGE.search(clause)
                kind = (device_kind(value) or device_kind(clause) or "device") if change else None
                out.setdefault((key, norm(value)), Fact(op, key, value, lang, upcoming, kind))
    return tuple(out.values())


def _reconcile(
    f: Fact, source: str, mine: list[Memory], newer: Callable[[Memory], bool]
) -> list[Proposal]:
    meta = {"value": f.value, "lang": f.lang, "extractor": "rules"}
    if f.op == DELETE:
        return [
            Proposal(DELETE, sources=(source,), target=m.id, key=f.key)
            for m in mine
            if not newer(m) and (f.value in _ALL or same_value(_value(m), f.value))
        ]
    if f.key in MULTI:
        if any(same_value(_value(m), f.value) for m in mine):
            return []
        if f.replaces is not None:  # a new device replaces the old one of its kind
            same = [m for m in mine if not newer(m) and _kind(m) == f.replaces]
            if f.replaces == "device" and len(mine) == 1 and not newer(mine[0]):
                same = mine
            if same:
                *older, last = same
                up = Proposal(UPDATE, f.content, (source,), key=f.key, target=last.id, meta=meta)
                return [up] + [
                    Proposal(DELETE, sources=(source,), target=m.id, key=f.key) for m in older
                ]
        return [Proposal(ADD, f.content, (source,), key=f.key, meta=meta)]
    assert f.key in SINGLE
    if any(newer(m) for m in mine) or any(norm(_value(m)) == norm(f.value) for m in mine):
        return []
    if not mine:
        return [Proposal(ADD, f.content, (source,), key=f.key, meta=meta)]
    *older, last = mine
    out = [Proposal(UPDATE, f.content, (source,), key=f.key, target=last.id, meta=meta)]
    return out + [Proposal(DELETE, sources=(source,), target=m.id, key=f.key) for m in older]


def _kind(m: Memory) -> str:
    return device_kind(_value(m)) or device_kind(m.content) or "device"


def _value(m: Memory) -> str:
    v = (m.meta or {}).get("value")
    return v if isinstance(v, str) else m.content


def _clean(value: str, lang: str) -> str:
    value = value.strip(" \t'\"“”‘’")
    if lang == "zh":
        return _TAIL_ZH.sub("", value).strip()
    return _TAIL_EN.sub("", value).strip(" .,")
