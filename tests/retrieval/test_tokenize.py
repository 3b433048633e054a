"""Keyword tokens for Chinese, English and mixed text."""

from __future__ import annotations

import importlib.util

import pytest

from branchmem import InvalidInput
from branchmem.retrieval.tokenize import bigram_tokens, get_tokenizer


def test_two_character_words_are_tokens() -> None:
    assert "杭州" in bigram_tokens("我下个月搬去杭州。")
    assert "花生" in bigram_tokens("我对花生过敏")
    assert bigram_tokens("杭州") == ["杭州"]


def test_full_width_punctuation_only_separates() -> None:
    toks = bigram_tokens("花生，杭州！（成都）")
    assert toks == ["花生", "杭州", "成都"]
    assert "生杭" not in toks


def test_full_width_letters_and_case_fold() -> None:
    assert bigram_tokens("ＰｙｔｈｏｎＡＰＩ １２３") == ["pythonapi", "123"]


def test_mixed_chinese_and_english() -> None:
    toks = bigram_tokens("用Python写爬虫，deadline是周五")
    assert toks == ["用", "python", "写爬", "爬虫", "deadline", "是周", "周五"]


def test_a_lone_character_stays_a_unigram() -> None:
    assert bigram_tokens("猫") == ["猫"]
    assert bigram_tokens("我 有 猫") == ["我", "有", "猫"]


def test_empty_and_punctuation_only() -> None:
    assert bigram_tokens("") == []
    assert bigram_tokens("，。！？…  ") == []


def test_unknown_tokenizer_says_what_to_use() -> None:
    with pytest.raises(InvalidInput, match="bigram"):
        get_tokenizer("whitespace")


@pytest.mark.skipif(importlib.util.find_spec("jieba") is None, reason="jieba not installed")
def test_jieba_segments_words() -> None:
    tok = get_tokenizer("jieba")
    toks = tok("我下个月搬去杭州，用Python写代码。")
    assert "杭州" in toks
    assert "python" in toks
    assert "，" not in toks and "。" not in toks
