"""Precision and recall of a `Redactor` on a labelled set of strings.

A labelled row is ``{"text": ..., "expect": [{"kind": ..., "text": ...}, ...]}``:
the identifiers a perfect redactor finds in the text (none for a negative).
A finding counts as right when its detector and its text match an expected one.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from branchmem.errors import InvalidInput
from branchmem.redact.redactor import Redactor


@dataclass(frozen=True)
class Score:
    """One detector's counts on a labelled set."""

    kind: str
    true_pos: int
    false_pos: int
    false_neg: int

    @property
    def precision(self) -> float:
        found = self.true_pos + self.false_pos
        return self.true_pos / found if found else 1.0

    @property
    def recall(self) -> float:
        wanted = self.true_pos + self.false_neg
        return self.true_pos / wanted if wanted else 1.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "true_pos": self.true_pos,
            "false_pos": self.false_pos,
            "false_neg": self.false_neg,
            "precision": self.precision,
            "recall": self.recall,
        }


@dataclass(frozen=True)
class Report:
    """Per-detector scores, and the negatives (rows expecting nothing) that changed."""

    scores: tuple[Score, ...]
    negatives: int
    changed_negatives: tuple[str, ...]

    def total(self) -> Score:
        return Score(
            "all",
            sum(s.true_pos for s in self.scores),
            sum(s.false_pos for s in self.scores),
            sum(s.false_neg for s in self.scores),
        )


def load(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The rows of a labelled JSONL file, each checked (see the module docstring)."""
    p = Path(path)
    try:
        lines = p.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"cannot read labelled set {p}: {exc}") from exc
    rows = []
    for n, line in enumerate(lines, 1):
        if line.strip():
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InvalidInput(f"{p}:{n}: not a JSON line ({exc})") from exc
            rows.append(_checked(row, f"{p}:{n}"))
    return rows


def _checked(row: Any, where: str) -> dict[str, Any]:
    expect = row.get("expect") if isinstance(row, Mapping) else None
    if (
        not isinstance(row, Mapping)
        or not isinstance(row.get("text"), str)
        or not isinstance(expect, list)
        or not all(_is_span(e) for e in expect)
    ):
        raise InvalidInput(
            f"{where}: a labelled row is "
            f"{{'text': str, 'expect': [{{'kind': str, 'text': str}}, ...]}}, got {row!r}"
        )
    return dict(row)


def _is_span(e: Any) -> bool:
    return (
        isinstance(e, Mapping) and isinstance(e.get("kind"), str) and isinstance(e.get("text"), str)
    )


def evaluate(redactor: Redactor, rows: Iterable[Mapping[str, Any]]) -> Report:
    """Score ``redactor`` on ``rows`` (see the module docstring for their shape)."""
    counts: dict[str, list[int]] = {k: [0, 0, 0] for k in redactor.detectors}
    negatives = 0
    changed = []
    for n, raw in enumerate(rows, 1):
        row = _checked(raw, f"row {n}")
        text = row["text"]
        want = {(e["kind"], e["text"]) for e in row["expect"]}
        got = {(f.kind, f.text) for f in redactor.findings(text)}
        for kind, _ in got & want:
            counts.setdefault(kind, [0, 0, 0])[0] += 1
        for kind, _ in got - want:
            counts.setdefault(kind, [0, 0, 0])[1] += 1
        for kind, _ in want - got:
            counts.setdefault(kind, [0, 0, 0])[2] += 1
        if not want:
            negatives += 1
            if redactor.redact(text) != text:
                changed.append(text)
    scores = tuple(Score(k, *c) for k, c in counts.items())
    return Report(scores, negatives, tuple(changed))
