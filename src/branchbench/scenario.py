"""Scenario files (format v1) and frozen splits.

A scenario is a branching conversation delivered in arrival order, an anchor
and questions asked at that anchor. The format and its rules are in
``docs/branchbench-format.md``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SPLITS = ("dev", "test", "threads", "graph", "consolidation")
"""The shipped splits, each frozen in `branchbench.frozen`."""
FORK_TYPES = ("edit", "regenerate", "checkpoint", "switch_back", "in_branch_change")
ROLES = ("user", "assistant", "tool", "system")
QUESTION_TYPES = ("leak", "retain")
DATA_DIR = Path(__file__).parent / "data"


class ScenarioError(ValueError):
    """A scenario file that cannot be read as format v1."""


class ManifestError(RuntimeError):
    """A split whose files do not match its MANIFEST; the run must not start."""


@dataclass(frozen=True)
class ScenarioEvent:
    """One node of the conversation graph: a message (or tool or system event)."""

    id: str
    parents: tuple[str, ...]
    role: str
    content: str


@dataclass(frozen=True)
class Question:
    """A question asked at the anchor, with the keywords that score its answer."""

    id: str
    type: str
    question: str
    answer_any: tuple[str, ...]
    forbidden_any: tuple[str, ...] = ()
    superseded_any: tuple[str, ...] = ()


@dataclass(frozen=True)
class Scenario:
    """One scenario file: events in arrival order, the anchor and its questions."""

    id: str
    fork_type: str
    title: str
    events: tuple[ScenarioEvent, ...]
    anchor: str
    questions: tuple[Question, ...]
    source: str = field(default="", compare=False)
    heads: tuple[str, ...] = ()
    """Threads (format v1.1): the newest event of every thread other than the
    anchor's. A root starts a thread; what a head's path holds counts as
    known at the anchor, as a store shared across threads would make it."""

    def by_id(self) -> dict[str, ScenarioEvent]:
        """The events keyed by id."""
        return {e.id: e for e in self.events}

    def path_ids(self) -> list[str]:
        """Ids of the anchor, the heads of other threads and all their ancestors,
        in arrival order."""
        events = self.by_id()
        seen: set[str] = set()
        for start in (self.anchor, *self.heads):
            seen |= reach(start, lambda eid: events[eid].parents if eid in events else ())
        return [e.id for e in self.events if e.id in seen]


def reach(start: str, step: Callable[[str], Iterable[str]]) -> set[str]:
    """``start`` and everything reachable from it by repeating ``step`` (parents,
    or children), each once, whatever the graph's shape."""
    seen: set[str] = set()
    stack = [start]
    while stack:
        cur = stack.pop()
        if cur not in seen:
            seen.add(cur)
            stack.extend(step(cur))
    return seen


def _strs(value: Any, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ScenarioError(f"{where}: expected a list of strings, got {value!r}")
    return tuple(value)


def _parents(value: Any, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    return _strs(value, where)


def scenario_from_dict(data: dict[str, Any], source: str = "") -> Scenario:
    """Build a `Scenario` from parsed JSON, checking field types (not the rules)."""
    where = source or str(data.get("id", "?"))
    try:
        events = tuple(
            ScenarioEvent(
                id=str(e["id"]),
                parents=_parents(e.get("parent"), f"{where}: event {e.get('id')} parent"),
                role=str(e.get("role", "user")),
                content=str(e.get("content", "")),
            )
            for e in data["events"]
        )
        questions = tuple(
            Question(
                id=str(q["id"]),
                type=str(q["type"]),
                question=str(q["question"]),
                answer_any=_strs(q.get("answer_any"), f"{where}: {q.get('id')} answer_any"),
                forbidden_any=_strs(
                    q.get("forbidden_any"), f"{where}: {q.get('id')} forbidden_any"
                ),
                superseded_any=_strs(
                    q.get("superseded_any"), f"{where}: {q.get('id')} superseded_any"
                ),
            )
            for q in data["questions"]
        )
        return Scenario(
            id=str(data["id"]),
            fork_type=str(data["fork_type"]),
            title=str(data.get("title", "")),
            events=events,
            anchor=str(data["anchor"]),
            questions=questions,
            source=source,
            heads=_strs(data.get("heads"), f"{where}: heads"),
        )
    except (KeyError, TypeError) as exc:
        raise ScenarioError(f"{where}: missing or malformed field: {exc}") from exc


def load_scenario(path: str | Path) -> Scenario:
    """Read one scenario file; raise `ScenarioError` if it is not format v1 JSON.

    Only the field types are checked here; the rules are `branchbench.validate`'s.
    """
    p = Path(path)
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ScenarioError(f"{p}: cannot read scenario: {exc}") from exc
    if not isinstance(data, dict):
        raise ScenarioError(f"{p}: a scenario file holds one JSON object")
    return scenario_from_dict(data, source=p.name)


def sha256_file(path: Path) -> str:
    """The SHA-256 of a file's bytes, in hex."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def write_manifest(directory: str | Path) -> Path:
    """Write ``MANIFEST`` (``sha256  filename`` per scenario file, sorted)."""
    d = Path(directory)
    lines = [f"{sha256_file(p)}  {p.name}" for p in sorted(d.glob("*.json"))]
    out = d / "MANIFEST"
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out


def freeze_hint(directory: str | Path) -> str:
    """How to (re)write a folder's MANIFEST, for error messages."""
    return f"validate and freeze the folder with `branchbench freeze {directory}`"


def verify_manifest(directory: str | Path, *, hint: bool = True) -> None:
    """Raise `ManifestError` unless the folder's files match its MANIFEST exactly.

    With ``hint`` (the default) the message ends with how to re-freeze the
    folder; the shipped splits pass ``False`` since they must not be re-frozen.
    """
    d = Path(directory)
    fix = f"; {freeze_hint(d)}" if hint else ""
    manifest = d / "MANIFEST"
    if not d.is_dir():
        what = "is a file, not a folder" if d.exists() else "does not exist"
        raise ManifestError(f"{d}: the scenario folder {what}; pass a folder of scenarios")
    if not manifest.is_file():
        raise ManifestError(f"{d}: no MANIFEST; a folder must be frozen before it is run{fix}")
    expected: dict[str, str] = {}
    for n, line in enumerate(manifest.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        parts = line.split()
        if len(parts) != 2 or len(parts[0]) != 64:
            raise ManifestError(f"{manifest}:{n}: expected 'sha256  filename', got {line!r}")
        expected[parts[1]] = parts[0]
    actual = {p.name for p in d.glob("*.json")}
    missing = sorted(set(expected) - actual)
    extra = sorted(actual - set(expected))
    if missing or extra:
        raise ManifestError(
            f"{d}: files differ from MANIFEST (missing {missing}, extra {extra}){fix}"
        )
    changed = sorted(n for n, h in expected.items() if sha256_file(d / n) != h)
    if changed:
        raise ManifestError(f"{d}: files changed since MANIFEST was written: {changed}{fix}")


def split_dir(split: str) -> Path:
    """The folder of a shipped split (``dev`` or ``test``)."""
    d = DATA_DIR / split
    if not d.is_dir():
        raise ManifestError(f"unknown split {split!r}; choose one of {', '.join(SPLITS)}")
    return d


def load_split(directory: str | Path, *, verify: bool = True) -> list[Scenario]:
    """Load every scenario of a folder, in file-name order, after checking MANIFEST."""
    d = Path(directory)
    if verify:
        verify_manifest(d)
    return [load_scenario(p) for p in sorted(d.glob("*.json"))]
