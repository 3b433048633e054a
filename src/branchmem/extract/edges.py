# ruff: noqa: E501  (one regular expression per line reads better than split strings)
"""Relations between named things, in Chinese and English: the edges that
`RuleExtractor(edges=True)` proposes (and `LLMExtractor(edges=True)` asks for).

Each pattern sees one clause and names a subject, a verb and an object:
"payment-service 依赖 libfoo" and "auth-service depends on libfoo" both give
``("…", "depends on", "libfoo")``. The first person becomes the user
("我喜欢咖啡" gives ``("用户", "likes", "咖啡")``); other pronouns name
nobody and give nothing.
"""

from __future__ import annotations

import re

from .proposal import EDGE, Proposal

_N = r"(?P<{g}>[^，。！？；、,!?;\s][^，。！？；、,!?;]{{0,38}}?)"
_S, _O = _N.format(g="s"), _N.format(g="o")
_ZH_ADV = r"\s*(?:现在|目前|一直|也|还|已经|主要|正在|都)?\s*"

ZH: list[tuple[str, re.Pattern[str]]] = [
    ("owns", re.compile(rf"^{_S}{_ZH_ADV}(?:负责|主管|维护|拥有)\s*{_O}$")),
    ("member of", re.compile(rf"^{_S}{_ZH_ADV}(?:属于|隶属于?|加入了?)\s*{_O}$")),
    ("member of", re.compile(rf"^{_S}{_ZH_ADV}是\s*{_O}\s*的成员$")),
    ("depends on", re.compile(rf"^{_S}{_ZH_ADV}依赖(?:于)?\s*{_O}$")),
    ("uses", re.compile(rf"^{_S}{_ZH_ADV}(?:使用|用了|采用|用的是)\s*{_O}$")),
    ("located in", re.compile(rf"^{_S}{_ZH_ADV}(?:位于|部署在|设在)\s*{_O}$")),
    ("is a", re.compile(rf"^{_S}{_ZH_ADV}是(?:一个|一种|一款|个)\s*{_O}$")),
    ("belongs to", re.compile(rf"^{_S}{_ZH_ADV}是\s*{_O}\s*的(?:服务|项目|系统|组件|库)?$")),
    ("likes", re.compile(rf"^{_S}{_ZH_ADV}(?:喜欢|爱吃|爱喝|爱)\s*{_O}$")),
    ("affected by", re.compile(rf"^{_S}{_ZH_ADV}(?:受|有)\s*{_O}\s*(?:影响|漏洞)$")),
]

EN: list[tuple[str, re.Pattern[str]]] = [
    (
        "owns",
        re.compile(
            rf"^{_S}\s+(?:owns?|maintains?|am responsible for|is responsible for|is in charge of)\s+{_O}$",
            re.I,
        ),
    ),
    (
        "member of",
        re.compile(
            rf"^{_S}\s+(?:is a member of|am a member of|belongs? to|is part of|joined)\s+{_O}$",
            re.I,
        ),
    ),
    ("depends on", re.compile(rf"^{_S}\s+(?:depends? on|rel(?:ies|y) on|requires?)\s+{_O}$", re.I)),
    ("uses", re.compile(rf"^{_S}\s+(?:uses?|is using|am using|is built on|runs on)\s+{_O}$", re.I)),
    (
        "located in",
        re.compile(rf"^{_S}\s+(?:is located in|is based in|is deployed in|lives in)\s+{_O}$", re.I),
    ),
    ("is a", re.compile(rf"^{_S}\s+is an?\s+{_O}$", re.I)),
    ("likes", re.compile(rf"^{_S}\s+(?:likes?|loves?|enjoys?)\s+{_O}$", re.I)),
    (
        "affected by",
        re.compile(rf"^{_S}\s+(?:is affected by|is vulnerable to|has)\s+(?=CVE){_O}$", re.I),
    ),
]

_CLAUSE = re.compile(
    r"[，。！？；,!?;\n]|\.(?=\s|$)|\s+but\s+|\s+and\s+(?=\w+\s+(?:owns|uses|depends|likes)\b)",
    re.I,
)
_LEAD = re.compile(
    r"^(?:其实|对了|另外|还有|不过|但是|所以|而且|现在是|现在|嗯|哦|actually|also|so|btw|and|but|now)[，, ]*",
    re.I,
)
_TAIL = re.compile(r"(?:了|啦|呢|吧|哦|呀|这个|这块)+$")
_QUESTION = re.compile(
    r"[?？]|吗$|什么|怎么|哪|谁|多少|为什么|如果|^(?:if|what|how|why|which|who|where|when|does|do|is|are)\b",
    re.I,
)
_NEGATION = re.compile(r"不再|不负责|不是|没有|不用|不依赖|no longer|not|n't|never", re.I)
_SELF_ZH = {"我": "用户", "我们": "我们"}
_SELF_EN = {"i": "user", "i'm": "user", "me": "user"}
_NOBODY = frozenset(
    {
        "你",
        "他",
        "她",
        "它",
        "这",
        "那",
        "这个",
        "那个",
        "大家",
        "you",
        "he",
        "she",
        "it",
        "they",
        "this",
        "that",
        "we",
    }
)


def triples(text: str) -> list[tuple[str, str, str]]:
    """The relations ``text`` states, clause by clause (questions and negations state none).

    >>> triples("Alice 负责 payment-service，payment-service 依赖 jsonwebtoken v8.5.1。")
    [('Alice', 'owns', 'payment-service'), ('payment-service', 'depends on', 'jsonwebtoken v8.5.1')]
    >>> triples("auth-service uses redis. I like tea")
    [('auth-service', 'uses', 'redis'), ('user', 'likes', 'tea')]
    """
    out: list[tuple[str, str, str]] = []
    for raw in _CLAUSE.split(text):
        clause = _LEAD.sub("", raw.strip()).strip()
        if not clause or _QUESTION.search(clause) or _NEGATION.search(clause):
            continue
        zh = bool(re.search(r"[\u3400-\u9fff]", clause))
        for pred, pat in ZH if zh else EN:
            m = pat.search(clause)
            if m is None:
                continue
            s, o = _clean(m.group("s")), _clean(m.group("o"))
            s = _SELF_ZH.get(s, s) if zh else _SELF_EN.get(s.casefold(), s)
            if not s or not o or s.casefold() in _NOBODY or s.casefold() == o.casefold():
                continue
            t = (s, pred, o)
            if t not in out:
                out.append(t)
            break
    return out


def edge_proposals(event_id: str, text: str) -> list[Proposal]:
    """One ``edge`` proposal per relation ``text`` states, sourced from its event."""
    return [
        Proposal(EDGE, f"{s} {p} {o}", (event_id,), triple=(s, p, o), meta={"extractor": "rules"})
        for s, p, o in triples(text)
    ]


def _clean(value: str) -> str:
    value = value.strip(" \t'\"“”‘’「」")
    return " ".join(_TAIL.sub("", value).split())
