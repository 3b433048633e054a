"""REALTALK read from a path: long real conversations between two people, each
question labelled with the turns that hold its evidence.

REALTALK (not shipped: it has no license file, so it is read from a clone,
see docs/retrieval.md) keeps one file per conversation, ``Chat_N_A_B.json``,
in its ``data`` folder (only those files are read, never a subfolder):

* ``session_1`` ... ``session_M``: the turns, in order, each
  ``{"clean_text", "speaker", "date_time", "dia_id", "blip_caption"?}``
  (``blip_caption`` describes a photo the turn shared);
* ``qa``: ``[{"question", "answer", "evidence": [dia_id, ...], "category"}]``,
  the category as the set's own scoring treats it: 1 a question whose
  answer gathers several turns (``multi-hop``), 2 one about when
  (``temporal``), 3 one that needs an inference from what was said
  (``open-domain``).

Each conversation is one `Character`; each turn one passage (its id the
``dia_id``, its text ``speaker: clean_text``, with the photo's caption),
in session order, with the time it was said; each question has the turns its evidence names as gold
(ids written with a stray space or full stop are read as meant; a question
none of whose evidence is a turn of the conversation is left out).
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from branchmem.errors import InvalidInput
from branchmem_eval.public import Character, Passage, Question

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain"}
_SESSION = re.compile(r"session_([0-9]+)")


def _turns(chat: dict[str, Any]) -> list[dict[str, Any]]:
    sessions = sorted(
        (int(m.group(1)), v)
        for k, v in chat.items()
        if (m := _SESSION.fullmatch(k)) and isinstance(v, list)
    )
    return [t for _, turns in sessions for t in turns if isinstance(t, dict)]


def _text(turn: dict[str, Any]) -> str:
    text = f"{turn.get('speaker', '')}: {turn.get('clean_text', '')}"
    caption = turn.get("blip_caption")
    return f"{text} [shares a photo: {caption}]" if caption else text


def _when(turn: dict[str, Any]) -> float | None:
    """The turn's ``date_time`` ("29.12.2023, 22:42:04") as Unix time (read as UTC)."""
    try:
        return (
            datetime.strptime(str(turn.get("date_time")), "%d.%m.%Y, %H:%M:%S")
            .replace(tzinfo=timezone.utc)
            .timestamp()
        )
    except ValueError:
        return None


def read_chat(path: Path) -> tuple[Character, int]:
    """One conversation, and how many of its questions were left out (no
    evidence among its turns)."""
    try:
        chat = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InvalidInput(f"cannot read the REALTALK file {path}: {exc}") from exc
    if not isinstance(chat, dict) or not isinstance(chat.get("qa"), list):
        raise InvalidInput(f"{path} is not a REALTALK conversation (no qa list)")
    passages: list[Passage] = []
    seen: set[str] = set()
    for i, turn in enumerate(_turns(chat)):
        tid = str(turn.get("dia_id") or f"turn{i}")
        if tid in seen:  # (none in the set as published) a later duplicate is no one's gold
            tid = f"{tid}#{i}"
        seen.add(tid)
        passages.append(Passage(tid, "turn", _text(turn), _when(turn)))
    questions: list[Question] = []
    dropped = 0
    for j, qa in enumerate(chat["qa"]):
        if not isinstance(qa, dict):
            dropped += 1
            continue
        ask = str(qa.get("question") or "")
        evidence = qa.get("evidence") or ()
        if isinstance(evidence, str):  # one id written without its list
            evidence = (evidence,)
        gold = frozenset(
            e for e in (str(x).replace(" ", "").rstrip(".") for x in evidence) if e in seen
        )
        cat: Any = qa.get("category")
        kind = CATEGORIES.get(cat, f"category {cat}")
        if not (ask and gold):
            dropped += 1
            continue
        questions.append(Question(f"{path.stem}/q{j}", kind, ask, gold))
    return Character(path.stem, tuple(passages), tuple(questions)), dropped


def read_realtalk(
    folder: str | Path, *, limit: int | None = None, dropped: list[int] | None = None
) -> list[Character]:
    """The first ``limit`` conversations (all by default, by their number) of
    REALTALK's ``data`` folder; ``dropped`` gets each one's left-out count."""
    root = Path(folder)

    def number(p: Path) -> int:
        m = re.match(r"Chat_([0-9]+)_", p.name)
        return int(m.group(1)) if m else 0

    files = sorted(root.glob("Chat_*.json"), key=number)
    if not files:
        raise InvalidInput(f"no Chat_*.json in {root}: pass REALTALK's data folder")
    out = []
    for path in files[:limit]:
        chat, n = read_chat(path)
        out.append(chat)
        if dropped is not None:
            dropped.append(n)
    return out


def write_realtalk_synthetic(folder: str | Path) -> Path:
    """A tiny set in REALTALK's format (two conversations, every category),
    for smoke runs and tests where the real set is not at hand."""
    root = Path(folder)
    root.mkdir(parents=True, exist_ok=True)
    lines = [
        ("Ana", "I started rock climbing in 2019 at a gym in Lyon."),
        ("Ben", "Nice! I only go hiking, mostly in the Alps."),
        ("Ana", "Last weekend I visited my sister in Porto."),
        ("Ben", "Did you try the pastries there?"),
        ("Ana", "Yes, and I bought a blue ceramic tile as a gift."),
        ("Ben", "My dog Pixel loves the beach near Porto too."),
    ]
    qas = [
        ("When did Ana start rock climbing?", ["D1:1"], 2),
        ("Which cities has Ana been to?", ["D1:1", "D 2:1."], 1),
        ("What souvenir might Ana bring from Portugal?", ["D2:3"], 3),
        ("What did Ben eat?", ["D9:9"], 2),  # no such turn: left out
    ]
    for n, (a, b) in enumerate((("Ana", "Ben"), ("Cy", "Dee")), start=1):
        chat: dict[str, Any] = {"name": {"speaker_1": a, "speaker_2": b}}
        for s in (1, 2):
            chat[f"session_{s}"] = [
                {
                    "clean_text": text.replace("Ana", a).replace("Ben", b),
                    "speaker": (a if who == "Ana" else b),
                    "date_time": f"0{s}.01.2024, 20:00:00",
                    "dia_id": f"D{s}:{i + 1}",
                }
                for i, (who, text) in enumerate(lines[(s - 1) * 3 : s * 3])
            ]
        chat["session_1"][0]["blip_caption"] = "a photo of a climbing wall"
        chat["qa"] = [
            {"question": q.replace("Ana", a).replace("Ben", b), "answer": "", "evidence": ev,
             "category": c}
            for q, ev, c in qas
        ]  # fmt: skip
        (root / f"Chat_{n}_{a}_{b}.json").write_text(json.dumps(chat), encoding="utf-8")
    return root
