"""Redaction: precision and recall per detector, throughput, and its cost on ingest.

    python bench/redact.py            # 20,000 texts, 5,000 events per ingest run
    python bench/redact.py --quick    # 2,000 texts, 1,000 events
    python bench/redact.py --smoke    # 200 texts, 100 events (seconds)

* **quality** — the default `Redactor` on the labelled set
  (tests/data/redact_labelled.jsonl): true and false positives and misses
  per detector, precision, recall, and how many negatives changed.
* **throughput** — ``redact()`` over texts drawn from the labelled set and
  from digit-free Chinese sentences (the common case, where only the email
  detector runs), side by side with ``str.lower()`` over the same texts as a
  floor: texts per second and the ratio.
* **ingest** — ``add_events`` of the same events (labelled texts, where most
  hold an identifier, then plain ones) into an in-memory store with and
  without ``redactor=Redactor()``, best of three runs each: the ratio is what
  redaction adds to a write.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from branchmem import Redactor, Store
from branchmem.redact.evaluate import evaluate, load

DATA = Path(__file__).resolve().parents[1] / "tests" / "data" / "redact_labelled.jsonl"
PLAIN = [
    "用户下个月搬去杭州，想找一个离西湖近的房子。",
    "我对花生过敏，点菜时请注意。",
    "The user prefers window seats and vegetarian meals.",
    "周末打算去成都看大熊猫，顺便吃火锅。",
    "会议改到下周，请提前准备材料。",
]


def best_of(runs: int, fn: Callable[[], object]) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes (a few seconds)")
    ap.add_argument("--smoke", action="store_true", help="the smallest sizes (seconds)")
    args = ap.parse_args()
    n_texts, n_events = (2_000, 1_000) if args.quick else (20_000, 5_000)
    if args.smoke:
        n_texts, n_events = 200, 100
    rows = load(DATA)
    redactor = Redactor()

    report = evaluate(redactor, rows)
    print(f"labelled set: {len(rows)} strings, {report.negatives} negatives")
    print(f"{'detector':<10} {'TP':>4} {'FP':>4} {'FN':>4} {'precision':>10} {'recall':>7}")
    for s in (*report.scores, report.total()):
        print(
            f"{s.kind:<10} {s.true_pos:>4} {s.false_pos:>4} {s.false_neg:>4} "
            f"{s.precision:>10.3f} {s.recall:>7.3f}"
        )
    print(f"negatives changed: {len(report.changed_negatives)} of {report.negatives}")

    rng = random.Random(0)
    for name, pool in (("labelled", [r["text"] for r in rows]), ("plain", PLAIN)):
        texts = [rng.choice(pool) for _ in range(n_texts)]
        chars = sum(len(t) for t in texts)
        t_red = best_of(3, lambda texts=texts: [redactor.redact(t) for t in texts])
        t_low = best_of(3, lambda texts=texts: [t.lower() for t in texts])
        print(
            f"throughput ({name} texts, {n_texts}, {chars / n_texts:.0f} chars avg): "
            f"redact {n_texts / t_red:,.0f} texts/s ({chars / t_red / 1e6:.2f} M chars/s); "
            f"str.lower {n_texts / t_low:,.0f} texts/s; ratio {t_red / t_low:.0f}x"
        )

    for name, pool in (("labelled", [r["text"] for r in rows]), ("plain", PLAIN)):
        events = [
            {"id": f"e{i}", "parent": f"e{i - 1}" if i else None, "content": pool[i % len(pool)]}
            for i in range(n_events)
        ]
        t_plain = best_of(3, lambda events=events: Store().add_events(events))
        t_red = best_of(3, lambda events=events: Store(redactor=redactor).add_events(events))
        print(
            f"ingest of {n_events} events (in memory, {name} texts): without redactor "
            f"{t_plain * 1e3:.0f} ms, with {t_red * 1e3:.0f} ms; ratio {t_red / t_plain:.2f}x"
        )


if __name__ == "__main__":
    main()
