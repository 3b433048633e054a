"""The branch and lifecycle guide runs as written."""

from __future__ import annotations

import doctest
from pathlib import Path

DOCS = Path(__file__).resolve().parents[2] / "docs"


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
