"""Redaction: precision and recall per detector, throughput, and its cost on ingest.

    python bench/redact.py            # 20,000 texts, 5,000 events per ingest run
    python bench/redact.py --quick    # 2,000 texts, 1,000 events
    python bench/redact.py --smoke    # 200 texts, 100 events (seconds)
    python bench/redact.py --baseline-src ../main/src   # also: no redactor, here vs there

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
  redaction adds to a write. Then the same with an imported message's
  ``meta`` on each event (a ChatGPT export's: source, model, the content kept
  whole), in memory and in SQLite, where the redactor walks the meta too.
* **no redactor, against a baseline** (``--baseline-src DIR``) — the ingest
  with meta (50,000 events; 10,000 with ``--quick``) and no redactor, each run
  in a fresh process, alternately importing branchmem from this checkout and
  from ``DIR`` (another checkout's ``src``), timed in CPU time (the load of
  other processes adds less to it than to wall time): the ratio shows what a
  store without a redactor pays for the redaction code (1.00x: nothing).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from statistics import median

sys.path.insert(0, os.environ.get("BRANCHMEM_BENCH_SRC") or str(Path(__file__).parents[1] / "src"))

from branchmem import Redactor, Store
from branchmem_eval.redact import evaluate, load

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


def with_meta(n: int, pool: list[str]) -> list[dict[str, object]]:
    """Events as a ChatGPT import writes them: the message's meta on each."""
    out = []
    for i in range(n):
        text = pool[i % len(pool)]
        content = {"content_type": "multimodal_text", "parts": [{"asset": f"file-{i}"}, text]}
        kind = content["content_type"]
        meta = {"source": "chatgpt", "created_at": 1.7e9 + i, "model": "gpt-4o",
                "author_role": "user", "content_type": kind, "content": content}  # fmt: skip
        out.append({"id": f"e{i}", "parent": f"e{i - 1}" if i else None, "content": text,
                    "meta": meta})  # fmt: skip
    return out


def ingest_time(
    events: list[dict[str, object]], where: str, redactor: Redactor | None, *, cpu: bool = False
) -> float:
    """Seconds to add ``events`` in one batch to a fresh store (memory or SQLite):
    wall time, or with ``cpu`` this process's CPU time (which the load of other
    processes on a shared machine adds less to)."""
    clock = time.process_time if cpu else time.perf_counter
    with tempfile.TemporaryDirectory() as d:
        store = Store(None if where == "memory" else Path(d) / "b.db", redactor=redactor)
        t0 = clock()
        store.add_events(events)
        took = clock() - t0
        store.close()
    return took


def baseline(args: argparse.Namespace, n: int) -> None:
    """No redactor: ingest with meta, this checkout against ``--baseline-src``, each
    run in a fresh process (a long-lived one's heap would weigh on one side),
    alternately."""
    sides = {"here": str(Path(__file__).resolve().parents[1] / "src"),
             "baseline": str(Path(args.baseline_src).resolve())}  # fmt: skip
    for where in ("memory", "sqlite"):
        took: dict[str, list[float]] = {side: [] for side in sides}
        for _ in range(args.runs):
            for side, src in sides.items():
                cmd = [sys.executable, __file__, "--time-only", where, "--events", str(n)]
                env = {**os.environ, "BRANCHMEM_BENCH_SRC": src}
                took[side].append(json.loads(subprocess.check_output(cmd, env=env)))
        here, there = took["here"], took["baseline"]
        print(
            f"no redactor, {n} events with meta ({where}), CPU time, best of {args.runs}: here "
            f"{min(here) * 1e3:.0f} ms, baseline {min(there) * 1e3:.0f} ms; "
            f"ratio {min(here) / min(there):.2f}x (medians {median(here) / median(there):.2f}x)"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes (a few seconds)")
    ap.add_argument("--smoke", action="store_true", help="the smallest sizes (seconds)")
    ap.add_argument(
        "--baseline-src", help="a checkout's src to time the no-redactor ingest against"
    )
    ap.add_argument("--runs", type=int, default=11, help="alternating runs against the baseline")
    ap.add_argument("--baseline-only", action="store_true", help="only the baseline comparison")
    ap.add_argument("--time-only", help=argparse.SUPPRESS)  # (the baseline's side: one timing)
    ap.add_argument("--events", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.time_only:
        pool = [r["text"] for r in load(DATA)]
        events = with_meta(args.events, pool)
        print(json.dumps(ingest_time(events, args.time_only, None, cpu=True)))
        return
    n_texts, n_events = (2_000, 1_000) if args.quick else (20_000, 5_000)
    if args.smoke:
        n_texts, n_events = 200, 100
    if args.baseline_only:
        if not args.baseline_src:
            ap.error("--baseline-only needs --baseline-src DIR")
        baseline(args, 10 * n_events)
        return
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

    labelled = [r["text"] for r in rows]
    events = with_meta(n_events, labelled)
    for where in ("memory", "sqlite"):
        t_plain = best_of(3, lambda where=where: ingest_time(events, where, None))
        t_red = best_of(3, lambda where=where: ingest_time(events, where, redactor))
        print(
            f"ingest of {n_events} events with meta ({where}, labelled texts): without "
            f"redactor {t_plain * 1e3:.0f} ms, with {t_red * 1e3:.0f} ms; "
            f"ratio {t_red / t_plain:.2f}x"
        )
    if args.baseline_src:
        baseline(args, 10 * n_events)


if __name__ == "__main__":
    main()
