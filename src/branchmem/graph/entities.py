"""Which entity names a record's text holds, found offline, without a model.

`entities` reads one text and returns the normalised names (`model.norm`) of
what it names:

- capitalised words and runs of them ("Alice Chen", "Project Beta"), except
  common words (`STOP`: "The", "Our", "Weekly"...), wherever they stand;
- CamelCase and mixed-case names ("MatrixOne", "PostgreSQL", "iPhone");
- products with a version ("jsonwebtoken v8.5.1", "Python 3.12"), and the
  product alone, so two versions of one library are linked (also from
  "lodash before 4.17.21", "jsonwebtoken up to 8.5.1");
- identifiers: CVE (and GHSA) ids, tickets such as "PAY-142", ports ("port
  6001", ":6001", "6001 端口" are all "port 6001");
- service-like and host names with hyphens or dots ("auth-service",
  "api.example.com", "log4j-core", "Node.js");
- quoted names, "..." “...” «...» 「...」 『...』 《...》 (short ones only);
- in Chinese text, each Latin-script word ("fastjson", "gin"), a team or
  organisation ending in 组/团队/部门/公司... ("支付组"), and a person's name
  after a common surname ("张伟"); with the ``jieba`` extra installed, also
  jieba's person, place, organisation and other proper nouns (tags nr, ns,
  nt, nz).

The names are derived from the text alone, so a record's entities are
visible exactly where the record is. Over-finding a name costs little: a
name links records only where two candidates of one search both hold it, and
the walk (`retrieval.hops`) inhibits a name many candidates hold.
`EntityCache` memoises by namespace, record id and a digest of the text.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict

from .model import norm

STOP = frozenset(
    [
        "a",
        "an",
        "the",
        "this",
        "that",
        "these",
        "those",
        "there",
        "here",
        "it",
        "its",
        "we",
        "our",
        "us",
        "you",
        "your",
        "i",
        "my",
        "me",
        "he",
        "she",
        "his",
        "her",
        "they",
        "their",
        "them",
        "what",
        "which",
        "who",
        "whom",
        "whose",
        "when",
        "where",
        "why",
        "how",
        "and",
        "or",
        "but",
        "if",
        "then",
        "so",
        "not",
        "no",
        "yes",
        "all",
        "any",
        "each",
        "every",
        "some",
        "many",
        "most",
        "more",
        "less",
        "few",
        "one",
        "two",
        "three",
        "first",
        "last",
        "next",
        "new",
        "old",
        "also",
        "just",
        "only",
        "still",
        "yet",
        "now",
        "today",
        "tomorrow",
        "yesterday",
        "please",
        "thanks",
        "thank",
        "hi",
        "hello",
        "dear",
        "ok",
        "okay",
        "note",
        "notes",
        "update",
        "advisory",
        "weekly",
        "monthly",
        "daily",
        "summary",
        "reminder",
        "todo",
        "fyi",
        "re",
        "fw",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "has",
        "have",
        "had",
        "do",
        "does",
        "did",
        "can",
        "could",
        "will",
        "would",
        "should",
        "may",
        "might",
        "must",
        "let",
        "in",
        "on",
        "at",
        "to",
        "for",
        "from",
        "of",
        "by",
        "with",
        "about",
        "after",
        "before",
        "since",
        "during",
        "as",
        "per",
        "via",
        "over",
        "under",
        "monday",
        "tuesday",
        "wednesday",
        "thursday",
        "friday",
        "saturday",
        "sunday",
        "january",
        "february",
        "march",
        "april",
        "may",
        "june",
        "july",
        "august",
        "september",
        "october",
        "november",
        "december",
        "team",
        "user",
        "users",
        "org",
        "project",
        "kpi",
    ]
)
"""Capitalised words that name nothing by themselves (sentence starts,
headings, weekdays, months)."""

_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_HAS_CJK = re.compile(f"[{_CJK}]")
_CAP_RUN = re.compile(r"\b[A-Z][\w'’-]*(?:[ \t]+(?:of |de |van |von )?[A-Z][\w'’-]*)*")
_MIXED = re.compile(r"\b(?:[a-z]+[A-Z]|[A-Z]+[a-z]+[A-Z]|[A-Z]{2,}[a-z]{2,})[\w]*")
_VERSIONED = re.compile(
    r"(?<![\w.-])([A-Za-z][\w.+-]*?[A-Za-z0-9+])[ \t]+v?(\d+(?:\.\d+){1,3}[a-z0-9]*)(?!\w|\.\d)"
)
_BOUNDED = re.compile(
    r"(?<![\w.-])([A-Za-z][\w.+-]*?[A-Za-z0-9+])[ \t]+(?:up to|before|through|prior to|<=?)"
    r"[ \t]+v?\d+(?:\.\d+){1,3}"
)
_VERSION = re.compile(r"v?\d+(?:\.\d+)*[a-z]?")
_IDENT = re.compile(r"\b(?:CVE-\d{4}-\d{4,}|GHSA(?:-[0-9a-z]{4}){3}|[A-Z][A-Z0-9]{1,9}-\d{1,6})\b")
_PORT = re.compile(r"(?i:\bport[ \t]+|(?<![\d:]):)(\d{2,5})\b|(\d{2,5})[ \t]*端口")
_DOTTED = re.compile(r"(?<![\w.@/-])[A-Za-z][\w]*(?:[.-][A-Za-z0-9_]+)+(?![\w-])")
_QUOTED = re.compile(
    r"\"([^\"\n]{2,40})\"|“([^”\n]{2,40})”|«([^»\n]{2,40})»|「([^」\n]{1,30})」"
    r"|『([^』\n]{1,30})』|《([^》\n]{1,30})》"
)
_LATIN = re.compile(r"(?<![\w.-])[A-Za-z][A-Za-z0-9_+#]{1,}(?![\w-])")
_ORG = re.compile(
    f"[{_CJK}]{{2}}(?:小组|团队|部门|事业部|公司|集团|实验室|委员会|项目组|中心|组|部)"
)
SURNAMES = (
    "王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡"
    "余杜叶程苏魏吕丁任沈姚卢姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚邵万钱严覃武戴莫孔向汤"
)
_PERSON = re.compile(f"(?<![{_CJK}])[{SURNAMES}][{_CJK}]{{1,2}}?(?=[是和与在负说的、，,。 ]|$)")
_SENTENCE = re.compile(r"[.!?。！？:：;；\n]")

_JIEBA_TAGS = frozenset({"nr", "ns", "nt", "nz", "nrt", "nrfg"})


def _jieba_names(text: str) -> list[str]:
    try:
        import jieba
        import jieba.posseg as pseg
    except ImportError:  # the extra is not installed: the heuristics alone
        return []
    jieba.setLogLevel(60)  # silence its start-up chatter on stderr
    return [w for w, tag in pseg.lcut(text) if tag in _JIEBA_TAGS and len(w.strip()) >= 2]


def _useful(name: str) -> bool:
    key = norm(name)
    return len(key) >= 2 and key not in STOP and not _VERSION.fullmatch(key)


def _cap_runs(text: str) -> list[str]:
    out = []
    for m in _CAP_RUN.finditer(text):
        words = m.group().split()
        while words and words[0].lower() in STOP:  # "The Identity" -> "Identity"
            words.pop(0)
        while words and words[-1].lower() in STOP:
            words.pop()
        if words:
            out.append(" ".join(words))
    return out


def entities(text: str, *, use_jieba: bool = True) -> frozenset[str]:
    """The normalised entity names ``text`` holds.

    >>> sorted(entities("Alice Chen leads the Identity team; auth-service uses "
    ...                 "jsonwebtoken v8.5.1."))
    ['alice chen', 'auth-service', 'identity', 'jsonwebtoken', 'jsonwebtoken 8.5.1']
    >>> sorted(entities("MatrixOne listens on port 6001, see CVE-2022-23529 and "
    ...                 "api.example.com:8080"))
    ['api.example.com', 'cve-2022-23529', 'matrixone', 'port 6001', 'port 8080']
    >>> sorted(entities("张伟是支付组的组长，支付组负责 payment-gateway 和「风控平台」",
    ...                 use_jieba=False))
    ['payment-gateway', '张伟', '支付组', '风控平台']
    >>> entities("The weather is nice today.")
    frozenset()
    """
    found: list[str] = []
    add = found.append
    for m in _VERSIONED.finditer(text):
        name, version = m.group(1), m.group(2)
        if name.lower() not in STOP and not name.replace(".", "").isdigit():
            add(f"{name} {version}")
            add(name)
    found.extend(m.group(1) for m in _BOUNDED.finditer(text))
    for m in _PORT.finditer(text):
        add(f"port {m.group(1) or m.group(2)}")
    found.extend(m.group() for m in _IDENT.finditer(text))
    found.extend(m.group() for m in _DOTTED.finditer(text))
    found.extend(m.group() for m in _MIXED.finditer(text))
    for m in _QUOTED.finditer(text):
        add(next(g for g in m.groups() if g))
    found.extend(_cap_runs(text))
    if _HAS_CJK.search(text):
        found.extend(m.group() for m in _LATIN.finditer(text))
        found.extend(m.group() for m in _ORG.finditer(text))
        found.extend(m.group() for m in _PERSON.finditer(text))
        if use_jieba:
            found.extend(_jieba_names(text))
    return frozenset(norm(n) for n in found if _useful(n))


class EntityCache:
    """`entities` per record, memoised by (namespace, record id) with the text
    they were read from: a record rewritten under the same id, or purged and
    written again, is read again, so no link outlives the text that made it
    (the text is compared, as the search cache compares it, not hashed on
    every look-up). Held by a store's engine (`Engine.cache`), so a purge
    drops what was derived from the purged records (`forget`) and an erasure
    by another process drops everything (`clear`). Bounded: the oldest
    entries go first.

    jieba's proper-noun tags are used only with ``use_jieba`` (about 25x the
    time of the rules alone per record)."""

    def __init__(self, size: int = 50_000, use_jieba: bool = False) -> None:
        self.size = size
        self.use_jieba = use_jieba
        self._lock = threading.Lock()
        self._seen: OrderedDict[tuple[str, str], tuple[str, frozenset[str]]] = OrderedDict()
        self._held: tuple[object, object] | None = None  # (a candidate list, what was built on it)

    def get(self, namespace: str, record_id: str, text: str) -> frozenset[str]:
        key = (namespace, record_id)
        with self._lock:
            hit = self._seen.get(key)
            if hit is not None and hit[0] == text:
                self._seen.move_to_end(key)
                return hit[1]
        names = entities(text, use_jieba=self.use_jieba)
        with self._lock:
            self._seen[key] = (text, names)
            self._seen.move_to_end(key)
            while len(self._seen) > self.size:
                self._seen.popitem(last=False)
        return names

    def held(self, mems: object) -> object:
        """What `hold` kept for this very list object (candidate lists are
        never changed once made), or None."""
        with self._lock:
            got = self._held
        return got[1] if got is not None and got[0] is mems else None

    def hold(self, mems: object, value: object) -> None:
        """Keep ``value`` for the list ``mems`` (one list at a time; dropped by
        `clear` and `forget`, as everything derived from the records is)."""
        with self._lock:
            self._held = (mems, value)

    def clear(self) -> None:
        with self._lock:
            self._seen.clear()
            self._held = None

    def forget(self, ns: str, ids: list[str] | None, /) -> None:
        want = None if ids is None else set(ids)
        with self._lock:
            self._held = None
            for k in [k for k in self._seen if k[0] == ns and (want is None or k[1] in want)]:
                del self._seen[k]
