"""The examples in the docstrings of `Store` and its engine run as written."""

from __future__ import annotations

import doctest
import importlib

import pytest

from branchmem import Store

MODULES = ["branchmem.store", "branchmem.engine", "branchmem.policy"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    # The examples name `Store` as a user sees it on the class, without an import.
    mod = importlib.import_module(name)
    result = doctest.testmod(mod, extraglobs={"Store": Store}, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0, result
