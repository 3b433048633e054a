"""Tables and ``summary.json`` recomputed from a run directory's saved files alone.

A run directory holds ``run.json`` (parameters), ``contexts.jsonl`` (one
line per system and question, with the question's words) and, for an answer
run, ``answers.jsonl``. Nothing here needs the store, the scenarios or a
model, so anyone can re-derive every figure from the raw text.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .metrics import Ratio, Tally, forbidden_in_question, question_from_dict, score
from .scenario import FORK_TYPES, Question

RUN_FILE = "run.json"
CONTEXTS_FILE = "contexts.jsonl"
ANSWERS_FILE = "answers.jsonl"
SUMMARY_FILE = "summary.json"
REPORT_FILE = "report.md"
CHART_FILE = "leak_by_fork_type.png"

ALL = "all"
COLUMNS = (
    ("leak", "leak_rate", "leak"),
    ("accuracy", "accuracy", "accuracy"),
    ("wrong_pick", "wrong_pick_rate", "wrong pick"),
    ("stale", "stale_rate", "stale"),
    ("retain", "retain_rate", "retain"),
    ("answer_recall", "answer_recall", "answer recall"),
)
"""(metric, summary.json key, table heading)."""

Tallies = dict[str, dict[str, Tally]]
"""system -> group (``all`` or a fork type) -> tally."""


class ReportError(RuntimeError):
    """A run directory that is missing files or holds unreadable lines."""


@dataclass(frozen=True)
class RunData:
    """A run directory's saved records: parameters, contexts and answers."""

    info: dict[str, Any]
    contexts: list[dict[str, Any]]
    answers: list[dict[str, Any]]

    @property
    def systems(self) -> list[str]:
        """Systems in run order, then any others found in the contexts."""
        names: list[str] = list(self.info.get("systems") or [])
        return names + sorted({c["system"] for c in self.contexts} - set(names))

    @property
    def fork_types(self) -> list[str]:
        """Fork types present in the contexts, in the format's order."""
        present = {c["fork_type"] for c in self.contexts}
        return [f for f in FORK_TYPES if f in present] + sorted(present - set(FORK_TYPES))


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """The JSON objects of a JSON-lines file; raise `ReportError` on a bad line."""
    out: list[dict[str, Any]] = []
    for n, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if text.strip():
            try:
                out.append(json.loads(text))
            except json.JSONDecodeError as exc:
                raise ReportError(f"{path}:{n}: not a JSON line: {exc}") from exc
    return out


def load_run(run_dir: str | Path) -> RunData:
    """Read a run directory's ``run.json``, contexts and (if any) answers."""
    d = Path(run_dir)
    if not d.is_dir():
        raise ReportError(f"{d} is not a folder; pass the --out folder of a branchbench run")
    for name in (RUN_FILE, CONTEXTS_FILE):
        if not (d / name).is_file():
            raise ReportError(f"{d} has no {name}; pass the --out folder of a branchbench run")
    info = json.loads((d / RUN_FILE).read_text(encoding="utf-8"))
    answers = read_jsonl(d / ANSWERS_FILE) if (d / ANSWERS_FILE).is_file() else []
    return RunData(info, read_jsonl(d / CONTEXTS_FILE), answers)


def check_complete(run_dir: str | Path) -> RunData:
    """Load a run and raise `ReportError` unless it finished.

    A finished run has its ``summary.json`` and, for an answer run, exactly
    one answer per saved context and run (none for a context-only run).
    """
    d = Path(run_dir)
    data = load_run(d)
    if not (d / SUMMARY_FILE).is_file():
        raise ReportError(f"{d} has no {SUMMARY_FILE}: the run did not finish; run it again")
    runs = int(data.info.get("runs") or 0) if data.info.get("llm") else 0
    expected = len(data.contexts) * runs
    if len(data.answers) != expected:
        raise ReportError(
            f"{d} holds {len(data.answers)} answer(s) where {len(data.contexts)} context(s) x "
            f"{runs} run(s) make {expected}: the run is incomplete or was edited"
        )
    return data


def _tally(
    items: Iterable[tuple[dict[str, Any], str]],
    keep: Callable[[Question], bool],
) -> Tallies:
    """Score (context record, text) pairs into per-system, per-fork-type tallies."""
    out: Tallies = {}
    for rec, text in items:
        q = question_from_dict(rec["question"])
        if not keep(q):
            continue
        s = score(text, q)
        groups = out.setdefault(rec["system"], {})
        for g in (ALL, rec["fork_type"]):
            groups.setdefault(g, Tally()).add(q, s)
    return out


def _answer_pairs(data: RunData) -> list[tuple[dict[str, Any], str]]:
    by_key = {(c["scenario"], c["system"], c["question"]["id"]): c for c in data.contexts}
    pairs = []
    for a in data.answers:
        key = (a["scenario"], a["system"], a["question_id"])
        if key not in by_key:
            raise ReportError(f"answer for {key} has no saved context; the run directory is mixed")
        pairs.append((by_key[key], str(a["answer"])))
    return pairs


def tallies(
    data: RunData, keep: Callable[[Question], bool] = lambda q: True
) -> tuple[Tallies, Tallies | None]:
    """Context tallies and answer tallies (``None`` for a context-only run)."""
    ctx = _tally(((c, c["context"]) for c in data.contexts), keep)
    ans = _tally(_answer_pairs(data), keep) if data.answers else None
    return ctx, ans


def _block(t: Tally | None) -> dict[str, Any] | None:
    if t is None:
        return None
    block: dict[str, Any] = {key: _round(t.rate(m)) for m, key, _ in COLUMNS}
    block["counts"] = {m: [t.ratios[m].n, t.ratios[m].total] for m, _, _ in COLUMNS}
    return block


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 6)


def summarize(data: RunData) -> dict[str, Any]:
    """The ``summary.json`` object of a run, from its saved records."""
    ctx, ans = tallies(data)
    questions = {(c["scenario"], c["question"]["id"]): c["question"]["type"] for c in data.contexts}
    systems: dict[str, Any] = {}
    for name in data.systems:
        groups = ctx.get(name, {})
        agroups = ans.get(name, {}) if ans is not None else None
        systems[name] = {
            "context": _block(groups.get(ALL)),
            "answer": None if agroups is None else _block(agroups.get(ALL)),
            "by_fork_type": {
                f: {
                    "context": _block(groups.get(f)),
                    "answer": None if agroups is None else _block(agroups.get(f)),
                }
                for f in data.fork_types
            },
        }
    scenarios = data.info.get("scenarios") or sorted({c["scenario"] for c in data.contexts})
    return {
        "scenarios": len(scenarios),
        "questions": {
            "leak": sum(1 for t in questions.values() if t == "leak"),
            "retain": sum(1 for t in questions.values() if t == "retain"),
        },
        "systems": systems,
    }


def table(t: Tallies, systems: list[str], group: str) -> str:
    """A Markdown table of every metric, one row per system, for one group."""
    head = "| system | " + " | ".join(h for _, _, h in COLUMNS) + " |"
    rows = [head, "|" + "---|" * (len(COLUMNS) + 1)]
    for name in systems:
        tally = t.get(name, {}).get(group)
        cells = [(tally.ratios[m] if tally else Ratio()).cell() for m, _, _ in COLUMNS]
        rows.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def _tables(title: str, t: Tallies, data: RunData) -> list[str]:
    out = [f"## {title}", "", "### All questions", "", table(t, data.systems, ALL), ""]
    for f in data.fork_types:
        out += [f"### Fork type: {f}", "", table(t, data.systems, f), ""]
    return out


def markdown(data: RunData, s: dict[str, Any], chart: str | None = None) -> str:
    """The whole report: parameters, tables overall and per fork type, sensitivity.

    ``s`` is `summarize` of the same data (passed in so it is computed once).
    """
    info = data.info
    out = [
        "# branchbench report",
        "",
        f"- scenarios: {s['scenarios']} ({info.get('source', '?')}); questions: "
        f"{s['questions']['leak']} leak, {s['questions']['retain']} retain",
        f"- window: {info.get('window') or 'unlimited'}; top-k facts: {info.get('top_k')}; "
        f"summary every {info.get('summary_every')} messages; graph hops: {info.get('hops') or 0}; "
        f"extraction: {info.get('extraction')}",
        "- cells: rate (n/N). Denominators: leak and wrong pick over leak questions, "
        "accuracy and answer recall over all questions, retain over retain questions, "
        "stale over questions with superseded words.",
    ]
    llm = info.get("llm")
    if llm:
        out.append(
            f"- answers: model {llm.get('model')} at {llm.get('base_url')}, prompt "
            f"{info.get('prompt')}, {info.get('runs')} runs per question, temperature 0"
        )
    out.append("")
    ctx, ans = tallies(data)
    out += _tables("Context metrics (model-free: the rules applied to the context)", ctx, data)
    if ans is not None:
        out += _tables("Answer metrics", ans, data)
    dropped = sorted(
        {
            f"{c['scenario']}/{c['question']['id']}"
            for c in data.contexts
            if forbidden_in_question(question_from_dict(c["question"]))
        }
    )
    sctx, sans = tallies(data, keep=lambda q: not forbidden_in_question(q))
    out += [
        "## Sensitivity: without questions whose forbidden word occurs in the question",
        "",
        f"Dropped {len(dropped)} question(s)"
        + (f": {', '.join(dropped)}" if dropped else "")
        + ".",
        "",
        "### Context metrics",
        "",
        table(sctx, data.systems, ALL),
        "",
    ]
    if sans is not None:
        out += ["### Answer metrics", "", table(sans, data.systems, ALL), ""]
    if chart:
        out += ["## Leak rate by system and fork type", "", f"![leak rate]({chart})", ""]
    return "\n".join(out)


def write_report(run_dir: str | Path, *, chart: bool = True) -> tuple[dict[str, Any], str]:
    """Recompute the summary and write ``report.md`` (and the chart when possible)."""
    from .chart import write_chart

    d = Path(run_dir)
    data = load_run(d)
    summary = summarize(data)
    chart_name = write_chart(summary, d / CHART_FILE) if chart else None
    text = markdown(data, summary, chart_name)
    (d / REPORT_FILE).write_text(text, encoding="utf-8")
    return summary, text
