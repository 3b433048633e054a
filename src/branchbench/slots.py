"""The extractor the branchmem systems hand to `branchmem.Store.extract`.

It implements the library's `branchmem.extract.Extractor` protocol with the
benchmark's own deterministic rules, at clause level:

* every clause of a user message is a fact ``用户说：<clause>``, sourced
  from its message;
* a clause has a *slot*: the first topic of `TOPICS` it mentions
  (``预算`` → ``budget``), else the unit of its last quantity
  (``十八桌`` → ``qty.桌``, ``二十八号`` → ``qty.号``), else none;
* a clause whose topic a visible fact already holds, or whose quantity
  replaces one of the same unit in words of change (``改成``, ``推迟到``,
  ``还是…吧``; see `CHANGE`), is a change of mind: an ``update`` of that
  fact (a supersede, sourced from the new message). The old value, and any
  value of that slot the assistant offered in between, go into
  ``meta["previous"]``, so the library's summaries leave them out on that
  path. Without words of change, quantities of one unit accumulate
  (``现在年包四十二万`` and an offer's ``年包五十万`` are both kept).

No language model is involved: the same input gives the same proposals.
"""

from __future__ import annotations

import re

from branchmem.extract import Proposal, proposal_id
from branchmem.extract.summary import is_summary
from branchmem.model import Event, Memory

from .extract import FACT_PREFIX, topic_key

_CLAUSES = re.compile(r"[，。！？；,!?;\n]+")
_NUM = "零〇一二两三四五六七八九十百千万0-9.半"
_UNITS = (
    "公斤|大卡|千卡|公里|分钟|小时|个月|块钱|万元|"
    "次|号|日|桌|克|斤|元|块|人|个|天|晚|点|岁|米|周|年|楼|层|间|瓶|杯|本|张|台|家|度|分"
)
_QTY = re.compile(f"[{_NUM}]+(?:{_UNITS})|[{_NUM}]*[0-9一二两三四五六七八九十][百千万][{_NUM}]*")


CHANGE = re.compile(
    r"改[成为到在报订约去买用选定签]|换成|换到|提高到|提到|降到|降低到|减到|加到|增加到|推迟到|推到|"
    r"提前到|调整为|调整到|调成|变成|定成|其实|不是.{0,8}而是|还是.{0,12}吧"
)
"""A quantity only replaces one of the same unit when the clause says it changes."""


def slot(clause: str) -> tuple[str | None, str]:
    """The clause's slot key and value (``(None, clause)`` when it has none).

    >>> slot("还是改成一千八百大卡吧")
    ('qty.大卡', '一千八百大卡')
    >>> slot("预算六千左右")
    ('budget', '六千')
    """
    quantities = _QTY.findall(clause)
    value = quantities[-1] if quantities else clause
    key = topic_key(clause)
    if key is not None:
        return key, value
    if quantities:
        return "qty." + (re.sub(f"^[{_NUM}]+", "", value) or "number"), value
    return None, clause


class SlotExtractor:
    """Clause facts with slots; a changed value in a held slot supersedes the old one."""

    def propose(self, window: list[Event], visible: list[Memory]) -> list[Proposal]:
        at = {e.id: i for i, e in enumerate(window)}
        facts = {m.id: m for m in visible if not is_summary(m)}
        known = {m.content for m in facts.values()}
        out: list[Proposal] = []
        for i, ev in enumerate(window):
            if ev.role != "user":
                continue
            for clause in (c.strip() for c in _CLAUSES.split(ev.content)):
                if not clause or FACT_PREFIX + clause in known:
                    continue
                p, replaced = _proposal(clause, ev.id, i, window, facts, at)
                if not p:
                    continue
                out += p
                for m in replaced:
                    del facts[m.id]
                new = p[0]
                facts[proposal_id(new)] = Memory(
                    proposal_id(new), new.content, new.sources, key=new.key, meta=new.meta
                )
                known.add(new.content)
        return out


def _proposal(
    clause: str,
    source: str,
    i: int,
    window: list[Event],
    facts: dict[str, Memory],
    at: dict[str, int],
) -> tuple[list[Proposal], list[Memory]]:
    """The proposals for one clause, and the facts they replace."""
    content = FACT_PREFIX + clause
    key, value = slot(clause)
    held = [m for m in facts.values() if key is not None and m.key == key]
    meta: dict[str, object] = {"value": value}
    change = held and (not key or not key.startswith("qty.") or CHANGE.search(clause))
    if any((m.meta or {}).get("value") == value for m in held):
        return [], []  # the value restated: the slot's fact already holds it
    here = (i, window[i].content.find(clause))
    if any(_said_at(m, at, window) > here for m in held):
        return [], []  # a later message (or clause) holds the slot: this clause is history
    if not change:
        return [Proposal("add", content, (source,), key=key, meta=meta)], []
    *older, last = held
    # What the assistant proposed for this slot since the old value is superseded too.
    since = max(_source_at(m, at) for m in held)
    offered = [
        q
        for e in window[since + 1 : i]
        if e.role == "assistant"
        for c in _CLAUSES.split(e.content)
        if (q := slot(c))[0] == key and q[1] != value
    ]
    if offered:
        meta["previous"] = list(dict.fromkeys(v for _, v in offered))
    p = Proposal("update", content, (source,), key=key, target=last.id, meta=meta)
    drops = [Proposal("delete", sources=(source,), target=m.id, key=key) for m in older]
    return [p, *drops], held


def _said_at(m: Memory, at: dict[str, int], window: list[Event]) -> tuple[int, int]:
    """Where the fact was said in the window: (message, position of its clause)."""
    i = _source_at(m, at)
    return (i, window[i].content.find(m.content.removeprefix(FACT_PREFIX)) if i >= 0 else -1)


def _source_at(m: Memory, at: dict[str, int]) -> int:
    return max((at.get(s, -1) for s in m.sources), default=-1)
