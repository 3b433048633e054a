"""``branchmem branches``: a namespace's branches and their heads (`Store.branches`)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ..store import Store
from .words import count


def register(sub: Any) -> None:
    p = sub.add_parser(
        "branches",
        help="list a namespace's branches with their heads",
        description="Every branch of the namespace, sorted by name: its head (the event "
        "it points at), the event it was forked at, the branch it was forked from, and "
        "how many memories are visible at its head.",
    )
    p.add_argument("--db", required=True, help="SQLite store file or postgresql:// URL")
    p.add_argument("--namespace", default="default", help="namespace (default: %(default)s)")
    p.add_argument("--json", action="store_true", help="print the branches as one JSON list")
    p.set_defaults(func=_branches)


def _branches(args: argparse.Namespace) -> int:
    with Store(args.db, create=False) as store:
        found = store.branches(namespace=args.namespace)
    if args.json:
        print(json.dumps([b.to_dict() for b in found], ensure_ascii=False))
        return 0
    if not found:
        print(
            f"no branches in namespace {args.namespace!r} "
            "(is it the namespace you meant? --namespace names another)",
            file=sys.stderr,
        )
        return 0
    width = max(len(b.name) for b in found)
    for b in found:
        forked = f", forked from {b.parent}" if b.parent else ""
        seen = "" if b.memories is None else count(b.memories, "visible memory") + ", "
        print(f"{b.name:<{width}}  head {b.head}  ({seen}forked at {b.fork_point}{forked})")
    return 0
