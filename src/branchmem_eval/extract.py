"""Precision and recall of a fact parser on a labelled set of utterances.

Each line of the set is ``{"text": ..., "facts": [[op, key, value], ...]}``.
A predicted fact counts when a labelled one has the same op and key and a
value that one contains the other of (case and punctuation folded).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from branchmem.extract.rules import Fact, same_value


@dataclass
class Score:
    """Counts over a labelled set, and the misses for inspection."""

    true_pos: int = 0
    false_pos: int = 0
    false_neg: int = 0
    misses: list[dict[str, Any]] = field(default_factory=list)

    @property
    def precision(self) -> float:
        n = self.true_pos + self.false_pos
        return self.true_pos / n if n else 1.0

    @property
    def recall(self) -> float:
        n = self.true_pos + self.false_neg
        return self.true_pos / n if n else 1.0


def load(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The labelled items of a JSONL file."""
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def score(parse: Callable[[str], list[Fact]], items: Iterable[dict[str, Any]]) -> Score:
    """Score ``parse`` (e.g. ``RuleExtractor().parse``) against ``items``."""
    out = Score()
    for item in items:
        gold = [tuple(f) for f in item["facts"]]
        found = [(f.op, f.key, f.value) for f in parse(item["text"])]
        left = list(gold)
        for op, key, value in found:
            hit = next(
                (g for g in left if g[0] == op and g[1] == key and same_value(g[2], value)), None
            )
            if hit is None:
                out.false_pos += 1
                out.misses.append({"text": item["text"], "extra": [op, key, value]})
            else:
                out.true_pos += 1
                left.remove(hit)
        out.false_neg += len(left)
        out.misses += [{"text": item["text"], "missed": list(g)} for g in left]
    return out
