"""Latency of ``branchmem claude-code hook`` on a generated Claude Code transcript.

    python bench/claude_code_hook.py            # 5,000 entries, 40 calls each way
    python bench/claude_code_hook.py --smoke    # 300 entries, 5 calls (seconds)

The transcript has the documented shape: user prompts, assistant replies,
tool calls and their results, a rewind every 60 entries (a new message under
an earlier one) and a compaction half way. Its prompts state facts the rule
extractor finds. Measured, on an SQLite store in a temporary folder:

* **first call**: the hook on the whole transcript (imports every entry).
* **in process, 2 new entries a call**: `run_hook` for ``UserPromptSubmit``
  after a prompt and a reply were appended: read what the file gained,
  import it, start the extraction (a detached process: its start is timed,
  its run is not; the bench waits for it before the next call, as a person
  reads and types between prompts), and search the memories visible at the
  new leaf and on the project branch for the prompt.
* **the command, a new process**: ``python -m branchmem claude-code hook``
  as Claude Code runs it, stdin to stdout (nothing new in the transcript:
  interpreter start, imports, the cursor check and the search), and its
  floor, a new interpreter that only imports the hook's module, timed in
  turn with it. Bytecode is cached, as for an installed package.

Printed: p50 and p95 of each, in milliseconds.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from branchmem.integrations.codingagents import hook
from helpers.agent_transcripts import Transcript

FACTS = ["I live in Lisbon.", "I work at Globex.", "My name is Dana.", "I live in Oslo."]


def generate(path: Path, entries: int) -> tuple[Transcript, str]:
    """A transcript of ``entries`` entries; its last entry's id."""
    t = Transcript(path, session="bench")
    tip: str | None = None
    n = 0
    while n < entries:
        if n and n % 60 == 0 and tip is not None:  # a rewind: back three entries
            tip = f"e{n - 3}"
        if n == entries // 2 and tip is not None:
            tip = t.compact(f"e{n}", tip)
            n += 1
            continue
        uid = f"e{n}"
        step = n % 4
        if step == 0:
            text = FACTS[(n // 4) % len(FACTS)] if n % 8 == 0 else f"Please look at module {n}."
            tip = t.user(uid, tip, text)
        elif step == 1:
            tip = t.tool_use(uid, tip or "", f"toolu_{n}", "Read", {"file_path": f"src/m{n}.py"})
        elif step == 2:
            tip = t.tool_result(uid, tip or "", f"toolu_{n - 1}", f"def f{n}():\n    return {n}\n")
        else:
            tip = t.assistant(uid, tip, f"Module {n} returns a constant.")
        n += 1
    return t, tip or ""


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def payload(path: Path, prompt: str) -> dict[str, Any]:
    return {
        "session_id": "bench",
        "transcript_path": str(path),
        "cwd": str(path.parent),
        "hook_event_name": "UserPromptSubmit",
        "prompt": prompt,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--smoke", action="store_true", help="300 entries, 5 calls")
    ap.add_argument("--entries", type=int, default=5_000)
    ap.add_argument("--calls", type=int, default=40)
    args = ap.parse_args()
    entries, calls = (300, 5) if args.smoke else (args.entries, args.calls)
    children: list[subprocess.Popen[bytes]] = []
    spawn = subprocess.Popen

    def keep(*a: Any, **kw: Any) -> subprocess.Popen[bytes]:
        child = spawn(*a, **kw)
        children.append(child)
        return child

    with tempfile.TemporaryDirectory() as d:
        folder = Path(d)
        os.environ["BRANCHMEM_HOME"] = str(folder / "home")
        path = folder / "bench.jsonl"
        t, tip = generate(path, entries)
        options = hook.Options(db=str(folder / "m.db"), namespace="bench")
        hook.subprocess.Popen = keep  # type: ignore[assignment,misc]
        try:
            start = time.perf_counter()
            hook.run_hook(payload(path, "Where do I live?"), options)
            first = time.perf_counter() - start
            for child in children:
                child.wait()
            inproc = []
            for i in range(calls):
                prompt = f"{FACTS[i % len(FACTS)]} What next?"
                tip = t.user(f"p{i}", tip, prompt)
                tip = t.assistant(f"r{i}", tip, "Next, the tests.")
                for child in children:  # the last extraction is done (a person reads, types)
                    child.wait()
                start = time.perf_counter()
                hook.run_hook(payload(path, prompt), options)
                inproc.append(time.perf_counter() - start)
        finally:
            hook.subprocess.Popen = spawn  # type: ignore[misc]
            for child in children:
                child.wait()
        cmd = [sys.executable, "-m", "branchmem", "claude-code", "hook", "--db", options.db or ""]
        cmd += ["--namespace", "bench"]
        # As an installed package runs: its bytecode cached (here in the temporary folder).
        env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1] / "src"))
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(folder / "pycache")
        stdin = json.dumps(payload(path, "Where do I live?"))
        floor = [sys.executable, "-c", "import branchmem.integrations.codingagents.hook"]
        subprocess.run(floor, env=env, check=True)  # writes the bytecode
        proc, bare = [], []
        printed = ""
        for _ in range(calls):
            start = time.perf_counter()
            done = subprocess.run(cmd, input=stdin, capture_output=True, text=True, env=env)
            proc.append(time.perf_counter() - start)
            printed = done.stdout
            start = time.perf_counter()
            subprocess.run(floor, env=env, check=True)
            bare.append(time.perf_counter() - start)
        log = folder / "home" / "hook.log"
        assert "additionalContext" in printed, log.read_text() if log.exists() else printed
    print(f"claude-code hook on a transcript of {entries:,} entries ({calls} calls each)")
    print(f"  first call, importing every entry: {first * 1000:.0f} ms")
    for name, values in (
        ("in process, 2 new entries a call", inproc),
        ("the command, a new process", proc),
        ("  its floor: a new process importing the hook", bare),
    ):
        p50, p95 = pct(values, 0.5) * 1000, pct(values, 0.95) * 1000
        mean = statistics.mean(values) * 1000
        print(f"  {name}: p50 {p50:.1f} ms, p95 {p95:.1f} ms (mean {mean:.1f})")


if __name__ == "__main__":
    main()
