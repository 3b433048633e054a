"""Where a coding agent's memory lives by default: one store file for every
project, one namespace per project directory, a log and read cursors beside it.

The folder is ``$BRANCHMEM_HOME`` when set, else ``$XDG_DATA_HOME/branchmem``,
else ``~/.local/share/branchmem``.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

PROJECT_BRANCH = "project"
"""The branch that holds a project's long-term memory (sessions merge into it)."""


def home() -> Path:
    """The folder of the default store, the hook's log and its cursors."""
    explicit = os.environ.get("BRANCHMEM_HOME")
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_DATA_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".local" / "share"
    return base / "branchmem"


def default_db() -> str:
    """The default store: ``<home>/agents.db`` (an SQLite file)."""
    return str(home() / "agents.db")


def project_dir(cwd: str | None = None) -> Path:
    """The project: ``$CLAUDE_PROJECT_DIR`` when the agent sets it, else ``cwd``,
    else the working directory."""
    raw = os.environ.get("CLAUDE_PROJECT_DIR") or cwd or os.getcwd()
    return Path(raw).expanduser().resolve()


def project_namespace(project: Path) -> str:
    """One namespace per project directory: ``project-<name>-<hash>``, the folder's
    name (letters, digits, ``._-``) and 12 hex digits of its full path.

    >>> project_namespace(Path("/home/ana/src/web app"))
    'project-web_app-70caf11e7cea'
    """
    name = re.sub(r"[^A-Za-z0-9._-]", "_", project.name)[:60] or "root"
    digest = hashlib.sha256(str(project).encode("utf-8", "surrogateescape")).hexdigest()[:12]
    return f"project-{name}-{digest}"


def log_file() -> Path:
    """Where the hook writes what went wrong (it never prints an error)."""
    return home() / "hook.log"


def cursor_file(db: str, namespace: str, transcript: str) -> Path:
    """Where the hook keeps how far it has read ``transcript`` into ``db``."""
    key = "\x00".join((db, namespace, transcript)).encode("utf-8", "surrogateescape")
    return home() / "cursors" / f"{hashlib.sha256(key).hexdigest()[:32]}.json"
