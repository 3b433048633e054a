"""Precision and recall of `RuleExtractor` on the held-apart labelled set.

    python bench/rules_accuracy.py [--misses]
    python bench/rules_accuracy.py --smoke   # the same (the set is small: seconds)

The set (tests/data/rules_heldout.jsonl, 157 Chinese and English utterances,
about a quarter stating nothing about the user: questions, small talk, facts
about other people, suppositions) was written and committed (commit 3de47fc)
before the patterns were written, and the patterns were not changed after it
was first measured. Its author also wrote the patterns, so phrasings one
person thinks of overlap; read the figures as an upper estimate for other
people's wording.

A second line scores the kinds added later (device changes, pets, diet
changes, sport) on their own set, tests/data/rules_kinds.jsonl, written
before those patterns and kept apart from the first.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from branchmem.extract import RuleExtractor
from branchmem_eval.extract import load, score

SET = Path(__file__).resolve().parent.parent / "tests" / "data" / "rules_heldout.jsonl"
KINDS = SET.with_name("rules_kinds.jsonl")  # device changes, pets, diet, sport: apart


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--misses", action="store_true", help="print every miss")
    ap.add_argument("--smoke", action="store_true", help="the same run (it is already seconds)")
    args = ap.parse_args()
    items = load(SET)
    parse = RuleExtractor().parse
    for lang in ("zh", "en", "all"):
        part = [i for i in items if lang == "all" or _lang(i["text"]) == lang]
        s = score(parse, part)
        print(
            f"{lang:>3}: {len(part):3d} utterances, precision {s.precision:.2f} "
            f"({s.true_pos}/{s.true_pos + s.false_pos}), recall {s.recall:.2f} "
            f"({s.true_pos}/{s.true_pos + s.false_neg})"
        )
    s = score(parse, load(KINDS))
    print(
        f"kinds set: precision {s.precision:.2f} ({s.true_pos}/{s.true_pos + s.false_pos}), "
        f"recall {s.recall:.2f} ({s.true_pos}/{s.true_pos + s.false_neg})"
    )
    if args.misses:
        for m in score(parse, items).misses:
            print(m)


def _lang(text: str) -> str:
    return "zh" if any("\u3400" <= c <= "\u9fff" for c in text) else "en"


if __name__ == "__main__":
    main()
