"""``branchmem purge``, ``branchmem checkpoint`` and ``branchmem audit``: thin shells
over `Store.purge`, `Store.checkpoint` / `Store.erasure_pending` and `Store.audit`,
for erasure requests and their paper trail without writing Python."""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from ..errors import InvalidInput
from ..store import Store

_DB_HELP = "SQLite store file or postgresql:// URL (opened, never created)"


def register(sub: Any) -> None:
    p = sub.add_parser(
        "purge",
        help="erase events, memories or a whole namespace (really deleted, bytes zeroed)",
        description=(
            "Store.purge: events are blanked and every record sourced from them deleted; "
            "memories are deleted with what was derived from them; --whole-namespace "
            "deletes everything of the namespace. The write-ahead log is truncated and "
            "the store's query logs lose the searches that returned a purged record. "
            "Nothing is done without --yes."
        ),
    )
    p.add_argument("--db", required=True, help=_DB_HELP)
    p.add_argument("--namespace", default="default", help="namespace (default: %(default)s)")
    p.add_argument("--event", action="append", default=[], metavar="ID", help="repeatable")
    p.add_argument("--memory", action="append", default=[], metavar="ID", help="repeatable")
    p.add_argument(
        "--whole-namespace", action="store_true", help="erase the namespace and its name"
    )
    p.add_argument(
        "--query-log",
        action="append",
        default=[],
        metavar="FILE",
        help="repeatable: another query log file to purge as well",
    )
    p.add_argument("--actor", help="who asked, for the audit log")
    p.add_argument("--yes", action="store_true", help="really erase (required)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(func=_purge)

    c = sub.add_parser(
        "checkpoint",
        help="finish a purge: copy the write-ahead log into the file and truncate it",
        description=(
            "Store.checkpoint on an SQLite store. Exits 0 when the log was truncated, "
            "3 when another connection's read still holds it back (run it again later)."
        ),
    )
    c.add_argument("--db", required=True, help=_DB_HELP)
    c.add_argument("--json", action="store_true", help="print the result as JSON")
    c.set_defaults(func=_checkpoint)

    a = sub.add_parser("audit", help="print a namespace's audit log, oldest first")
    a.add_argument("--db", required=True, help=_DB_HELP)
    a.add_argument("--namespace", default="default", help="namespace (default: %(default)s)")
    a.add_argument("--since", type=float, help="only entries at or after this time (epoch s)")
    a.add_argument("--json", action="store_true", help="print the entries as JSON lines")
    a.set_defaults(func=_audit)


def _purge(args: argparse.Namespace) -> int:
    if not (args.event or args.memory or args.whole_namespace):
        raise InvalidInput("name what to erase: --event ID, --memory ID or --whole-namespace")
    if args.whole_namespace and (args.event or args.memory):
        raise InvalidInput("--whole-namespace erases everything; leave out --event and --memory")
    if not args.yes:
        raise InvalidInput("purge cannot be undone; add --yes to erase")
    with Store(args.db, create=False) as store:
        removed = store.purge(
            events=args.event,
            memories=args.memory,
            namespace=args.namespace,
            whole_namespace=args.whole_namespace,
            actor=args.actor,
            query_logs=args.query_log,
        )
        pending = store.erasure_pending()
    if args.json:
        print(json.dumps({"removed": removed, "erasure_pending": pending}, ensure_ascii=False))
    else:
        print(f"removed {len(removed)}: {' '.join(removed)}" if removed else "removed nothing")
        if pending:
            print("the write-ahead log still holds erased bytes (a reader held it back):")
            print(f"  run `branchmem checkpoint --db {args.db}` once readers are done")
    return 0


def _checkpoint(args: argparse.Namespace) -> int:
    with Store(args.db, create=False) as store:
        done = store.checkpoint()
        pending = store.erasure_pending()
    if args.json:
        print(json.dumps({"complete": done, "erasure_pending": pending}))
    elif done:
        print("checkpoint complete: the write-ahead log is empty")
    else:
        print("checkpoint incomplete: another connection is reading; run it again later")
    return 0 if done else 3


def _audit(args: argparse.Namespace) -> int:
    with Store(args.db, create=False) as store:
        entries = store.audit(args.namespace, since=args.since)
    if not entries and not args.json:
        since = f" at or after {args.since:g}" if args.since is not None else ""
        print(
            f"no audit entries in namespace {args.namespace!r}{since} "
            "(is it the namespace you meant? --namespace names another)",
            file=sys.stderr,
        )
    for e in entries:
        if args.json:
            print(json.dumps(e.to_dict(), ensure_ascii=False))
        else:
            when = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(e.at))
            who = f" by {e.actor}" if e.actor else ""
            print(f"{e.seq:>6}  {when}Z  {e.op}{who}: {' '.join(e.ids)}")
    return 0
