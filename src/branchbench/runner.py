"""A benchmark run: frozen scenarios in, saved contexts (and answers) and a summary out.

Every raw context and answer is written to the run directory before any
figure is computed, and the figures are computed by `report` from those
files, so a run's numbers can always be recomputed from what it saved.

A run is written into a temporary sibling folder and moved to ``--out`` only
once it is complete, so a failed run (an unreachable model, an interrupt)
leaves no half-written run directory and keeps any previous run there.
``--out`` must be missing, empty, or a previous branchbench run.
"""

from __future__ import annotations

import json
import secrets
import shutil
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from . import report
from .llm import ChatClient, LLMConfig, build_messages, system_prompt
from .metrics import question_to_dict
from .scenario import Scenario, load_split, verify_manifest
from .systems import SYSTEMS, Settings, make_system

Progress = Callable[[str], None]

RUN_FILES = frozenset(
    {
        report.RUN_FILE,
        report.CONTEXTS_FILE,
        report.ANSWERS_FILE,
        report.SUMMARY_FILE,
        report.REPORT_FILE,
        report.CHART_FILE,
    }
)
"""Every file a run directory may hold; a previous run is replaced only if it holds no other."""


class RunError(RuntimeError):
    """A run that cannot start or whose saved files do not reproduce its figures."""


@dataclass(frozen=True)
class RunConfig:
    """Everything a run needs; ``split`` or ``scenarios_dir`` names the data."""

    out: Path
    split: str | None = None
    scenarios_dir: Path | None = None
    settings: Settings = field(default_factory=Settings)
    systems: tuple[str, ...] = tuple(SYSTEMS)
    llm: LLMConfig | None = None
    runs: int = 3
    prompt: str = "neutral"
    chart: bool = True


def stderr_progress(stream: TextIO = sys.stderr) -> Progress:
    """A progress callback printing ``branchbench: MESSAGE`` lines to ``stream``."""

    def say(message: str) -> None:
        print(f"branchbench: {message}", file=stream, flush=True)

    return say


def resolve_scenarios(split: str | None, directory: Path | None) -> tuple[str, list[Scenario]]:
    """Load a frozen split or folder after checking its MANIFEST; raise if it does not match.

    A named split is checked with `branchbench.frozen.verify_split`, which also
    pins the MANIFEST itself to a recorded hash; a folder is checked against
    its own MANIFEST.
    """
    if (split is None) == (directory is None):
        raise ValueError("name exactly one of --split or --scenarios")
    if split is not None:
        from .frozen import verify_split

        path = verify_split(split)
        source = f"split {split}"
    else:
        assert directory is not None
        path = directory
        verify_manifest(path)
        source = f"folder {path}"
    scenarios = load_split(path, verify=True)
    if not scenarios:
        raise ValueError(f"{path} holds no scenario files")
    return source, scenarios


def build_contexts(
    scenarios: list[Scenario], systems: tuple[str, ...], settings: Settings, progress: Progress
) -> list[dict[str, Any]]:
    """One record per system and question: the context and the question's words."""
    records: list[dict[str, Any]] = []
    for i, sc in enumerate(scenarios, 1):
        progress(f"contexts {i}/{len(scenarios)} {sc.id}")
        for name in systems:
            system = make_system(name, settings)
            for event in sc.events:
                system.receive(event)
            system.finish()
            for q in sc.questions:
                records.append(
                    {
                        "scenario": sc.id,
                        "fork_type": sc.fork_type,
                        "system": name,
                        "anchor": sc.anchor,
                        "question": question_to_dict(q),
                        "context": system.context(sc.anchor, q),
                    }
                )
    return records


def collect_answers(
    contexts: list[dict[str, Any]],
    client: ChatClient,
    prompt: str,
    runs: int,
    out: TextIO,
    progress: Progress,
) -> list[dict[str, Any]]:
    """Ask the model every question ``runs`` times per system; append each answer as it comes."""
    total = len(contexts) * runs
    done = 0
    answers: list[dict[str, Any]] = []
    for run in range(1, runs + 1):
        for rec in contexts:
            messages = build_messages(rec["context"], rec["question"]["question"], prompt)
            answer = client.complete(messages)
            row = {
                "scenario": rec["scenario"],
                "system": rec["system"],
                "question_id": rec["question"]["id"],
                "run": run,
                "answer": answer,
            }
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
            out.flush()
            answers.append(row)
            done += 1
            if done % 20 == 0 or done == total:
                progress(f"answers {done}/{total}")
    return answers


def run_info(config: RunConfig, source: str, scenarios: list[Scenario]) -> dict[str, Any]:
    """The parameters saved as ``run.json`` (never the API key)."""
    llm = config.llm
    from branchmem import __version__

    return {
        "branchmem_version": __version__,
        "source": source,
        "split": config.split,
        "scenarios_dir": str(config.scenarios_dir) if config.scenarios_dir else None,
        "scenarios": [s.id for s in scenarios],
        "systems": list(config.systems),
        "window": config.settings.window,
        "top_k": config.settings.top_k,
        "hops": config.settings.hops,
        "summary_every": config.settings.summary_every,
        "extraction": "rules (offline, deterministic)",
        "llm": None if llm is None else {"base_url": llm.base_url, "model": llm.model},
        "prompt": config.prompt if llm else None,
        "system_prompt": system_prompt(config.prompt) if llm else None,
        "runs": config.runs if llm else 0,
        "temperature": 0 if llm else None,
    }


def run(config: RunConfig, progress: Progress | None = None) -> dict[str, Any]:
    """Run the benchmark into ``config.out`` and return the summary written there."""
    say = progress or stderr_progress()
    for name in config.systems:
        if name not in SYSTEMS:
            raise ValueError(f"unknown system {name!r}; choose from {', '.join(SYSTEMS)}")
    if config.runs < 1:
        raise ValueError(f"--runs must be at least 1, got {config.runs}")
    out = config.out
    check_out(out)
    source, scenarios = resolve_scenarios(config.split, config.scenarios_dir)
    final = out.resolve()
    final.parent.mkdir(parents=True, exist_ok=True)
    work = final.parent / f".{final.name}.partial-{secrets.token_hex(8)}"
    work.mkdir()  # not mkdtemp: the run directory gets the usual (umask) permissions
    try:
        summary = _run_into(work, config, source, scenarios, say)
        _replace(work, final)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    say(f"wrote {out / report.SUMMARY_FILE} and {out / report.REPORT_FILE}")
    return summary


def check_out(out: Path) -> None:
    """Raise `RunError` unless ``out`` is missing, empty, or holds only a previous run."""
    if not out.exists():
        return
    here = Path.cwd()
    if out.resolve() in (here, *here.parents):
        raise RunError(
            f"--out {out} is the current folder or holds it; a run replaces its --out folder "
            "whole, so name a subfolder such as runs/dev"
        )
    if not out.is_dir():
        raise RunError(f"--out {out} is a file; name a folder for the run")
    names = {p.name for p in out.iterdir()}
    if not names:
        return
    if report.RUN_FILE not in names:
        raise RunError(
            f"--out {out} is not empty and holds no {report.RUN_FILE}, so it is not a previous "
            "branchbench run; name a new or empty folder"
        )
    other = sorted(names - RUN_FILES)
    if other:
        raise RunError(
            f"--out {out} holds a previous run plus other files ({', '.join(other)}), which "
            "replacing the run would delete; move them or name another folder"
        )


def _replace(work: Path, final: Path) -> None:
    """Move the finished run ``work`` to ``final``, replacing what `check_out` allowed there."""
    if final.exists():
        old = Path(tempfile.mkdtemp(prefix=f".{final.name}.old-", dir=final.parent))
        final.rename(old / final.name)
        try:
            work.rename(final)
        except OSError:
            (old / final.name).rename(final)
            old.rmdir()
            raise
        shutil.rmtree(old, ignore_errors=True)
    else:
        work.rename(final)


def _run_into(
    out: Path, config: RunConfig, source: str, scenarios: list[Scenario], say: Progress
) -> dict[str, Any]:
    """Write every file of the run into ``out`` and return its summary."""
    info = run_info(config, source, scenarios)
    _write_json(out / report.RUN_FILE, info)
    contexts = build_contexts(scenarios, config.systems, config.settings, say)
    with (out / report.CONTEXTS_FILE).open("w", encoding="utf-8") as f:
        for rec in contexts:
            f.write(json.dumps(rec, ensure_ascii=False) + "\n")
    answers: list[dict[str, Any]] = []
    if config.llm is not None:
        client = ChatClient(config.llm)
        with (out / report.ANSWERS_FILE).open("w", encoding="utf-8") as f:
            answers = collect_answers(contexts, client, config.prompt, config.runs, f, say)
    summary = report.summarize(report.RunData(info, contexts, answers))
    _write_json(out / report.SUMMARY_FILE, summary)
    recomputed, _ = report.write_report(out, chart=config.chart)
    if recomputed != summary:
        raise RunError(
            "the figures recomputed from the saved files differ from the run's own; "
            "the saved files are not a faithful record (please report this)"
        )
    return summary


def _write_json(path: Path, data: Any) -> None:
    path.write_text(json.dumps(data, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
