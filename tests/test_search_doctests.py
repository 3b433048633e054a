"""The examples in the retrieval docstrings run as written."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "branchmem.retrieval.tokenize",
    "branchmem.retrieval.keyword",
    "branchmem.retrieval.cache",
    "branchmem.retrieval.embed",
    "branchmem.retrieval.fusion",
    "branchmem.retrieval.search",
    "branchmem.retrieval.querylog",
    "branchmem.searchlog",
    "branchmem.retrieval.evaluate",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name))
    assert result.attempted > 0 and result.failed == 0, result


def test_store_search_example() -> None:
    from branchmem import store

    finder = doctest.DocTestFinder()
    [test] = [t for t in finder.find(store.Store) if t.name.endswith("Store.search")]
    runner = doctest.DocTestRunner()
    runner.run(test)
    assert runner.tries > 0 and runner.failures == 0
