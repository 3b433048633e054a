"""One command for Claude Code's hooks: import what the transcript gained,
extract memories at the new leaf in the background, and for
``UserPromptSubmit`` and ``SessionStart`` answer with the memories visible at
the session's current leaf and the project's long-term branch.

The hook reads the event's JSON on stdin (``session_id``,
``transcript_path``, ``cwd``, ``hook_event_name``, and ``prompt`` for
``UserPromptSubmit``) and prints, when there is something to add::

    {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit",
                            "additionalContext": "Memories of ...:\\n- ..."}}

``SessionEnd`` merges the session's current path into branch ``project``,
the project's long-term memory. `run_hook` raises on any error; the command
(`main`) never does: it logs and prints nothing.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import traceback
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...errors import InvalidInput, UnknownBranch
from ...importers.agents import Cursor, import_transcript
from ...importers.model import branch_name
from ...store import Store
from . import paths

CONTEXT_EVENTS = ("UserPromptSubmit", "SessionStart")
"""The events whose output Claude Code adds to the model's context."""
MAX_WINDOW = 200
"""The most messages one extraction reads (the first hook of a long session)."""
LOG_MAX = 1 << 20
HEADER = "Memories of this project visible on this conversation's current branch:"


@dataclass(frozen=True)
class Options:
    """Where the hook writes: ``db`` and ``namespace`` (None: the defaults of
    `paths`), how many memories it adds (``k``), the search ``mode``,
    ``embedder`` and ``tokenizer`` (keyword, English words stemmed, by default:
    no vectors, no model to load), and whether extraction runs in a detached
    process (``background``) or before the hook returns."""

    db: str | None = None
    namespace: str | None = None
    k: int = 8
    mode: str = "keyword"
    embedder: str | None = None
    tokenizer: str = "stem"
    background: bool = True
    llm: tuple[str, str] | None = None
    """An OpenAI-compatible endpoint and model to extract with instead of the
    rules (its key from ``$BRANCHMEM_LLM_API_KEY``)."""


def run_hook(payload: Mapping[str, Any], options: Options = Options()) -> dict[str, Any] | None:
    """Handle one hook event; the JSON to print, or None to print nothing."""
    event = payload.get("hook_event_name")
    session = payload.get("session_id")
    transcript = payload.get("transcript_path")
    if not isinstance(event, str) or not isinstance(session, str) or not session:
        raise InvalidInput("the hook input names no hook_event_name or session_id")
    cwd = payload.get("cwd")
    db = options.db or paths.default_db()
    if "://" not in db:
        Path(db).parent.mkdir(parents=True, exist_ok=True)
    namespace = options.namespace or paths.project_namespace(
        paths.project_dir(cwd if isinstance(cwd, str) else None)
    )
    branch = branch_name(session)
    with Store(db) as store:
        added, last = 0, None
        if isinstance(transcript, str) and transcript and Path(transcript).is_file():
            added, last = _import(store, db, namespace, transcript)
        leaf = _head(store, branch, namespace)
        if leaf is None and last is not None:  # the file's entries name another session
            branch = branch_name(last)
            leaf = _head(store, branch, namespace)
        if leaf is not None and added:
            _extract(db, namespace, leaf, min(MAX_WINDOW, max(8, added)), options, store)
        if event == "SessionEnd" and leaf is not None:
            _promote(store, branch, namespace)
        if event not in CONTEXT_EVENTS:
            return None
        text = _context(store, namespace, branch, leaf, payload.get("prompt"), options)
    if not text:
        return None
    return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}


def _import(store: Store, db: str, namespace: str, transcript: str) -> tuple[int, str | None]:
    """Import what ``transcript`` gained: how many events were added, and the
    session of its last main entry."""
    where = paths.cursor_file(db, namespace, transcript)
    try:
        cursor = Cursor.from_dict(json.loads(where.read_text()))
    except (OSError, ValueError):
        cursor = Cursor()
    done, after = import_transcript(store, transcript, cursor, namespace=namespace)
    if after != cursor:
        where.parent.mkdir(parents=True, exist_ok=True)
        tmp = where.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(after.to_dict()))
        os.replace(tmp, where)
    return sum(d.added for d in done), after.session


def _head(store: Store, branch: str, namespace: str) -> str | None:
    try:
        return store.branch_head(branch, namespace=namespace)
    except UnknownBranch:
        return None


def _extract(db: str, ns: str, leaf: str, window: int, options: Options, store: Store) -> None:
    if not options.background:
        from ...extract import LLMExtractor, RuleExtractor, extract

        key = os.environ.get("BRANCHMEM_LLM_API_KEY")
        ex = LLMExtractor(*options.llm, key) if options.llm else RuleExtractor()
        extract(store, leaf, extractor=ex, window=window, namespace=ns)
        return
    cmd = [sys.executable, "-m", "branchmem", "extract", "--db", db, "--namespace", ns]
    cmd += ["--at", leaf, "--window", str(window)]
    if options.llm:
        cmd += ["--llm-base-url", options.llm[0], "--llm-model", options.llm[1]]
    log = _open_log()
    try:
        subprocess.Popen(  # our own interpreter and arguments
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=log,
            close_fds=True,
            start_new_session=True,
        )
    finally:
        log.close()


def _promote(store: Store, branch: str, namespace: str) -> None:
    """The session's current path joins the project's long-term branch."""
    if _head(store, paths.PROJECT_BRANCH, namespace) is None:
        store.create_branch(paths.PROJECT_BRANCH, at=branch, namespace=namespace)
    else:
        store.merge(branch, paths.PROJECT_BRANCH, namespace=namespace, actor="claude-code")


def _context(
    store: Store, ns: str, branch: str, leaf: str | None, prompt: Any, options: Options
) -> str:
    chain = [branch] if leaf is not None else []
    if _head(store, paths.PROJECT_BRANCH, ns) is not None:
        chain.append(paths.PROJECT_BRANCH)
    if not chain:
        return ""
    query = prompt if isinstance(prompt, str) and prompt.strip() else None
    ctx = store.context(
        chain if len(chain) > 1 else chain[0],
        query=query[:2000] if query else None,
        window=0,
        k=options.k,
        namespace=ns,
        mode=options.mode,
        tokenizer=options.tokenizer,
        embedder=options.embedder,
    )
    if not ctx.memories:
        return ""
    lines = [HEADER] + [f"- {m.content}" for m in ctx.memories]
    return "\n".join(lines)


def main(stdin: str, options: Options = Options()) -> str:
    """The hook command: what to print (``""`` for nothing). Never raises: an
    error is written to the log (`paths.log_file`), and nothing is printed, so
    the user's prompt goes on as if there were no hook."""
    started = time.perf_counter()
    try:
        payload = json.loads(stdin)
        if not isinstance(payload, dict):
            raise InvalidInput("the hook input is not a JSON object")
        out = run_hook(payload, options)
        return json.dumps(out, ensure_ascii=False) if out else ""
    except Exception:  # the prompt must go on, whatever failed here
        _log(f"hook failed after {time.perf_counter() - started:.3f}s\n{traceback.format_exc()}")
        return ""


def _open_log() -> Any:
    where = paths.log_file()
    where.parent.mkdir(parents=True, exist_ok=True)
    if where.exists() and where.stat().st_size > LOG_MAX:
        os.replace(where, where.with_suffix(".log.1"))
    return open(where, "a", encoding="utf-8")  # handed to a child process, then closed


def _log(text: str) -> None:
    try:
        with _open_log() as f:
            f.write(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} {text}\n")
    except OSError:
        pass
