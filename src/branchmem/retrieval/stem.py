"""A small English stemmer for BM25, and the ``"stem"`` tokenizer that uses it.

`stem` strips the inflections that keep a question from matching a stored
fact ("lives" / "live" / "living", "moved" / "move", "cities" / "city",
"studies" / "study"): plural and third-person ``-s``/``-es``/``-ies``,
``-ed``, ``-ing``, ``-ly``, and the consonant doubled before them
("running" → "run"), then a final silent ``e`` ("live" → "liv", so that
"lives", "lived" and "living" all meet it). Words of three letters or
fewer, and words with digits, stay as they are. It is deliberately
smaller than a full Porter stemmer: only inflections, no derivations, so
it seldom merges words of different meaning.

``get_tokenizer("stem")`` (`tokenize.stem_tokens`) is the default tokenizer
(Chinese bigrams unchanged) with each letter word stemmed.
"""

from __future__ import annotations

_VOWELS = set("aeiouy")
_DOUBLE_OK = set("lsz")  # "fall", "pass", "buzz": a doubled l/s/z is part of the stem


def _has_vowel(s: str) -> bool:
    return any(c in _VOWELS for c in s)


def stem(word: str) -> str:
    """The stem of one lower-case English word.

    >>> [stem(w) for w in ["lives", "live", "living", "lived", "moved", "cities", "running"]]
    ['liv', 'liv', 'liv', 'liv', 'mov', 'city', 'run']
    """
    w = word
    if len(w) <= 3 or not w.isalpha() or not w.isascii():
        return w
    if w.endswith("ies") and len(w) > 4:
        w = w[:-3] + "y"
    elif w.endswith(("sses", "shes", "ches", "xes", "zes")):
        w = w[:-2]
    elif w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    for suffix in ("ingly", "edly", "ing", "ed", "ly"):
        if w.endswith(suffix) and _has_vowel(w[: -len(suffix)]) and len(w) - len(suffix) >= 3:
            w = w[: -len(suffix)]
            if suffix != "ly" and len(w) > 3 and w[-1] == w[-2] and w[-1] not in _DOUBLE_OK:
                w = w[:-1]  # "running" -> "run", "stopped" -> "stop"
            elif suffix.startswith("ed") and w.endswith("i"):
                w = w[:-1] + "y"  # "studied" -> "study", as "studies"
            break
    if w.endswith("e") and len(w) > 3 and not w.endswith("ee"):
        w = w[:-1]
    return w
