"""The ``branchmem`` command: a thin shell that parses, calls the public API, and prints.

Each subcommand lives in its own module with ``register(subparsers)``, which adds
its parser and sets ``func`` (called with the parsed args, returning an exit code).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from . import __version__
from .errors import BranchmemError

# Modules that add subcommands; each has register(subparsers).
COMMAND_MODULES = (
    "branchmem.demo",
    "branchmem.cli_search",
    "branchmem.cli_extract",
    "branchmem.cli_serve",
    "branchmem.cli_import",
    "branchmem.cli_admin",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="branchmem",
        description="Memory for LLM agents and chat apps whose history is a tree.",
    )
    parser.add_argument("--version", action="version", version=f"branchmem {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    import importlib

    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
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


if __name__ == "__main__":
    raise SystemExit(main())
