"""``branchmem eval recall``: a thin shell over `branchmem_eval.recall` (a labelled
set) and `branchmem_eval.scenario_eval` (the shipped scenario sets)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from branchmem_eval import load_labelled, read_labelled, recall
from branchmem_eval.scenario_eval import Report, run_set
from branchmem_eval.scenarios import SETS, SPLITS, load_set

from ..errors import InvalidInput
from ..retrieval import MODES
from ..store import Store


def register(sub: Any) -> None:
    e = sub.add_parser("eval", help="evaluate retrieval")
    esub = e.add_subparsers(dest="eval_command", metavar="WHAT", required=True)
    er = esub.add_parser(
        "recall",
        help="Recall@1/5/10 and MRR of a labelled set, or the pass rate of a scenario set",
        description="FILE: without --db the store is built in memory from the set's own "
        "event and memory lines; with --db those lines are added to that store. "
        "--set: each scenario of a shipped set is seeded into a fresh store in memory "
        "and its assertions judged (pass rate, Recall@k, precision@k).",
    )
    er.add_argument("file", nargs="?", help="labelled set (JSONL); or pass --set")
    er.add_argument("--set", choices=SETS, help="a shipped scenario set instead of FILE")
    er.add_argument("--split", choices=SPLITS, help="with --set: one split (default: each in turn)")
    er.add_argument(
        "--failures",
        action="store_true",
        help="with --set: list the failed assertions (tune split only)",
    )
    er.add_argument("--db", help="SQLite store file (default: in memory)")
    er.add_argument(
        "--embedder",
        action="append",
        help="embedder to compare (repeatable; default: the default embedder)",
    )
    er.add_argument(
        "--mode", action="append", choices=MODES, help="modes (default: all; hybrid with --set)"
    )
    er.add_argument(
        "--tokenizer",
        choices=("bigram", "jieba"),
        default=None,
        help="keyword tokens: CJK character bigrams (default) or jieba words",
    )
    er.add_argument(
        "--hops", type=int, default=0, help="with --set: search(..., hops=N), the relation graph"
    )
    er.add_argument("--json", action="store_true", help="print the figures as JSON")
    er.set_defaults(func=_eval_recall)


def _eval_recall(args: argparse.Namespace) -> int:
    if (args.file is None) == (args.set is None):
        raise InvalidInput("eval recall takes a labelled-set FILE or --set NAME (one of them)")
    if args.set is not None:
        return _eval_scenarios(args)
    if args.split or args.failures:
        raise InvalidInput("--split and --failures apply to --set")
    data = read_labelled(args.file)
    store = Store(args.db) if args.db else Store(clock=lambda: 0.0)
    # A set built in memory has every record created at t=0; measure recency from
    # there too, so the numbers never depend on the day they are computed.
    now = None if args.db else 0.0
    modes = args.mode or list(MODES)
    embedders = args.embedder or [None]
    rows = []
    with store:
        load_labelled(store, data)
        if "keyword" in modes:
            rows.append(
                recall(store, data.queries, mode="keyword", tokenizer=args.tokenizer, now=now)
            )
        for emb in embedders:
            for mode in modes:
                if mode != "keyword":
                    rows.append(
                        recall(
                            store,
                            data.queries,
                            mode=mode,
                            embedder=emb,
                            tokenizer=args.tokenizer,
                            now=now,
                        )
                    )
    if args.json:
        for row in rows:
            print(json.dumps(row.to_dict(), ensure_ascii=False))
        return 0
    print(f"{'embedder':<18} {'mode':<8} {'n':>4} {'R@1':>6} {'R@5':>6} {'R@10':>6} {'MRR':>6}")
    for row in rows:
        r = row.recall
        print(
            f"{row.embedder:<18} {row.mode:<8} {row.queries:>4} "
            f"{r.get(1, 0):>6.3f} {r.get(5, 0):>6.3f} {r.get(10, 0):>6.3f} {row.mrr:>6.3f}"
        )
    return 0


def _eval_scenarios(args: argparse.Namespace) -> int:
    if args.db:
        raise InvalidInput("--set seeds each scenario into a fresh store in memory; drop --db")
    splits = [args.split] if args.split else list(SPLITS)
    if args.failures and "held-out" in splits:
        raise InvalidInput(
            "--failures lists the tune split only (add --split tune): the held-out split "
            "is for measuring, never for reading while tuning"
        )
    modes = args.mode or ["hybrid"]
    runs = [(None, "keyword")] if "keyword" in modes else []  # keyword ranks without vectors
    runs += [(e, m) for e in args.embedder or [None] for m in modes if m != "keyword"]
    reports: list[Report] = []
    for split in splits:
        data = load_set(args.set, split)
        for emb, mode in runs:
            reports.append(
                run_set(
                    lambda clock: Store(clock=clock),
                    data,
                    mode=mode,
                    embedder=emb,
                    tokenizer=args.tokenizer,
                    hops=args.hops,
                )
            )
    if args.json:
        for r in reports:
            print(json.dumps(r.to_dict(outcomes=args.failures), ensure_ascii=False))
        return 0
    print(f"{'set':<10} {'split':<9} {'embedder':<16} {'mode':<8} {'pass rate':<20} R@k    P@k")
    for r in reports:
        rate = f"{r.pass_rate:.2f} ({r.passed}/{r.assertions})"
        print(
            f"{r.set:<10} {r.split:<9} {r.embedder:<16} {r.mode:<8} {rate:<20} "
            f"{r.recall:.3f}  {r.precision:.3f}"
        )
    skipped = {r.split: r.edges_skipped for r in reports if r.edges_skipped}
    for split, n in skipped.items():
        print(f"{split}: {n} edges of the set not loaded (this store has no add_edge)")
    for r in reports if args.failures else []:
        print(f"\nfailed, {r.embedder} {r.mode}:")
        for o in r.failures():
            a, v = o.assertion, o.verdict
            where = f"{o.scenario}/{a.id} k={a.k} {a.query!r}"
            print(f"  {where}: missed {list(v.missed)}, leaked {list(v.leaked)}")
    return 0
