"""Counts in the commands' summary lines: ``1 conversation``, ``2 conversations``."""

from __future__ import annotations


def count(n: int, noun: str) -> str:
    """``n`` and ``noun``, the noun in the plural unless ``n`` is 1.

    >>> count(1, "search"), count(2, "conversation")
    ('1 search', '2 conversations')
    """
    if n == 1:
        return f"{n} {noun}"
    return f"{n} {noun}es" if noun.endswith(("s", "sh", "ch", "x")) else f"{n} {noun}s"
