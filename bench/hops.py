"""Multi-hop search on a store of plain memories: hops off and on, side by side.

    python bench/hops.py                                  # multihop + scenarios, both splits
    python bench/hops.py --set multihop --split tune --hops 0 --hops 2

For each set and split and each ``--hops`` value, the pass rate, Recall@k and
precision@k of keyword and hybrid (hashing) search, twice: with the scenario's
``edges`` written by ``add_edge`` ("edges") and without them ("plain": a store
of memories only, where any link comes from the entities the records name,
`branchmem.graph.entities`). The scoring rule is `branchmem_eval.scenario_eval`'s.
Deterministic.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from branchmem import Store
from branchmem_eval.scenario_eval import ScenarioClock, run_set
from branchmem_eval.scenarios import SETS, SPLITS, load_set


class Plain:
    """A store that offers no ``add_edge``: seeding writes the memories only."""

    def __init__(self, store: Store) -> None:
        self._store = store

    def __getattr__(self, name: str) -> Any:
        if name == "add_edge":
            raise AttributeError(name)
        return getattr(self._store, name)

    def __enter__(self) -> Plain:
        return self

    def __exit__(self, *exc: object) -> None:
        self._store.close()


def with_edges(clock: ScenarioClock) -> Store:
    return Store(clock=clock)


def plain(clock: ScenarioClock) -> Plain:
    return Plain(Store(clock=clock))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--set", choices=SETS, action="append", help="default: both")
    ap.add_argument("--split", choices=SPLITS, action="append", help="default: both")
    ap.add_argument("--hops", type=int, action="append", help="default: 0 and 2")
    ap.add_argument("--mode", action="append", help="default: keyword and hybrid")
    ap.add_argument("--no-edges-only", action="store_true", help="skip the runs with edges")
    ap.add_argument("--failures", action="store_true", help="print the failed assertions")
    ap.add_argument(
        "--smoke", action="store_true", help="multihop tune, keyword, plain, hops 0 and 2"
    )
    args = ap.parse_args()
    if args.smoke:
        args.set, args.split, args.mode = ["multihop"], ["tune"], ["keyword"]
        args.no_edges_only = True
    for name in args.set or SETS:
        for split in args.split or list(SPLITS):
            data = load_set(name, split)
            for mode in args.mode or ["keyword", "hybrid"]:
                stores = [("plain", plain)]
                if not args.no_edges_only:
                    stores.append(("edges", with_edges))
                for label, opener in stores:
                    for hops in args.hops or [0, 2]:
                        r = run_set(
                            opener,  # type: ignore[arg-type]
                            data,
                            mode=mode,
                            embedder="hashing" if mode != "keyword" else None,
                            hops=hops,
                        )
                        print(
                            f"{name:<9} {split:<8} {mode:<7} {label:<5} hops={hops}  "
                            f"pass rate {r.pass_rate:.2f} ({r.passed}/{r.assertions})  "
                            f"recall@k {r.recall:.3f}  precision@k {r.precision:.3f}",
                            flush=True,
                        )
                        if args.failures:
                            for o in r.failures():
                                a = o.assertion
                                print(
                                    f"   FAIL {o.scenario}/{a.id} {a.query!r} k={a.k} "
                                    f"missed={list(o.verdict.missed)} "
                                    f"leaked={list(o.verdict.leaked)}"
                                )


if __name__ == "__main__":
    main()
