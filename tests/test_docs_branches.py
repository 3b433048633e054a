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


def test_docstring_examples_run() -> None:
    import branchmem.audit
    import branchmem.branches
    import branchmem.lifecycle
    import branchmem.merge
    import branchmem.purge
    import branchmem.scope
    import branchmem.snapshots

    mods = (branchmem.audit, branchmem.branches, branchmem.lifecycle)
    mods += (branchmem.merge, branchmem.purge, branchmem.scope, branchmem.snapshots)
    attempted = 0
    for mod in mods:
        result = doctest.testmod(mod, optionflags=doctest.ELLIPSIS)
        assert result.failed == 0, (mod.__name__, result)
        attempted += result.attempted
    assert attempted >= 100  # every public method shows an example
