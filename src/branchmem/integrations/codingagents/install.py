"""Write branchmem's hook entries and MCP server into a coding agent's settings,
and take them out again.

Claude Code: the hooks go to ``.claude/settings.local.json`` of the project
(``--project``; the commands hold this machine's paths, so the file that is
not shared) or ``~/.claude/settings.json`` (``--user``), under ``hooks``;
the MCP server goes to the project's ``.mcp.json`` or, for the user, to
``~/.claude.json``, under ``mcpServers``. Codex: the MCP server goes to
``.codex/config.toml`` of the project or ``$CODEX_HOME/config.toml``, in a
block between two marker comments. Installing again replaces branchmem's
entries and keeps everything else; uninstalling removes only them.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ...errors import InvalidInput

HOOK_EVENTS = ("SessionStart", "UserPromptSubmit", "Stop", "SessionEnd")
"""The events the hook is installed for: context at the first two, import at all."""
MARK = "claude-code hook"
"""A hook command holding this is branchmem's (installing again replaces it)."""
SERVER = "branchmem"
"""The MCP server's name in the settings."""
HOOK_TIMEOUT = 10
"""Seconds Claude Code waits for the hook before going on without it."""
TOML_BEGIN = "# branchmem: begin (written by `branchmem claude-code install --codex`)"
TOML_END = "# branchmem: end"


def command(sub: str, db: str | None, namespace: str | None) -> list[str]:
    """``python -m branchmem claude-code <sub>`` with this interpreter and the options."""
    cmd = [sys.executable, "-m", "branchmem", "claude-code", sub]
    cmd += ["--db", db] if db else []
    return cmd + (["--namespace", namespace] if namespace else [])


def with_hooks(settings: dict[str, Any], cmd: str | None) -> dict[str, Any]:
    """``settings`` with branchmem's hook entries replaced by ``cmd`` (removed
    when ``cmd`` is None); every other entry kept, in its order."""
    out = dict(settings)
    hooks = out.get("hooks", {})
    if not isinstance(hooks, dict):
        raise InvalidInput("the settings' 'hooks' is not a JSON object; fix it by hand first")
    hooks = dict(hooks)
    for event in dict.fromkeys((*HOOK_EVENTS, *hooks)):
        groups = hooks.get(event, [])
        if not isinstance(groups, list):  # not ours to judge: left as it is
            continue
        kept = [g for g in map(_without_ours, groups) if g is not None]
        if cmd is not None and event in HOOK_EVENTS:
            kept.append({"hooks": [{"type": "command", "command": cmd, "timeout": HOOK_TIMEOUT}]})
        if kept == groups:
            continue
        if kept:
            hooks[event] = kept
        elif event in hooks:
            del hooks[event]
    if hooks == out.get("hooks", {}):
        return out
    if hooks:
        out["hooks"] = hooks
    else:  # emptied by taking ours out
        del out["hooks"]
    return out


def _without_ours(group: Any) -> Any:
    """A matcher group without branchmem's commands; None if nothing is left."""
    if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
        return group
    rest = [h for h in group["hooks"] if not (isinstance(h, dict) and _ours(h.get("command")))]
    if not rest:
        return None
    return {**group, "hooks": rest}


def _ours(cmd: Any) -> bool:
    return isinstance(cmd, str) and MARK in cmd and "branchmem" in cmd


def with_server(config: dict[str, Any], cmd: Sequence[str] | None) -> dict[str, Any]:
    """``config`` with ``mcpServers.branchmem`` set to ``cmd`` (removed when None)."""
    out = dict(config)
    servers = out.get("mcpServers", {})
    if not isinstance(servers, dict):
        raise InvalidInput("the 'mcpServers' entry is not a JSON object; fix it by hand first")
    servers = dict(servers)
    if cmd is None:
        servers.pop(SERVER, None)
    else:
        servers[SERVER] = {"type": "stdio", "command": cmd[0], "args": list(cmd[1:])}
    if servers:
        out["mcpServers"] = servers
    else:
        out.pop("mcpServers", None)
    return out


def with_codex_server(text: str, cmd: Sequence[str] | None) -> str:
    """A Codex ``config.toml`` with branchmem's ``[mcp_servers.branchmem]`` block
    replaced by ``cmd`` (removed when None); the rest of the text unchanged."""
    lines = text.splitlines(keepends=True)
    if TOML_BEGIN in text:
        start = next(i for i, line in enumerate(lines) if line.startswith(TOML_BEGIN))
        end = next(
            (i for i, line in enumerate(lines) if i > start and line.startswith(TOML_END)), None
        )
        if end is None:
            raise InvalidInput(f"the branchmem block has no {TOML_END!r} line; fix it by hand")
        if start > 0 and lines[start - 1] == "\n":  # the blank line written before it
            start -= 1
        lines = lines[:start] + lines[end + 1 :]
    rest = "".join(lines)
    if f"[mcp_servers.{SERVER}]" in rest:
        raise InvalidInput(
            f"[mcp_servers.{SERVER}] is already defined outside branchmem's block; "
            "remove it or rename it, then install again"
        )
    if cmd is None:
        return rest
    block = [
        TOML_BEGIN,
        f"[mcp_servers.{SERVER}]",
        f"command = {json.dumps(cmd[0])}",
        f"args = [{', '.join(json.dumps(a) for a in cmd[1:])}]",
        TOML_END,
    ]
    sep = "" if not rest else "\n" if rest.endswith("\n") else "\n\n"
    return rest + sep + "\n".join(block) + "\n"


def read_json(path: Path) -> dict[str, Any]:
    """A settings file as a dict ({} when missing); `InvalidInput` if not an object."""
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8") or "{}")
    except ValueError as exc:
        raise InvalidInput(f"{path} is not JSON ({exc}); fix it, then install again") from None
    if not isinstance(data, dict):
        raise InvalidInput(f"{path} holds no JSON object; fix it, then install again")
    return data


def write_text(path: Path, text: str) -> None:
    """Replace ``path`` in one step (a reader sees the old file or the new one)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    if path.exists():
        os.chmod(tmp, path.stat().st_mode & 0o777)
    os.replace(tmp, path)


def update_json(path: Path, change: Any) -> bool:
    """Apply ``change`` (dict -> dict) to a JSON settings file; whether it changed.
    A file left empty (``{}``) by the change is removed."""
    before = read_json(path)
    after = change(before)
    if after == before:
        return False
    if not after:
        path.unlink()
        return True
    write_text(path, json.dumps(after, indent=2, ensure_ascii=False) + "\n")
    return True


def install(
    *,
    scope: str,
    project: Path,
    home: Path,
    db: str | None,
    namespace: str | None,
    uninstall: bool = False,
    codex: bool = False,
    codex_home: Path | None = None,
    hook_args: Sequence[str] = (),
) -> list[str]:
    """Install (or uninstall) the hooks and the MCP server; a line per file changed.
    ``hook_args`` go at the end of the hook's command (``--llm-model m``, say)."""
    if scope not in ("project", "user"):
        raise InvalidInput(f"scope must be 'project' or 'user', got {scope!r}")
    hook = None if uninstall else shlex.join([*command("hook", db, namespace), *hook_args])
    server = None if uninstall else command("mcp", db, namespace)
    if scope == "project":
        settings, mcp = project / ".claude" / "settings.local.json", project / ".mcp.json"
    else:
        settings, mcp = home / ".claude" / "settings.json", home / ".claude.json"
    done = []
    verb = "removed from" if uninstall else "written to"
    if update_json(settings, lambda s: with_hooks(s, hook)):
        done.append(f"hooks {verb} {settings}")
    if update_json(mcp, lambda s: with_server(s, server)):
        done.append(f"MCP server {verb} {mcp}")
    if codex:
        base = project / ".codex" if scope == "project" else (codex_home or home / ".codex")
        toml = base / "config.toml"
        old = toml.read_text(encoding="utf-8") if toml.exists() else ""
        new = with_codex_server(old, server)
        if new != old:
            if new.strip():
                write_text(toml, new)
            else:  # nothing but branchmem's block was there
                toml.unlink()
            done.append(f"Codex MCP server {verb} {toml}")
    return done
