"""PrefEval read from a path: each question labelled with the preference that
answers it, stated outright or revealed in a conversation.

PrefEval (CC BY-NC 4.0; not shipped, read from its ``benchmark_dataset``
folder, see docs/retrieval.md) has twenty topics, one file per topic in
each of three folders, each file a list of items that share ``preference``
and ``question``:

* ``explicit_preference/TOPIC.json``: the preference stated in one line;
* ``implicit_preference/choice-based/TOPIC.json``: ``conversation`` is
  ``{"query", "assistant_options", "user_selection",
  "assistant_acknowledgment"}``, the user picking one option;
* ``implicit_preference/persona-driven/TOPIC.json``: ``conversation`` is
  ``{"0": {"user", "assistant"}, ...}``, a chat that mentions it in passing.

For each form and topic (one ``Character``: the form is the question type),
every item's memory (the line, or the whole conversation) is one passage,
and the item's question has that passage as its only gold.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from branchmem.errors import InvalidInput
from branchmem_eval.public import Character, Passage, Question

FORMS = (
    ("explicit", "explicit_preference"),
    ("choice-based", "implicit_preference/choice-based"),
    ("persona-driven", "implicit_preference/persona-driven"),
)
_CHOICE = (
    ("user", "query"),
    ("assistant", "assistant_options"),
    ("user", "user_selection"),
    ("assistant", "assistant_acknowledgment"),
)


def _text(form: str, item: dict[str, Any]) -> str:
    if form == "explicit":
        return str(item.get("preference", ""))
    conv = item.get("conversation") or {}
    if form == "choice-based":
        return "\n".join(f"{who}: {conv[key]}" for who, key in _CHOICE if conv.get(key))
    turns = sorted(conv.items(), key=lambda kv: int(kv[0]) if kv[0].isdigit() else 0)
    return "\n".join(
        f"{who}: {turn[who]}" for _, turn in turns for who in ("user", "assistant") if turn.get(who)
    )


def _load(path: Path) -> list[dict[str, Any]]:
    try:
        items = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InvalidInput(f"cannot read the PrefEval file {path}: {exc}") from exc
    if not isinstance(items, list):
        raise InvalidInput(f"{path} is not a list of PrefEval items")
    return items


def read_prefeval(folder: str | Path, *, limit: int | None = None) -> list[Character]:
    """The first ``limit`` (topic, form) groups (all by default, topic by
    topic) of PrefEval's ``benchmark_dataset`` folder."""
    root = Path(folder)
    topics = sorted(p.stem for p in (root / FORMS[0][1]).glob("*.json"))
    if not topics:
        raise InvalidInput(
            f"no {FORMS[0][1]}/*.json in {root}: pass PrefEval's benchmark_dataset folder"
        )
    out = []
    for topic in topics:
        for form, sub in FORMS:
            path = root / sub / f"{topic}.json"
            if not path.exists():
                continue
            passages, questions = [], []
            for i, item in enumerate(_load(path)):
                text, ask = _text(form, item), str(item.get("question") or "")
                if not (text and ask):
                    continue
                pid = f"{topic}/{i}"
                passages.append(Passage(pid, form, text))
                questions.append(Question(f"{form}/{pid}", form, ask, frozenset({pid})))
            if questions:
                out.append(Character(f"{form}/{topic}", tuple(passages), tuple(questions)))
            if limit is not None and len(out) >= limit:
                return out
    return out


def write_prefeval_synthetic(folder: str | Path) -> Path:
    """A tiny set in PrefEval's format (two topics, every form), for smoke runs
    and tests where the real set is not at hand."""
    root = Path(folder)
    topics = {
        "travel_hotel": [
            ("I avoid hotels with loud nightlife.", "Which hotels in Las Vegas suit me?"),
            ("I only stay where pets are welcome.", "Where should I stay in Paris?"),
        ],
        "lifestyle_dietary": [
            ("I never eat shellfish.", "What should I order at a seafood bar?"),
            ("I keep a strictly vegan diet.", "Plan a dinner menu for my birthday."),
        ],
    }
    for _, sub in FORMS:
        (root / sub).mkdir(parents=True, exist_ok=True)
    for topic, pairs in topics.items():
        base = [{"preference": p, "question": q, "explanation": ""} for p, q in pairs]
        choice = [
            {
                **b,
                "conversation": {
                    "query": "Any ideas for this weekend?",
                    "assistant_options": "1. a quiet inn 2. a party resort",
                    "user_selection": f"The first, since {b['preference'].lower()}",
                    "assistant_acknowledgment": "Noted.",
                },
            }
            for b in base
        ]
        persona = [
            {
                **b,
                "persona": "a nurse",
                "conversation": {
                    "1": {"user": f"By the way, {b['preference'].lower()}", "assistant": "Sure."},
                    "0": {"user": "Hello there.", "assistant": "Hi! How can I help?"},
                },
            }
            for b in base
        ]
        for (_, sub), items in zip(FORMS, (base, choice, persona), strict=True):
            (root / sub / f"{topic}.json").write_text(json.dumps(items), encoding="utf-8")
    return root
