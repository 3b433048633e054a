"""What a consolidation would write at one anchor, decided from the records
visible there (no store access): groups of duplicates, contradictions by
key, and the profile's facts.

Duplicates are records of one key (or none) whose texts match once width,
case, spacing and end punctuation are folded (`ops.dedup.same_text`), or
whose character bigrams overlap by at least ``near`` (Jaccard), or, with
vectors given, whose cosine is at least ``near``. Recency is the position
of a record's latest source on the path to the anchor (ties: the later
written).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..model import Memory
from ..ops.dedup import same_text

Similar = Callable[[Memory, Memory], bool]


def bigrams(text: str) -> set[str]:
    t = same_text(text)
    return {t[i : i + 2] for i in range(len(t) - 1)} or {t}


def text_similar(near: float) -> Similar:
    """Records alike by their folded text or its bigrams (Jaccard >= ``near``)."""
    cache: dict[str, set[str]] = {}

    def grams(m: Memory) -> set[str]:
        got = cache.get(m.id)
        if got is None:
            got = cache[m.id] = bigrams(m.content)
        return got

    def similar(a: Memory, b: Memory) -> bool:
        if same_text(a.content) == same_text(b.content):
            return True
        ga, gb = grams(a), grams(b)
        return len(ga & gb) / len(ga | gb) >= near

    return similar


def vector_similar(vectors: dict[str, Sequence[float]], near: float) -> Similar:
    """Records alike by the cosine of their (unit) vectors, or by text."""
    by_text = text_similar(1.0)

    def similar(a: Memory, b: Memory) -> bool:
        va, vb = vectors.get(a.id), vectors.get(b.id)
        if va is None or vb is None:
            return by_text(a, b)
        return sum(x * y for x, y in zip(va, vb, strict=True)) >= near

    return similar


def duplicate_groups(visible: list[Memory], similar: Similar) -> list[list[Memory]]:
    """Groups of two or more alike records of one key (single link, in write order)."""
    by_key: dict[str | None, list[Memory]] = {}
    for m in visible:
        by_key.setdefault(m.key, []).append(m)
    out: list[list[Memory]] = []
    for members in by_key.values():
        groups: list[list[Memory]] = []
        for m in members:
            home = next((g for g in groups if any(similar(m, x) for x in g)), None)
            if home is None:
                groups.append([m])
            else:
                home.append(m)
        out += [g for g in groups if len(g) > 1]
    return out


def recency(order: dict[str, int]) -> Callable[[Memory], tuple[int, int]]:
    """A sort key: the path position of a record's latest source, then its seq."""
    return lambda m: (max((order.get(s, -1) for s in m.sources), default=-1), m.seq)


def contradictions(visible: list[Memory]) -> list[list[Memory]]:
    """Groups of records of one key whose texts differ (each two or more)."""
    by_key: dict[str, list[Memory]] = {}
    for m in visible:
        if m.key is not None:
            by_key.setdefault(m.key, []).append(m)
    return [g for g in by_key.values() if len({same_text(m.content) for m in g}) > 1]


def union_sources(members: Sequence[Memory]) -> list[str]:
    """Every source of ``members``, each once, in the order first named."""
    return list(dict.fromkeys(s for m in members for s in m.sources))
