"""``branchbench``: run the benchmark, recompute a report, validate and freeze scenarios.

A thin shell: it parses options, calls `runner`, `report` or `validate`, and
turns their errors into one line on stderr and a non-zero exit status.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from .llm import PROMPTS, LLMError, config_from
from .report import SUMMARY_FILE, ReportError, check_complete, write_report
from .scenario import SPLITS, ManifestError, ScenarioError, write_manifest
from .systems import SYSTEMS, TOP_K, Settings
from .validate import FORMAT_DOC

EXIT_BROKEN_PIPE = 141
"""128 + SIGPIPE: the status a shell reports for a tool whose reader went away."""


def _window(text: str) -> int | None:
    if text in ("none", "unlimited"):
        return None
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError("--window takes a number of messages >= 0 (or 'none')")
    return value


def _systems(text: str) -> tuple[str, ...]:
    names = tuple(n.strip() for n in text.split(",") if n.strip())
    unknown = [n for n in names if n not in SYSTEMS]
    if unknown or not names:
        raise argparse.ArgumentTypeError(
            f"unknown system(s) {unknown}; choose from {', '.join(SYSTEMS)}"
        )
    return names


def _version() -> str:
    from branchmem import __version__

    return __version__


def parser() -> argparse.ArgumentParser:
    """The ``branchbench`` argument parser with its subcommands."""
    from .validate import DESCRIPTION, add_arguments

    p = argparse.ArgumentParser(
        prog="branchbench",
        description="Leak and retain benchmark for memory over branching conversations.",
    )
    p.add_argument(
        "--version",
        action="version",
        version=f"%(prog)s {_version()} (shipped with branchmem {_version()})",
    )
    sub = p.add_subparsers(dest="command", required=True)

    r = sub.add_parser("run", help="run every system on a frozen split or folder")
    data = r.add_mutually_exclusive_group(required=True)
    data.add_argument("--split", choices=SPLITS, help="a shipped, frozen split")
    data.add_argument("--scenarios", type=Path, metavar="DIR", help="a folder with a MANIFEST")
    r.add_argument(
        "--out",
        type=Path,
        required=True,
        metavar="DIR",
        help="run directory: a new or empty folder, or a previous run to replace; "
        "it is written only once the run is complete",
    )
    r.add_argument(
        "--window",
        type=_window,
        default=None,
        metavar="W",
        help="keep only the last W raw messages (default: unlimited)",
    )
    r.add_argument(
        "--systems",
        type=_systems,
        default=tuple(SYSTEMS),
        metavar="A,B",
        help=f"comma-separated subset (default: all: {', '.join(SYSTEMS)})",
    )
    r.add_argument("--top-k", type=int, default=TOP_K, help=f"facts retrieved (default {TOP_K})")
    r.add_argument(
        "--hops",
        type=int,
        default=0,
        metavar="N",
        help="branchmem systems: also hand the model the visible relation-graph edges within "
        "N hops of the entities a question names (default 0: no graph)",
    )
    r.add_argument(
        "--base-url",
        help="OpenAI-compatible endpoint, e.g. http://host:8000/v1 "
        "(or BRANCHBENCH_BASE_URL); without a model only context metrics run",
    )
    r.add_argument("--model", help="model name (or BRANCHBENCH_MODEL)")
    r.add_argument("--api-key", help="API key (or BRANCHBENCH_API_KEY); never saved")
    r.add_argument("--runs", type=int, default=3, help="answers per question (default 3)")
    r.add_argument(
        "--prompt",
        choices=PROMPTS,
        default="neutral",
        help="system prompt for the model: neutral asks for a short answer from the given "
        "memory and conversation; conflict adds that, when the information conflicts, the "
        "latest state of the current conversation wins and only one answer is given "
        "(default: neutral)",
    )
    r.add_argument("--no-chart", action="store_true", help="skip the PNG chart")

    rep = sub.add_parser(
        "report",
        help="recompute every table from a run directory",
        description="Recompute summary and report.md from a finished run's saved files; "
        "fail if the run is incomplete or its summary.json differs.",
    )
    rep.add_argument(
        "run_dir", type=Path, metavar="RUN_DIR", help="the --out folder of a finished run"
    )
    rep.add_argument("--no-chart", action="store_true", help="skip the PNG chart")

    v = sub.add_parser(
        "validate",
        help=f"check scenario folders against the rules of {FORMAT_DOC}",
        description=DESCRIPTION,
    )
    add_arguments(v)

    f = sub.add_parser(
        "freeze",
        help="validate a scenario folder and write its MANIFEST",
        description="Validate a folder of scenario files and, only if every scenario passes, "
        "write its MANIFEST (sha256 per file) so that `branchbench run --scenarios DIR` "
        "accepts it. Run it again after any deliberate change to a scenario file.",
    )
    f.add_argument("directory", type=Path, metavar="DIR", help="a folder of scenario files")
    return p


def _run(args: argparse.Namespace) -> int:
    from .runner import RunConfig, run

    if args.top_k < 1:
        raise ValueError(f"--top-k must be at least 1, got {args.top_k}")
    if not 0 <= args.hops <= 8:
        raise ValueError(f"--hops takes 0 to 8, got {args.hops}")
    config = RunConfig(
        out=args.out,
        split=args.split,
        scenarios_dir=args.scenarios,
        settings=Settings(window=args.window, top_k=args.top_k, hops=args.hops),
        systems=args.systems,
        llm=config_from(args.base_url, args.model, args.api_key),
        runs=args.runs,
        prompt=args.prompt,
        chart=not args.no_chart,
    )
    summary = run(config)
    print(json.dumps(_headline(summary), ensure_ascii=False, indent=2))
    return 0


def _headline(summary: dict[str, object]) -> dict[str, object]:
    """Per system, the three context rates (the rest is in summary.json)."""
    systems = summary["systems"]
    assert isinstance(systems, dict)
    return {
        name: {k: s["context"][k] for k in ("leak_rate", "answer_recall", "retain_rate")}
        for name, s in systems.items()
    }


def _report(args: argparse.Namespace) -> int:
    """Print the recomputed report; fail if the run is unfinished or its summary.json disagrees."""
    check_complete(args.run_dir)
    summary, text = write_report(args.run_dir, chart=not args.no_chart)
    print(text)
    saved = args.run_dir / SUMMARY_FILE
    if json.loads(saved.read_text(encoding="utf-8")) != summary:
        print(
            f"branchbench: error: {saved} differs from the figures recomputed from the saved "
            "contexts and answers; the run directory was edited or mixed with another run",
            file=sys.stderr,
        )
        return 1
    return 0


def _freeze(args: argparse.Namespace) -> int:
    """Write DIR/MANIFEST if every scenario of DIR passes validation."""
    from .validate import validate_dir

    d: Path = args.directory
    violations = validate_dir(d, manifest=False)
    if violations:
        for v in violations:
            print(v)
        print(f"{d}: not frozen, {len(violations)} violation(s); fix them and freeze again")
        return 1
    manifest = write_manifest(d)
    files = len(manifest.read_text(encoding="utf-8").splitlines())
    print(f"{d}: frozen, wrote {manifest} ({files} scenario file(s))")
    return 0


def _dispatch(args: argparse.Namespace) -> int:
    if args.command == "run":
        return _run(args)
    if args.command == "report":
        return _report(args)
    if args.command == "freeze":
        return _freeze(args)
    from .validate import run_args

    return run_args(args)


def main(argv: Sequence[str] | None = None) -> int:
    """Run one ``branchbench`` command; return its exit status (errors: one stderr line)."""
    args = parser().parse_args(argv)
    from .runner import RunError

    try:
        code = _dispatch(args)
        sys.stdout.flush()  # a closed pipe shows here, inside the handler below
        return code
    except BrokenPipeError:
        # The reader (``| head``) went away: stop quietly, as other Unix tools do.
        # Point stdout at /dev/null so the flush at interpreter exit cannot fail again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
    except LLMError as exc:
        print(f"branchbench: error: {exc}", file=sys.stderr)
        return 1
    except (ManifestError, ScenarioError, ReportError, RunError, ValueError, OSError) as exc:
        print(f"branchbench: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
