"""Newer beats older: a stated value that a later visible record replaces
ranks below it, or is folded into it.

Applied by `search` to the ranked hits (gated, filtered, scored), never to
what the gate decides. For two ranked records ``old`` and ``new``, ``new``
written later (``created_at``, then ``seq``):

* **fold**: ``new`` states a change (`states_change`: 换了, 改为, 今年起,
  现在, no longer, switched to, now, decided, ...) and the two are about the
  same thing: the same ``key``, one key a dotted extension of the other
  (``user.device.phone`` and ``user.device.phone.new``), or, without keys,
  near-duplicate texts (`similar`: at least `OVERLAP` of the smaller set of
  content tokens shared, English function words aside). Or, when the search
  has vectors, the two state the same attribute of the same entity
  (`same_attribute`: the same entities, a cosine of at least `NEAR`, most
  content words in common, different values), with or without a change
  phrase.
  ``old`` leaves the hits (it goes to ``Hits.cut``, saying why) and ``new``
  takes its place and, for the cut-off, its confidence if higher.
* **demote**: the same ``key`` without a stated change (two allergies, two
  drinks the user likes: both may hold). ``old`` stays, ranked right below
  ``new``.

An episodic record (something that happened, a line of a conversation) is
never folded or demoted: what was said stays true as said, and a later line
that uses "now" or "currently" and shares its words replaces nothing.

A query that asks about the past (`asks_history`: 以前, 之前, 原来, used to,
before, previously, history, ...) is left as ranked.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from functools import cached_property, partial
from operator import mul
from typing import TypeVar

from ..engine import Engine
from ..graph.entities import EntityCache
from ..model import Memory
from .cache import rank_cache
from .embed import Embedder
from .fusion import Scored
from .tokenize import get_tokenizer

T = TypeVar("T")

EPISODIC = "episodic"
"""The kind never folded or demoted (see the module)."""

OVERLAP = 0.6
"""Share of the smaller token set two unkeyed texts must have in common."""

NEAR = 0.75
"""Cosine two unit vectors must reach to be about the same attribute
(`same_attribute`); chosen on the tune split (docs/retrieval.md)."""

SAME_WORDS = 0.5
"""Share of the smaller set of words (numbers aside) two texts stating the
same attribute must have in common: a dependency and the advisory naming
its library share an entity and close vectors, not their words."""

_VERSIONED = re.compile(r"\s\S*\d")
_NUMBER = re.compile(r"\d+(?:[.,:]\d+)*")

_HISTORY_ZH = (
    "以前", "之前", "原来", "原先", "曾经", "过去", "当初", "最初", "起初", "一开始",
    "历史", "变化", "变过", "改过", "旧的", "老的", "从前", "早先",
)  # fmt: skip
_HISTORY_EN = re.compile(
    r"\b(used to|before|previous(ly)?|history|histor(ic|ical)|formerly|former|"
    r"earlier|original(ly)?|at first|in the past|old|prior|past|changes?|changed|"
    r"ever|at the start|initially|first plan)\b",
    re.IGNORECASE,
)
_CHANGE_ZH = (
    "换了", "换成", "换到", "改为", "改成", "改用", "改到", "改在", "改去", "变成", "变为",
    "现在", "如今", "目前", "今年起", "起改", "从此", "不再", "已经不", "不用了", "提高到",
    "降低到", "降到", "升到", "涨到", "调整为", "调整到", "迁到", "迁移到", "搬到", "下线",
    "取代", "替换", "代替", "放弃", "决定", "最终", "停用", "更新为", "转为", "改吃",
    "戒了", "新买", "换新",
)  # fmt: skip
_CHANGE_EN = re.compile(
    r"\b(now|no longer|not any ?more|anymore|switched|switch(es|ing)? to|changed|"
    r"changes to|moved to|moving to|replaced|replaces|instead|from now on|decided|"
    r"decision|final(ly)?|dropped|migrat(ed|es|ing)|upgraded|currently|these days|"
    r"stopped|quit|became|becomes|is now|raised to|lowered to|cut to|starting)\b",
    re.IGNORECASE,
)


def asks_history(query: str) -> bool:
    """Whether ``query`` asks about the past (then newer-beats-older is off).

    >>> asks_history("我以前用什么手机？"), asks_history("what did I use before?")
    (True, True)
    >>> asks_history("我现在用什么手机？")
    False
    """
    return any(w in query for w in _HISTORY_ZH) or bool(_HISTORY_EN.search(query))


def states_change(text: str) -> bool:
    """Whether ``text`` states that something changed (a new value replacing one).

    >>> states_change("用户上周换了小米14"), states_change("User now works on billing")
    (True, True)
    >>> states_change("用户对虾过敏")
    False
    """
    return any(w in text for w in _CHANGE_ZH) or bool(_CHANGE_EN.search(text))


def related_keys(a: str | None, b: str | None) -> bool:
    """The same key, or one a dotted extension of the other.

    >>> related_keys("user.phone", "user.phone.new"), related_keys("user.son", "user.daughter")
    (True, False)
    """
    if not a or not b:
        return False
    return a == b or a.startswith(b + ".") or b.startswith(a + ".")


_TOK = get_tokenizer(None)

FUNCTION_WORDS = frozenset(
    _TOK(
        "a an the and or but if so than then that this these those there here it its i me my "
        "we us our you your yours he him his she her hers they them their what which who "
        "whom whose when where why how am is are was were be been being have has had do does "
        "did will would shall should can could may might must to of in on at by for with "
        "from about as into onto over under up down out off again just also too very really "
        "some any all each both no not nor only own such more most other another "
        "oh hi hey hello yes yeah okay ok well lol haha going get got gonna wanna let"
    )
)
"""English function words (as the tokenizer gives them): two chat lines
sharing "I", "am", "going", "with", "what about you" are not about the same
thing, so the overlap of two texts counts the other tokens only."""


def content(tokens: Iterable[str]) -> set[str]:
    """The tokens other than `FUNCTION_WORDS`."""
    return {t for t in tokens if t not in FUNCTION_WORDS}


def similar(a: str, b: str) -> bool:
    """Near-duplicate texts: at least `OVERLAP` of the smaller set of content
    tokens (`content`) is shared."""
    return _overlap(content(_TOK(a)), content(_TOK(b)))


def _overlap(ta: set[str], tb: set[str]) -> bool:
    """`similar` from the two texts' token sets."""
    if not ta or not tb:
        return False
    return len(ta & tb) >= OVERLAP * min(len(ta), len(tb))


def values(text: str) -> frozenset[str]:
    """The numbers a text states (prices, days, versions, times).

    >>> sorted(values("The Pro plan now costs $25.50/month, from 1 May"))
    ['1', '25.50']
    """
    return frozenset(_NUMBER.findall(text))


def _subject(names: frozenset[str]) -> frozenset[str]:
    """The entity names other than a name with a version or number ("log4j 2.14.1",
    "port 6001"): the value may change, the subject may not."""
    return frozenset(n for n in names if not _VERSIONED.search(n))


def _words(text: str) -> set[str]:
    """The text's content tokens (`content`) other than numbers."""
    return {t for t in content(_TOK(text)) if not any(c.isdigit() for c in t)}


class _Facts:
    """What `same_attribute` asks of one record, each part worked out on first
    need and kept (a search asks about every pair of its ranked records)."""

    def __init__(self, memory: Memory, names: frozenset[str]) -> None:
        self.content = memory.content
        self.subject = _subject(names)

    @cached_property
    def words(self) -> set[str]:
        return _words(self.content)

    @cached_property
    def values(self) -> frozenset[str]:
        return values(self.content)

    @cached_property
    def change(self) -> bool:
        return states_change(self.content)


def _same_attribute(old: _Facts, new: _Facts, cosine: float) -> bool:
    """`same_attribute` from the two records' facts."""
    subject = old.subject
    if cosine < NEAR or not subject or subject != new.subject:
        return False
    ta, tb = old.words, new.words  # at least SAME_WORDS of the smaller set shared
    if not (ta and tb) or len(ta & tb) < SAME_WORDS * min(len(ta), len(tb)):
        return False
    va, vb = old.values, new.values
    if va and vb:
        return va != vb
    return new.change and old.content != new.content


def same_attribute(
    old: Memory, new: Memory, cosine: float, old_names: frozenset[str], new_names: frozenset[str]
) -> bool:
    """Whether ``old`` and ``new`` state the same attribute of the same entity
    with different values: the same entities (`graph.entities`, names with a
    version or number aside), a cosine
    of at least `NEAR`, at least `SAME_WORDS` of their words (numbers aside)
    in common, and different numbers (or, where ``new`` states a
    change, different texts).

    >>> a = Memory("a", "The Pro plan costs $20/month", ("e1",))
    >>> b = Memory("b", "The Pro plan costs $25/month", ("e2",))
    >>> same_attribute(a, b, 0.9, frozenset({"pro"}), frozenset({"pro"}))
    True
    >>> same_attribute(a, b, 0.9, frozenset({"pro"}), frozenset({"team"}))
    False
    """
    return _same_attribute(_Facts(old, old_names), _Facts(new, new_names), cosine)


def _later(new: Memory, old: Memory) -> bool:
    return (new.created_at, new.seq, new.id) > (old.created_at, old.seq, old.id)


def relation(
    old: Memory,
    new: Memory,
    near: bool | Callable[[], bool] = False,
    *,
    change: bool | None = None,
    alike: Callable[[], bool] | None = None,
) -> str | None:
    """``"fold"``, ``"demote"`` or None: what ``new`` does to ``old`` (see the
    module); ``near``: the two are about the same attribute (`same_attribute`),
    or a function that says so, asked only where the answer matters.
    ``change`` (whether ``new`` states one, `states_change`) and ``alike``
    (`similar` of the two texts) may be given by a caller that knows them;
    by default they are worked out here."""
    if old.id == new.id or not _later(new, old) or old.kind == EPISODIC:
        return None
    if (old.key is None or new.key is None or related_keys(old.key, new.key)) and (
        near() if callable(near) else near
    ):
        return "fold"
    if states_change(new.content) if change is None else change:
        if related_keys(old.key, new.key):
            return "fold"
        if (
            old.key is None
            and new.key is None
            and (similar(old.content, new.content) if alike is None else alike())
        ):
            return "fold"
    if old.key is not None and old.key == new.key:
        return "demote"
    return None


def near_by(
    mems: Sequence[Memory],
    vectors: Sequence[Sequence[float] | None],
    names: Sequence[frozenset[str]],
) -> Callable[[int, int], bool]:
    """`same_attribute` by position, from each record's unit vector (None:
    not embedded, never near) and entity names (`graph.entities`).

    The cosine is computed only for two records about the same subject (the
    cheap part of `same_attribute`, asked first) and once per pair: a search
    asks about every pair of its ranked records, and a cosine in Python is
    most of what that costs."""
    facts = [_Facts(m, x) for m, x in zip(mems, names, strict=True)]
    cosines: dict[tuple[int, int], float] = {}

    def near(i: int, j: int) -> bool:
        a, b = vectors[i], vectors[j]
        subject = facts[i].subject
        if a is None or b is None or not subject or subject != facts[j].subject:
            return False  # (as `same_attribute` answers without the cosine)
        pair = (i, j) if i < j else (j, i)
        cos = cosines.get(pair)
        if cos is None:
            cos = cosines[pair] = sum(map(mul, a, b))
        return _same_attribute(facts[i], facts[j], cos)

    return near


def order(
    items: Sequence[T],
    memory: Callable[[T], Memory],
    query: str,
    near: Callable[[int, int], bool] | None = None,
) -> tuple[list[T], dict[int, str]]:
    """``items`` (best first) without the folded ones, each record that others
    were folded into taking the best place among them, and reordered so that
    no record ranks above a later one that demotes it; and, by position in
    ``items``, the id of the record each folded one went into (the chain of
    folds followed to its end). ``near(i, j)``, when given, says whether the
    items at ``i`` and ``j`` are about the same attribute (`same_attribute`)."""
    if asks_history(query) or len(items) < 2:
        return list(items), {}
    mems = [memory(x) for x in items]
    n = len(mems)
    # What `relation` asks of one record, worked out once per record, not per pair.
    changes = [states_change(m.content) for m in mems]
    tokens: dict[int, set[str]] = {}

    def token_set(x: int) -> set[str]:
        got = tokens.get(x)
        if got is None:
            got = tokens[x] = content(_TOK(mems[x].content))
        return got

    def alike(i: int, j: int) -> bool:
        return _overlap(token_set(i), token_set(j))

    first: dict[int, int] = {}
    blockers: list[set[int]] = [set() for _ in range(n)]
    later = [(m.created_at, m.seq, m.id) for m in mems]  # `_later`'s order
    for i in range(n):
        for j in range(n):
            if not later[j] > later[i] or mems[i].id == mems[j].id:
                continue  # (`relation` answers None at once)
            asked = partial(near, i, j) if near is not None else False
            r = relation(mems[i], mems[j], asked, change=changes[j], alike=partial(alike, i, j))
            if r == "fold" and i not in first:
                first[i] = j
            elif r == "demote":
                blockers[i].add(j)
    root: dict[int, int] = {}
    for i in first:
        j = first[i]
        while j in first:  # folds follow write order, so the chain ends
            j = first[j]
        root[i] = j
    place = list(range(n))
    for i, j in root.items():
        place[j] = min(place[j], i)
    alive = sorted((i for i in range(n) if i not in root), key=lambda i: (place[i], i))
    out: list[int] = []
    placed: set[int] = set()
    waiting = list(alive)
    while waiting:  # demotion follows write order, so there is no cycle
        for pos, i in enumerate(waiting):
            if (blockers[i] - root.keys()) <= placed:
                out.append(i)
                placed.add(i)
                del waiting[pos]
                break
    return [items[i] for i in out], {i: mems[j].id for i, j in root.items()}


def why_folded(into: str) -> str:
    """The explanation's cut-off line for a record folded into a newer one."""
    return (
        f"cut: folded into the newer record {into!r}, which states a change or a new value "
        "(ask about the past, e.g. 'before' or 以前, to see it)"
    )


def apply(
    pairs: Sequence[tuple[Scored, float]],
    query: str,
    near: Callable[[int, int], bool] | None = None,
) -> tuple[list[tuple[Scored, float]], dict[str, str]]:
    """`order` over ``(scored, confidence)`` pairs for `search`: the kept
    pairs, a record folded into carrying the best confidence of its fold,
    then the folded pairs; and folded id -> the id it went into."""
    ordered, gone = order(pairs, lambda p: p[0].memory, query, near)
    best: dict[str, float] = {}
    for i, into in gone.items():
        best[into] = max(best.get(into, 0.0), pairs[i][1])
    kept = [(s, max(c, best.get(s.memory.id, 0.0))) for s, c in ordered]
    folded = {pairs[i][0].memory.id: into for i, into in gone.items()}
    return kept + [pairs[i] for i in sorted(gone)], folded


def nearness(
    engine: Engine,
    ranked: Sequence[Scored],
    emb: Embedder | None,
    pending: frozenset[str],
    epoch: int | None,
) -> Callable[[int, int], bool] | None:
    """`recency_order.near_by` over the ranked records, from the vectors this
    search already has (none in a keyword search, none for a pending record)."""
    if emb is None or len(ranked) < 2:
        return None
    mems = [s.memory for s in ranked]
    have = [m for m in mems if m.id not in pending]
    got = dict(
        zip(
            (m.id for m in have),
            rank_cache(engine).passage_vectors(emb, have, engine.backend, epoch),
            strict=True,
        )
    )
    names = engine.cache("entities", EntityCache)
    return near_by(
        mems,
        [got.get(m.id) for m in mems],
        [names.get(m.namespace, m.id, m.content) for m in mems],
    )
