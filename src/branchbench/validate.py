"""Check branchbench scenarios against the format rules (v1).

A benchmark question is only worth scoring if its keywords mean what the
scoring says they mean: a ``forbidden_any`` word that also sits on the
anchor's own path would count a correct answer as a leak, and an
``answer_any`` word that never reached the anchor's path asks for something
the system could not know. The validator rejects such scenarios before any
system is run, naming the rule of ``docs/branchbench-format.md`` that failed
and stating it in one line (`branchbench.rules.RULES`).

Rule numbers follow that document; rule 0 is a file or field problem
(unreadable JSON, a missing field, an unknown ``fork_type``, ``role`` or
question ``type``, an id that differs from the file name, a manifest that
does not match its folder).

How the rules are read, where the document leaves room:

- *Path*: the anchor and all its ancestors (through every parent of a merge).
  *Off path*: every other event, including the anchor's own descendants.
  With ``heads`` (format v1.1, threads) the path also holds each head and
  its ancestors; rule 8 checks that the heads are exactly the newest event
  of every thread (a root and the events below it) but the anchor's.
- *Occurs*: a plain substring test on an event's ``content``. Checks that a
  word must *not* occur somewhere (rules 4 and 5) also ignore case, so a
  scorer that folds case cannot find a hit the validator missed.
- *Fork* (rule 2): a proper ancestor of the anchor with one child on the path
  and another child off it. Children of the anchor itself are the future of
  the anchor, not a sibling branch, so they do not make a fork. The off-path
  *branch* is that child and all its descendants; it must hold a ``user`` or
  ``assistant`` message.
- Rule 5 also refuses a ``superseded_any`` word in the question text: a
  correct answer that repeats the question would be counted stale.
- Rule 6 also refuses an empty keyword (it would match every answer), a
  ``forbidden_any`` list on a ``retain`` question, a word listed as both
  answer and superseded, and an answer word contained in a forbidden word or
  the other way round (a leaking answer would then also count as right, or a
  right one as a leak).
- Rule 7, per ``fork_type``, where a *fork* is as in rule 2:

  - ``edit``: some fork has an on-path child and an off-path child that are
    both ``user`` messages (an edited message and its original).
  - ``regenerate``: the same with both children ``assistant`` messages.
  - ``checkpoint``: some fork (the checkpoint) lies at least two turns above
    the point the abandoned run had reached when the conversation was sent
    back: the off-path branch holds a chain of at least two turns below the
    checkpoint, a turn being one ``assistant`` message (a reply, or one agent
    step with its tool calls). An edit or a regenerate goes back one turn.
  - ``switch_back``: some fork has its on-path child arriving (listed in
    ``events``) before an off-path sibling whose branch holds a message: the
    anchor sits on the older branch, the user went back to it.
  - ``in_branch_change``: at least one question has ``superseded_any``.

  For every question of any fork type that has ``superseded_any``, each such
  word occurs on the path in an event that is a proper ancestor of an on-path
  event holding one of that question's ``answer_any`` words: the earlier
  value came first, the value that replaced it later, on the same path.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from branchbench.rules import FOLDER, Violation, validate_scenario
from branchbench.scenario import (
    SPLITS,
    ManifestError,
    Scenario,
    ScenarioError,
    load_scenario,
    split_dir,
    verify_manifest,
)

FORMAT_DOC = "docs/branchbench-format.md"


@dataclass(frozen=True)
class _DirReport:
    files: int
    scenarios: list[Scenario]
    violations: list[Violation]
    problem: str = ""
    """Why the folder itself could not be checked (missing, a file, no scenarios)."""

    @property
    def rejected(self) -> set[str]:
        """Names (file stems) of the scenario files with at least one violation."""
        return {v.scenario for v in self.violations} - {"MANIFEST", FOLDER}


def _unreadable(f: Path, exc: Exception) -> str:
    """The load error of ``f`` without the file name and wording it already starts with."""
    detail = str(exc)
    for prefix in (f"{f}: ", f"{f.name}: "):
        detail = detail.removeprefix(prefix)
    return f"cannot read {f.name}: {detail.removeprefix('cannot read scenario: ')}"


def _check_dir(path: Path, manifest: bool | None) -> _DirReport:
    if not path.exists():
        problem = f"{path} does not exist; name a folder of scenario files"
    elif not path.is_dir():
        problem = f"{path} is a file, not a folder of scenario files"
    else:
        problem = ""
    if problem:
        return _DirReport(0, [], [Violation(FOLDER, 0, problem)], problem)
    out: list[Violation] = []
    loaded: list[Scenario] = []
    files = sorted(f for f in path.glob("*.json") if f.is_file())
    if not files:
        problem = f"{path} holds no *.json scenario files"
        out.append(Violation(FOLDER, 0, problem))
    ids: dict[str, str] = {}
    for f in files:
        try:
            s = load_scenario(f)
        except (ScenarioError, AttributeError, TypeError, ValueError) as exc:
            out.append(Violation(f.stem, 0, _unreadable(f, exc)))
            continue
        loaded.append(s)
        if s.id != f.stem:
            out.append(Violation(f.stem, 0, f"id {s.id!r} differs from the file name; rename one"))
        if s.id in ids:
            out.append(Violation(s.id, 0, f"id also used by {ids[s.id]}; ids must be unique"))
        ids.setdefault(s.id, f.name)
        out += validate_scenario(s)
    if manifest or (manifest is None and (path / "MANIFEST").exists()):
        try:
            verify_manifest(path)
        except ManifestError as exc:
            out.append(Violation("MANIFEST", 0, str(exc)))
    return _DirReport(len(files), loaded, out, problem)


def validate_dir(path: str | Path, *, manifest: bool | None = None) -> list[Violation]:
    """Violations of every scenario file in a folder, plus unreadable files.

    ``manifest``: ``True`` requires a matching ``MANIFEST``, ``False`` skips
    it, ``None`` (default) checks it when the folder has one, so a fresh
    folder of drafts can be validated before it is frozen.
    """
    return _check_dir(Path(path), manifest).violations


def _resolve(arg: str) -> Path:
    """A folder path, or the name of a shipped split (``dev``, ``test``)."""
    p = Path(arg)
    if not p.exists() and arg in SPLITS:
        try:
            return split_dir(arg)
        except ManifestError:
            return p
    return p


DESCRIPTION = (
    f"Check branchbench scenario folders against the format rules 1-8 of {FORMAT_DOC} "
    "(rule 0: a file or field problem). Exits 1 if any folder fails."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``branchbench validate`` (shared with the ``branchbench`` command)."""
    parser.add_argument(
        "dirs",
        nargs="+",
        metavar="DIR",
        help="a folder of scenario files, or dev/test for a shipped split",
    )
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--require-manifest", action="store_true", help="fail without a MANIFEST")
    group.add_argument("--no-manifest", action="store_true", help="do not check the MANIFEST")


def main(argv: Sequence[str] | None = None) -> int:
    """``branchbench validate DIR...``: one line per violation, a summary, 0 if all pass."""
    parser = argparse.ArgumentParser(prog="branchbench validate", description=DESCRIPTION)
    add_arguments(parser)
    return run_args(parser.parse_args(argv))


def run_args(args: argparse.Namespace) -> int:
    """Check the folders named by parsed `add_arguments` options; print; 0 if all pass."""
    manifest: bool | None = None
    if args.require_manifest:
        manifest = True
    elif args.no_manifest:
        manifest = False
    return check_folders(args.dirs, manifest=manifest)


def check_folders(dirs: Sequence[str], *, manifest: bool | None = None) -> int:
    """Print each folder's violations and a summary line; 0 if every folder passes."""
    failed = 0
    for arg in dirs:
        path = _resolve(arg)
        report = _check_dir(path, manifest)
        prefix = f"{arg}/" if len(dirs) > 1 else ""
        if report.problem and not report.files:
            failed += 1
            print(f"{path}: FAILED: {report.problem.removeprefix(f'{path} ')}")
            continue
        for v in report.violations:
            print(f"{prefix}{v}")
        if report.violations:
            failed += 1
            print(
                f"{path}: FAILED, {len(report.violations)} violation(s); "
                f"{len(report.rejected)} of {report.files} scenario file(s) rejected"
            )
        else:
            questions = sum(len(s.questions) for s in report.scenarios)
            print(f"{path}: OK, {report.files} scenario(s), {questions} question(s)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
