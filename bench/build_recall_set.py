"""Build the retrieval labelled set from the branchbench dev split, deterministically.

    python bench/build_recall_set.py            # writes bench/data/recall-dev.jsonl
    python bench/build_recall_set.py --smoke    # writes a temporary copy, compares it, removes it

One namespace per scenario. Every event is stored; the memories are what the
shared offline extractor (`branchbench.extract.Extractor`) derives as the
events arrive: one fact per user message (``f1``, ``f2``, ... with its topic
key) and one summary per four messages (``s1``, ...). Each question becomes a
query at the scenario's anchor whose expected ids are the memories *visible
there* that hold one of its answer words; a question none of them answers is
left out. Abandoned-branch memories are in the store, so a search that leaked
would be visible in the numbers.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from branchbench.extract import Extractor
from branchbench.scenario import load_split, split_dir
from branchmem import Store

OUT = Path(__file__).parent / "data" / "recall-dev.jsonl"


def build(split: str = "dev") -> list[dict[str, Any]]:
    lines: list[dict[str, Any]] = []
    for sc in load_split(split_dir(split)):
        ns = sc.id
        store = Store(clock=lambda: 0.0)
        events = [
            {"id": e.id, "parent": list(e.parents) or None, "role": e.role, "content": e.content}
            for e in sc.events
        ]
        ex = Extractor()
        mems: list[dict[str, Any]] = []
        counts = {"fact": 0, "summary": 0}
        derived = [d for e in sc.events for d in ex.observe(e)] + ex.flush()
        for d in derived:
            counts[d.kind] += 1
            mems.append(
                {
                    "id": f"{d.kind[0]}{counts[d.kind]}",
                    "content": d.content,
                    "sources": list(d.sources),
                    "kind": "semantic" if d.kind == "fact" else "episodic",
                    "key": d.key,
                }
            )
        store.add_events(events)
        store.add_memories(mems)
        visible = store.memories(at=sc.anchor)
        lines += [{"type": "event", "namespace": ns, **e} for e in events]
        lines += [{"type": "memory", "namespace": ns, **m} for m in mems]
        for q in sc.questions:
            expected = [m.id for m in visible if any(a in m.content for a in q.answer_any)]
            if not expected:
                continue
            lines.append(
                {
                    "type": "query",
                    "id": f"{ns}/{q.id}",
                    "namespace": ns,
                    "at": sc.anchor,
                    "query": q.question,
                    "question_type": q.type,
                    "expected_ids": expected,
                    "expected_keywords": list(q.answer_any),
                }
            )
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--split", default="dev")
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument(
        "--smoke",
        action="store_true",
        help=f"write the set to a temporary folder, say whether it matches {OUT.name}, remove it",
    )
    args = ap.parse_args()
    if not args.smoke:
        write(build(args.split), args.out)
        return
    with tempfile.TemporaryDirectory(prefix="branchmem-recall-") as d:
        out = Path(d) / OUT.name
        write(build(args.split), out)
        same = out.read_bytes() == OUT.read_bytes()
    shipped = OUT.relative_to(OUT.parents[2])
    print(f"  {'the same as' if same else 'differs from'} the shipped {shipped}")


def write(lines: list[dict[str, Any]], out: Path) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8") as f:
        for d in lines:
            f.write(json.dumps(d, ensure_ascii=False, sort_keys=True) + "\n")
    n = sum(d["type"] == "query" for d in lines)
    print(f"wrote {out} ({len(lines)} lines, {n} queries)")


if __name__ == "__main__":
    main()
