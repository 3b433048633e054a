"""The branch and lifecycle guide runs as written."""

from __future__ import annotations

import doctest
from pathlib import Path

DOCS = Path(__file__).resolve().parents[1] / "docs"


def test_branches_guide_runs() -> None:
    result = doctest.testfile(
        str(DOCS / "branches.md"), module_relative=False, optionflags=doctest.ELLIPSIS
    )
    assert result.attempted >= 30 and result.failed == 0, result


def test_retrieval_guide_runs() -> None:
    result = doctest.testfile(
        str(DOCS / "retrieval.md"), module_relative=False, optionflags=doctest.ELLIPSIS
    )
    assert result.attempted >= 8 and result.failed == 0, result


# The methods of the branch and lifecycle guide, whose examples live on `Store`.
BRANCH_METHODS = {
    "create_branch", "remember", "set_branch", "branch_head", "branches", "delete_branch",
    "prune_branches", "snapshot", "snapshots", "rollback", "history", "merge", "conflicts",
    "resolve", "touch", "score", "archive_expired", "restore", "purge", "audit",
}  # fmt: skip


def test_docstring_examples_run() -> None:
    import branchmem.policy
    from branchmem import Store

    finder = doctest.DocTestFinder()
    tests = [t for t in finder.find(Store) if t.name.rpartition(".")[2] in BRANCH_METHODS]
    tests += finder.find(branchmem.policy)
    assert {t.name.rpartition(".")[2] for t in tests} >= BRANCH_METHODS
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for test in tests:
        runner.run(test)
    assert runner.failures == 0, runner.summarize()
    assert runner.tries >= 100  # every public method shows an example
