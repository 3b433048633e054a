"""``branchmem import``: a thin shell over `Store.import_export`."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from ..importers import FORMATS, import_export, read_export
from ..store import Store
from ..validate import MAX_MESSAGE_BYTES, check_namespace
from .words import count


def register(sub: Any) -> None:
    p = sub.add_parser(
        "import",
        help="import a chat export (ChatGPT, Claude, Open WebUI, LibreChat, SillyTavern) "
        "or coding-agent transcripts (Claude Code, Codex)",
        description="Every message becomes an event (abandoned branches too) and branch "
        "conv/<id> points at each conversation's current message. Importing again "
        "adds only what is new.",
    )
    p.add_argument("file", nargs="+", help="export file, or a folder of chats or transcripts")
    p.add_argument(
        "--db", required=True, help="SQLite store file or postgresql:// URL (created if missing)"
    )
    p.add_argument(
        "--format",
        choices=("auto", *FORMATS),
        default="auto",
        help="the export's format (default: detected)",
    )
    p.add_argument("--namespace", default="default", help="namespace (default: %(default)s)")
    p.add_argument(
        "--max-message-bytes",
        type=int,
        default=MAX_MESSAGE_BYTES,
        metavar="N",
        help="skip a conversation with a message whose text is over N bytes "
        "(UTF-8; default and most: %(default)s, 1 MiB, the content limit of every event)",
    )
    p.add_argument("--json", action="store_true", help="print the report as one JSON object")
    p.set_defaults(func=_import)


def _import(args: argparse.Namespace) -> int:
    bar = _Bar() if sys.stderr.isatty() and not args.json else None
    # The export and the namespace are checked before the store is opened: a bad
    # one leaves no new store file behind.
    namespace = check_namespace(args.namespace)
    export = read_export(
        args.file if len(args.file) > 1 else args.file[0],
        args.format,
        max_message_bytes=args.max_message_bytes,
    )
    made = _new_store_file(args.db)
    with Store(args.db) as store:
        report = import_export(store, export, namespace=namespace, progress=bar)
    if bar is not None:
        bar.close()
    # Nothing came in (every item skipped, or none there at all): exit 1 and
    # leave no empty store behind.
    failed = not report.conversations
    if failed and made is not None:
        _remove_store_file(made)
    if args.json:
        print(json.dumps(report.to_dict(), ensure_ascii=False))
        if failed:
            print(f"error: {_why_nothing(report)}", file=sys.stderr)
        return 1 if failed else 0
    if report.format is None and not report.skipped:  # an empty list: no format to name
        print(f"error: {_why_nothing(report)}", file=sys.stderr)
        return 1
    conflicts = sum(len(c.conflicts) for c in report.conversations)
    print(
        f"{report.format}: {count(len(report.conversations), 'conversation')}, "
        f"{count(report.added, 'event')} added, {count(conflicts, 'conflict')}, "
        f"{len(report.skipped)} skipped"
    )
    for c in report.conversations:
        # The branch, and the conversation's own id where the branch name had to
        # change it (a branch name holds no space or '/'; the event ids keep them).
        named = "" if c.branch == f"conv/{c.id}" else f" (conversation {c.id!r})"
        print(f"  {c.branch}{named}: {count(c.events, 'event')}, {c.added} added")
        for note in c.notes:
            print(f"  note: {c.branch}: {note}")
        for conflict in c.conflicts:
            print(
                f"  conflict: {c.branch}: event {conflict.id!r} is stored with another "
                f"{', '.join(conflict.fields)}; kept the stored one"
            )
    for s in report.skipped:
        print(f"  skipped {s.id or '(no id)'}: {s.reason}")
    if failed:
        print(f"error: {_why_nothing(report)}", file=sys.stderr)
        return 1
    return 0


def _why_nothing(report: Any) -> str:
    if report.skipped:
        return (
            f"nothing was imported: every item ({len(report.skipped)}) was skipped; "
            "check the file and --format (leave it out to detect the format)"
        )
    return "nothing to import: the file holds no conversations (an empty list)"


def _new_store_file(db: str) -> Path | None:
    """The SQLite file ``db`` names if importing would create it, else None."""
    if "://" in db:
        return None
    path = Path(db)
    return None if path.exists() else path


def _remove_store_file(path: Path) -> None:
    for p in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        p.unlink(missing_ok=True)


BAR_MIN = 1 << 20
"""Files smaller than this (bytes) get no progress bar."""


class _Bar:
    """A progress bar on stderr, redrawn at most ten times a second."""

    def __init__(self) -> None:
        self._last = 0.0
        self._shown = False

    def __call__(self, done: int, total: int) -> None:
        if total < BAR_MIN:
            return
        self._shown = True
        now = time.monotonic()
        if now - self._last < 0.1 and done < total:
            return
        self._last = now
        frac = done / total if total else 1.0
        fill = int(frac * 30)
        sys.stderr.write(f"\rimporting [{'#' * fill}{'.' * (30 - fill)}] {frac:6.1%}")
        sys.stderr.flush()

    def close(self) -> None:
        if self._shown:
            sys.stderr.write("\n")
