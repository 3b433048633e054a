"""Public labelled sets read from a path, and the figures of a ranking over them.

PerLTQA (CC BY-NC 4.0; not shipped, read from a folder, see docs/retrieval.md)
keeps each character's memories in ``perltmem*.json`` and the questions in
``perltqa*.json``:

* memories: ``{name: {"profile": {field: value}, "social_relationship":
  {"1_0": {"Supporting Characters", "Relationship", "Description"}},
  "events": {"1_0_0": {"content", "summary", ...}}, "dialogues": {"1_0_0#1":
  {"events": "1_0_0", "contents": {time: [line, ...]}}}}}``;
* questions: ``[{name: {"profile": [qa], "social_relationship": [{"1_0": [qa]}],
  "events": [{"1_0_0": [qa]}], "dialogues": [{"1_0_0#1": [qa]}]}}]``, each qa
  with ``Question`` and ``Reference Memory`` (a profile field, or a list of
  memory ids written as text: ``"['1_0_0']"``).

Each memory becomes one passage (a profile field, a relationship, an event,
a dialogue); a question's type is the section it is listed under and its gold
passages are the ids its ``Reference Memory`` names.

>>> p = Passage("profile/Age", "profile", "Age: 28")
>>> r = Ranks()
>>> r.add("profile", ["x", "profile/Age"], {"profile/Age"})
>>> r.recall(5), r.mrr()
(1.0, 0.5)
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from branchmem.errors import InvalidInput

TYPES = ("profile", "social_relationship", "events", "dialogues")
_ID = re.compile(r"[0-9]+(?:_[0-9]+)*(?:#[0-9]+)?")


@dataclass(frozen=True)
class Passage:
    id: str
    type: str
    text: str
    at: float | None = None  # when it was said (Unix time), where the set says


@dataclass(frozen=True)
class Question:
    id: str
    type: str
    text: str
    gold: frozenset[str]


@dataclass(frozen=True)
class Character:
    name: str
    passages: tuple[Passage, ...]
    questions: tuple[Question, ...]


def _passages(mem: dict[str, Any]) -> list[Passage]:
    out = []
    for name, value in (mem.get("profile") or {}).items():
        out.append(Passage(f"profile/{name}", "profile", f"{name}: {value}"))
    for rid, rel in (mem.get("social_relationship") or {}).items():
        text = (
            f"{rel.get('Supporting Characters', '')} ({rel.get('Relationship', '')}): "
            f"{rel.get('Description', '')}"
        )
        out.append(Passage(rid, "social_relationship", text))
    for eid, ev in (mem.get("events") or {}).items():
        out.append(Passage(eid, "events", f"{ev.get('summary', '')}. {ev.get('content', '')}"))
    for did, dia in (mem.get("dialogues") or {}).items():
        contents = dia.get("contents") or {}
        lines = [f"{when} {line}" for when, said in contents.items() for line in said]
        out.append(Passage(did, "dialogues", "\n".join(lines)))
    return out


def _gold(kind: str, ref: Any, known: set[str]) -> frozenset[str]:
    if kind == "profile":
        return frozenset({f"profile/{ref}"}) & known
    return frozenset(_ID.findall(str(ref))) & known


def _questions(name: str, qa: dict[str, Any], known: set[str]) -> list[Question]:
    out = []
    for kind in TYPES:
        groups = qa.get(kind) or []
        # profile: a list of qa; the others: a list of {memory id: [qa, ...]}
        items = (
            [("", q) for q in groups]
            if kind == "profile"
            else [(mid, q) for g in groups for mid, qs in g.items() for q in qs]
        )
        for n, (mid, q) in enumerate(items):
            ref = q.get("Reference Memory") or mid
            gold = _gold(kind, ref, known)
            if gold and q.get("Question"):
                out.append(Question(f"{name}/{kind}/{n}", kind, str(q["Question"]), gold))
    return out


def _one(folder: Path, pattern: str) -> Path:
    found = sorted(folder.glob(pattern))
    if len(found) != 1:
        raise InvalidInput(
            f"expected one file {pattern} in {folder}, found {len(found)}: pass the set's "
            "folder (PerLTQA's Dataset/en_v2)"
        )
    return found[0]


def read_perltqa(folder: str | Path, *, limit: int | None = None) -> list[Character]:
    """The first ``limit`` characters (all by default) of a PerLTQA folder, with
    their passages and the questions whose gold passages exist."""
    root = Path(folder)
    try:
        mem = json.loads(_one(root, "perltmem*.json").read_text(encoding="utf-8"))
        qa_list = json.loads(_one(root, "perltqa*.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InvalidInput(f"cannot read the PerLTQA files in {root}: {exc}") from exc
    qa = {name: d for entry in qa_list for name, d in entry.items()}
    out = []
    for name, m in mem.items():
        if name not in qa:
            continue
        passages = _passages(m)
        questions = _questions(name, qa[name], {p.id for p in passages})
        if questions:
            out.append(Character(name, tuple(passages), tuple(questions)))
        if limit is not None and len(out) >= limit:
            break
    return out


_WORD = re.compile(r"\w+")


def words(text: str) -> list[str]:
    """Lower-cased word tokens: the plain floor, not the library's tokenizer."""
    return _WORD.findall(text.lower())


def bm25_order(
    docs: Sequence[Sequence[str]], query: Sequence[str], *, k1: float = 1.2, b: float = 0.75
) -> list[int]:
    """Indices of ``docs`` by Okapi BM25 of ``query``, best first (ties by index);
    documents that share no term with the query are left out.

    >>> bm25_order([["a", "b"], ["c"], ["a", "a"]], ["a"])
    [2, 0]
    """
    n = len(docs)
    if not n:
        return []
    avg = sum(len(d) for d in docs) / n
    df: Counter[str] = Counter(t for d in docs for t in set(d))
    scores = []
    terms = set(query)
    for i, d in enumerate(docs):
        tf = Counter(t for t in d if t in terms)
        s = 0.0
        for t, f in tf.items():
            idf = math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5))
            s += idf * f * (k1 + 1) / (f + k1 * (1 - b + b * len(d) / (avg or 1)))
        if s > 0:
            scores.append((-s, i))
    return [i for _, i in sorted(scores)]


def cosine_order(docs: Sequence[Sequence[float]], query: Sequence[float]) -> list[int]:
    """Indices of ``docs`` by cosine with ``query``, best first (ties by index)."""

    def norm(v: Sequence[float]) -> float:
        return math.sqrt(sum(x * x for x in v)) or 1.0

    qn = norm(query)
    scored = [
        (-sum(a * b for a, b in zip(d, query, strict=True)) / (norm(d) * qn), i)
        for i, d in enumerate(docs)
    ]
    return [i for _, i in sorted(scored)]


@dataclass
class Ranks:
    """Recall@k and MRR of ranked lists against gold ids, overall and by type.
    Recall@k: the share of questions with a gold passage in the top k."""

    firsts: list[tuple[str, int | None]] = field(default_factory=list)

    def add(self, kind: str, ranked: Iterable[str], gold: Iterable[str]) -> None:
        want = set(gold)
        first = next((r for r, i in enumerate(ranked, 1) if i in want), None)
        self.firsts.append((kind, first))

    def _of(self, kind: str | None) -> list[int | None]:
        return [f for k, f in self.firsts if kind is None or k == kind]

    def count(self, kind: str | None = None) -> int:
        return len(self._of(kind))

    def recall(self, k: int, kind: str | None = None) -> float:
        firsts = self._of(kind)
        return sum(f is not None and f <= k for f in firsts) / len(firsts) if firsts else 0.0

    def mrr(self, kind: str | None = None) -> float:
        firsts = self._of(kind)
        return sum(1 / f for f in firsts if f is not None) / len(firsts) if firsts else 0.0


def write_synthetic(folder: str | Path) -> Path:
    """A tiny set in PerLTQA's format (two characters, every section and question
    type), for smoke runs and tests where the real set is not at hand."""
    root = Path(folder)
    root.mkdir(parents=True, exist_ok=True)
    mem: dict[str, Any] = {}
    qa: list[dict[str, Any]] = []
    for c, (name, job, friend, trip, dish) in enumerate(
        [
            ("Ada Lin", "glassblower", "Bo Chen", "Lisbon harbour", "saffron rice"),
            ("Ivo Marsh", "beekeeper", "Una Park", "Oslo fjord", "lentil stew"),
        ],
        1,
    ):
        mem[name] = {
            "profile": {"Protagonist": name, "Occupation": job, "Hobbies": "chess, rowing"},
            "social_relationship": {
                f"{c}_0": {
                    "Supporting Characters": friend,
                    "Relationship": "friend",
                    "Description": f"{friend} met {name} at a pottery class.",
                },
                f"{c}_1": {
                    "Supporting Characters": "Rosa Vale",
                    "Relationship": "neighbour",
                    "Description": f"Rosa Vale lends {name} a ladder on weekends.",
                },
            },
            "events": {
                f"{c}_0_0": {"summary": "A trip", "content": f"{name} sailed to {trip}."},
                f"{c}_0_1": {"summary": "A dinner", "content": f"{friend} cooked {dish}."},
                f"{c}_1_0": {"summary": "Repairs", "content": "Rosa fixed the garden gate."},
            },
            "dialogues": {
                f"{c}_0_0#1": {
                    "events": f"{c}_0_0",
                    "contents": {"2022-05-01 10:00": [f"{friend}: the ferry left at dawn."]},
                }
            },
        }

        def ask(q: str, ref: str) -> dict[str, Any]:
            return {"Question": q, "Answer": "", "Reference Memory": ref}

        qa.append(
            {
                name: {
                    "profile": [ask(f"What is {name}'s occupation?", "Occupation")],
                    "social_relationship": [
                        {f"{c}_0": [ask(f"Where did {friend} meet {name}?", f"['{c}_0']")]}
                    ],
                    "events": [
                        {f"{c}_0_0": [ask(f"Where did {name} sail?", f"['{c}_0_0']")]},
                        {f"{c}_0_1": [ask(f"What did {friend} cook?", f"['{c}_0_1']")]},
                    ],
                    "dialogues": [
                        {f"{c}_0_0#1": [ask("When did the ferry leave?", f"['{c}_0_0#1']")]}
                    ],
                }
            }
        )
    (root / "perltmem_synthetic.json").write_text(json.dumps(mem), encoding="utf-8")
    (root / "perltqa_synthetic.json").write_text(json.dumps(qa), encoding="utf-8")
    return root
