"""The tokenizers' fast paths against the code as first written: `bigram_tokens`
(one ``findall`` instead of a match object per run) and `StemTokenizer.many`
(each distinct word stemmed once per call) give the very tokens of the
reference, so tokens stored by either read the same (`retrieval.terms`)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from branchmem.retrieval.stem import stem
from branchmem.retrieval.tokenize import (
    _TOKEN,
    StemTokenizer,
    bigram_tokens,
    normalize,
    stem_tokens,
)


def bigram_reference(text: str) -> list[str]:
    out: list[str] = []
    for m in _TOKEN.finditer(normalize(text)):
        run = m.group()
        if m.lastgroup == "cjk" and len(run) > 1:
            out.extend(run[i : i + 2] for i in range(len(run) - 1))
        else:
            out.append(run)
    return out


def stem_reference(text: str) -> list[str]:
    return [stem(t) if t.isascii() else t for t in bigram_reference(text)]


PIECES = st.sampled_from(
    ["running", "cities", "lives", "用户", "杭州搬家", "我", "ｆｕｌｌ", "Python3", "_x_", "é",
     "の", "한국어", " ", ", ", "！", "\u3000", "3.14", "don't", "studied", "a", "ß", "ﬁle"]
)  # fmt: skip
TEXTS = st.one_of(st.text(max_size=60), st.lists(PIECES, max_size=12).map("".join))


@settings(max_examples=400, deadline=None)
@given(TEXTS)
def test_bigram_tokens_match_the_reference(text: str) -> None:
    assert bigram_tokens(text) == bigram_reference(text)


@settings(max_examples=200, deadline=None)
@given(st.lists(TEXTS, max_size=8))
def test_stem_many_matches_one_at_a_time(texts: list[str]) -> None:
    want = [stem_reference(t) for t in texts]
    assert [stem_tokens(t) for t in texts] == want
    assert StemTokenizer().many(texts) == want
