"""Keyword scoring (format v1) and the rates built from it.

The scoring rules are those of ``docs/branchbench-format.md``.

The same rules score a model's answer and, model-free, the context a system
hands the model. Nothing here calls a model or a judge, so every number can
be recomputed from saved text.

Denominators (each rate is reported with its counts, n/N):

* ``leak_rate`` and ``wrong_pick_rate``: leak questions.
* ``accuracy`` and ``answer_recall``: all questions.
* ``retain_rate``: retain questions.
* ``stale_rate``: questions that name ``superseded_any`` words.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from .scenario import Question

METRICS = ("leak", "accuracy", "wrong_pick", "stale", "retain", "answer_recall")


def contains_any(text: str, words: Iterable[str]) -> bool:
    """Whether any word occurs in ``text`` (case-insensitive for Latin letters)."""
    folded = text.casefold()
    return any(w and w.casefold() in folded for w in words)


@dataclass(frozen=True)
class Score:
    """The scoring rules applied to one text for one question."""

    leak: bool
    correct: bool
    wrong_pick: bool
    retain: bool
    stale: bool

    @property
    def has_answer(self) -> bool:
        """Whether an answer word occurs (the answer-recall hit)."""
        return self.retain


def score(text: str, q: Question) -> Score:
    """Apply the scoring rules: leak, correct, wrong pick, retain pass, stale.

    The rules are those of ``docs/branchbench-format.md`` ("Scoring").
    """
    has_answer = contains_any(text, q.answer_any)
    has_forbidden = contains_any(text, q.forbidden_any)
    return Score(
        leak=has_forbidden,
        correct=has_answer and not has_forbidden,
        wrong_pick=has_forbidden and not has_answer,
        retain=has_answer,
        stale=contains_any(text, q.superseded_any),
    )


@dataclass
class Ratio:
    """A count over a denominator; ``rate`` is ``None`` when nothing was counted."""

    n: int = 0
    total: int = 0

    def add(self, hit: bool) -> None:
        """Count one item, a hit or not."""
        self.total += 1
        self.n += int(hit)

    @property
    def rate(self) -> float | None:
        """``n / total``, or ``None`` when nothing was counted."""
        return self.n / self.total if self.total else None

    def cell(self) -> str:
        """The table cell: ``rate (n/N)``, or a dash when nothing was counted."""
        r = self.rate
        return "–" if r is None else f"{r:.2f} ({self.n}/{self.total})"


@dataclass
class Tally:
    """Every metric for one group of scored texts (a system, maybe one fork type)."""

    ratios: dict[str, Ratio] = field(default_factory=lambda: {m: Ratio() for m in METRICS})

    def add(self, q: Question, s: Score) -> None:
        """Count one scored text under each metric whose denominator includes ``q``."""
        r = self.ratios
        r["accuracy"].add(s.correct)
        r["answer_recall"].add(s.has_answer)
        if q.type == "leak":
            r["leak"].add(s.leak)
            r["wrong_pick"].add(s.wrong_pick)
        if q.type == "retain":
            r["retain"].add(s.retain)
        if q.superseded_any:
            r["stale"].add(s.stale)

    def rate(self, metric: str) -> float | None:
        """The rate of one metric, ``None`` when nothing was counted."""
        return self.ratios[metric].rate


def question_to_dict(q: Question) -> dict[str, Any]:
    """A question as saved with each context in ``contexts.jsonl``."""
    return {
        "id": q.id,
        "type": q.type,
        "question": q.question,
        "answer_any": list(q.answer_any),
        "forbidden_any": list(q.forbidden_any),
        "superseded_any": list(q.superseded_any),
    }


def question_from_dict(d: dict[str, Any]) -> Question:
    """The inverse of `question_to_dict`."""
    return Question(
        id=str(d["id"]),
        type=str(d["type"]),
        question=str(d["question"]),
        answer_any=tuple(d.get("answer_any") or ()),
        forbidden_any=tuple(d.get("forbidden_any") or ()),
        superseded_any=tuple(d.get("superseded_any") or ()),
    )


def forbidden_in_question(q: Question) -> bool:
    """Whether a forbidden word occurs in the question text (rule 5 of the format).

    Rule 5 of ``docs/branchbench-format.md`` rejects such questions: a correct
    negative answer repeats the question, so it would count a leak for a right
    answer. The report's sensitivity table drops any that remain.
    """
    return contains_any(q.question, q.forbidden_any)
