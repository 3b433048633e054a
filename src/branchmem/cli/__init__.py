"""The ``branchmem`` command: a thin shell that parses, calls the public API, and prints.

Each command group lives in its own module of this package with
``register(subparsers)``, which adds its parsers and sets ``func`` (called with
the parsed args, returning an exit code):

- `demo`: ``demo``, the edit / regenerate / switch-back story
- `search`: ``search``, ``prepare``, ``replay``
- `evaluate`: ``eval recall``
- `extract`: ``extract``, ``context``, ``worker``
- `imports`: ``import``
- `branches`: ``branches``
- `admin`: ``purge``, ``checkpoint``, ``audit``
- `serve`: ``serve``, ``mcp`` (the server extra)
- `keys`: ``keys create|list|revoke|delete``
- `claude_code`: ``claude-code hook|install|mcp``

`main` only builds the parser, runs the command, and turns a `BranchmemError`
into one line on stderr and exit status 1.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from .. import __version__
from ..errors import BranchmemError

COMMAND_MODULES = (
    "demo",
    "search",
    "evaluate",
    "extract",
    "serve",
    "keys",
    "imports",
    "branches",
    "admin",
    "claude_code",
)
"""The modules of this package that add commands, in the order ``--help`` lists them."""


def build_parser(modules: Sequence[str] = COMMAND_MODULES) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="branchmem",
        description="Memory for LLM agents and chat apps whose history is a tree.",
    )
    parser.add_argument("--version", action="version", version=f"branchmem {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in modules:
        importlib.import_module(f"{__name__}.{name}").register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    # The hook runs before every prompt: it parses with its own module only, and
    # so skips importing every other command's (the extractor's patterns, say).
    hook = argv[:2] == ["claude-code", "hook"]
    parser = build_parser(("claude_code",) if hook else COMMAND_MODULES)
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        code = int(args.func(args))
        sys.stdout.flush()  # here, so that a closed pipe is caught below
        return code
    except BranchmemError as exc:
        print(f"branchmem: error: {exc}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        # The reader went away (``branchmem demo | head``): stop quietly, like other tools.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
