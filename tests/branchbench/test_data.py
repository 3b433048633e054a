"""The shipped splits: valid, balanced, hard in the intended ways, and frozen.

Counts are pinned on purpose: a change to a split changes every published
number, so it must show up here (and in ``frozen.py``) as a deliberate edit.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from branchbench import scenario as scenario_mod
from branchbench.frozen import FROZEN_MANIFESTS, verify_split
from branchbench.scenario import (
    FORK_TYPES,
    ManifestError,
    Scenario,
    load_split,
    reach,
    sha256_file,
    split_dir,
    verify_manifest,
    write_manifest,
)
from branchbench.validate import main, validate_dir

SPLITS = ("dev", "test")
EXPECTED = {  # split: (scenarios, per fork type, questions)
    "dev": (10, 2, 30),
    "test": (20, 4, 69),
}


@pytest.fixture(scope="module")
def splits() -> dict[str, list[Scenario]]:
    return {name: load_split(split_dir(name)) for name in SPLITS}


def _all(splits: dict[str, list[Scenario]]) -> list[Scenario]:
    return [s for name in SPLITS for s in splits[name]]


def _children(s: Scenario) -> dict[str, list[str]]:
    kids: dict[str, list[str]] = {e.id: [] for e in s.events}
    for e in s.events:
        for p in e.parents:
            kids[p].append(e.id)
    return kids


def _below(kids: dict[str, list[str]], eid: str) -> set[str]:
    return reach(eid, kids.__getitem__)


def _fork_points(s: Scenario) -> list[str]:
    path, kids = set(s.path_ids()), _children(s)
    return [x for x in s.path_ids() if x != s.anchor and any(c not in path for c in kids[x])]


def _above(s: Scenario, eid: str) -> set[str]:
    """``eid`` and its ancestors."""
    parents = {e.id: e.parents for e in s.events}
    return reach(eid, parents.__getitem__)


# Validity and shape ---------------------------------------------------------------


@pytest.mark.parametrize("split", SPLITS)
def test_split_passes_validator_and_manifest(split: str) -> None:
    assert validate_dir(split_dir(split), manifest=True) == []


@pytest.mark.parametrize("split", SPLITS)
def test_split_counts(split: str, splits: dict[str, list[Scenario]]) -> None:
    n, per_type, questions = EXPECTED[split]
    scenarios = splits[split]
    assert len(scenarios) == n
    assert Counter(s.fork_type for s in scenarios) == {t: per_type for t in FORK_TYPES}
    assert sum(len(s.questions) for s in scenarios) == questions
    kinds = Counter(q.type for s in scenarios for q in s.questions)
    assert abs(kinds["leak"] - kinds["retain"]) <= 2, kinds


def test_ids_are_unique_across_splits(splits: dict[str, list[Scenario]]) -> None:
    ids = [s.id for s in _all(splits)]
    assert len(ids) == len(set(ids))


def test_scenario_sizes(splits: dict[str, list[Scenario]]) -> None:
    for s in _all(splits):
        assert 8 <= len(s.events) <= 25, s.id
        assert {q.type for q in s.questions} == {"leak", "retain"}, s.id


def test_every_scenario_retains_a_shared_prefix_fact(splits: dict[str, list[Scenario]]) -> None:
    # A fact said before the first fork belongs to every branch; hiding it is over-blocking.
    for s in _all(splits):
        shared = set.intersection(*(_above(s, f) for f in _fork_points(s)))
        texts = [e.content for e in s.events if e.id in shared]
        assert any(
            q.type == "retain" and any(w in t for w in q.answer_any for t in texts)
            for q in s.questions
        ), s.id


def test_forbidden_words_come_from_a_sibling_branch(splits: dict[str, list[Scenario]]) -> None:
    # Not merely from the anchor's own future: each one sits in an abandoned branch.
    for s in _all(splits):
        kids, path = _children(s), set(s.path_ids())
        siblings: set[str] = set()
        for x in _fork_points(s):
            for c in kids[x]:
                if c not in path:
                    siblings |= _below(kids, c)
        texts = [e.content for e in s.events if e.id in siblings]
        for q in s.questions:
            for w in q.forbidden_any:
                assert len(w) >= 2, (s.id, q.id, w)
                assert any(w in t for t in texts), (s.id, q.id, w)


def test_questions_do_not_give_away_their_answers(splits: dict[str, list[Scenario]]) -> None:
    for s in _all(splits):
        # A runner may show the title; it must not carry an abandoned value.
        assert not [w for q in s.questions for w in q.forbidden_any if w in s.title], s.id
        for q in s.questions:
            for w in (*q.answer_any, *q.superseded_any):
                assert w not in q.question, (s.id, q.id, w)


def test_hard_cases_are_present(splits: dict[str, list[Scenario]]) -> None:
    scenarios = _all(splits)
    order = {s.id: {e.id: i for i, e in enumerate(s.events)} for s in scenarios}
    out_of_order = [
        s.id
        for s in scenarios
        if any(order[s.id][p] > order[s.id][e.id] for e in s.events for p in e.parents)
    ]
    assert len(out_of_order) >= 4, out_of_order
    for s in scenarios:
        if s.fork_type == "checkpoint":
            assert any(e.role == "tool" for e in s.events), s.id
        if s.fork_type == "in_branch_change":
            assert any(q.superseded_any for q in s.questions), s.id
    path_sets = {s.id: set(s.path_ids()) for s in scenarios}
    many_branches = [
        s.id
        for s in scenarios
        if sum(c not in path_sets[s.id] for x in _fork_points(s) for c in _children(s)[x]) >= 2
    ]
    assert len(many_branches) >= 3, many_branches
    # Leaks can come from replies too: some forbidden word is said only by the assistant.
    assistant_only = [
        s.id
        for s in scenarios
        for q in s.questions
        for w in q.forbidden_any
        if all(e.role == "assistant" for e in s.events if w in e.content)
    ]
    assert assistant_only


# Freezing -------------------------------------------------------------------------


@pytest.mark.parametrize("split", SPLITS)
def test_frozen_split_verifies(split: str) -> None:
    folder = verify_split(split)
    assert folder == split_dir(split)
    assert sha256_file(folder / "MANIFEST") == FROZEN_MANIFESTS[split]


def test_unknown_split_is_refused() -> None:
    with pytest.raises(ManifestError):
        verify_split("train")


@pytest.fixture
def dev_copy(tmp_path: Path) -> Path:
    return Path(shutil.copytree(split_dir("dev"), tmp_path / "dev"))


def test_copy_verifies(dev_copy: Path) -> None:
    verify_manifest(dev_copy)


def test_changed_file_is_refused(dev_copy: Path) -> None:
    target = dev_copy / "edit-01.json"
    target.write_text(target.read_text(encoding="utf-8").replace("青岛", "大连"), encoding="utf-8")
    with pytest.raises(ManifestError, match="changed"):
        verify_manifest(dev_copy)


def test_deleted_file_is_refused(dev_copy: Path) -> None:
    (dev_copy / "edit-01.json").unlink()
    with pytest.raises(ManifestError, match="missing"):
        verify_manifest(dev_copy)


def test_added_file_is_refused(dev_copy: Path) -> None:
    shutil.copy(dev_copy / "edit-01.json", dev_copy / "edit-99.json")
    with pytest.raises(ManifestError, match="extra"):
        verify_manifest(dev_copy)


def test_rewritten_manifest_is_refused(dev_copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The folder is consistent with its new MANIFEST, so only the recorded hash catches it.
    monkeypatch.setattr(scenario_mod, "DATA_DIR", dev_copy.parent)
    assert verify_split("dev") == dev_copy
    target = dev_copy / "edit-01.json"
    target.write_text(target.read_text(encoding="utf-8").replace("青岛", "大连"), encoding="utf-8")
    write_manifest(dev_copy)
    verify_manifest(dev_copy)
    with pytest.raises(ManifestError, match=r"'dev'.*MANIFEST was changed"):
        verify_split("dev")


def test_hand_edited_manifest_is_refused(dev_copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scenario_mod, "DATA_DIR", dev_copy.parent)
    manifest = dev_copy / "MANIFEST"
    manifest.write_text(manifest.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    with pytest.raises(ManifestError, match="MANIFEST was changed"):
        verify_split("dev")


# Command line ---------------------------------------------------------------------


def test_cli_accepts_dev(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(split_dir("dev"))]) == 0
    assert "OK, 10 scenario(s), 30 question(s)" in capsys.readouterr().out
    assert main(["dev", "test"]) == 0


def test_cli_rejects_broken_copy(dev_copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = dev_copy / "edit-01.json"
    # Put the abandoned city into the shared prefix: the leak question can no longer be scored.
    text = target.read_text(encoding="utf-8").replace("最近打算换个城市", "最近打算从厦门换个城市")
    target.write_text(text, encoding="utf-8")
    assert main([str(dev_copy)]) != 0
    out = capsys.readouterr().out
    assert "edit-01: rule 4 (forbidden words occur off the path and never on it): " in out
    assert "MANIFEST: rule 0 (files, fields and MANIFEST are well formed): " in out
    assert "FAILED" in out.splitlines()[-1]


def test_module_entry_point() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "branchbench.validate", str(split_dir("test"))],
        capture_output=True,
        text=True,
        encoding="utf-8",
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "OK, 20 scenario(s), 69 question(s)" in done.stdout
