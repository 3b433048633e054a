"""The examples of the README and of the guides without a test of their own run as written."""

from __future__ import annotations

import doctest
from pathlib import Path

import pytest

from branchmem import Store

ROOT = Path(__file__).resolve().parents[2]


def run_page(path: Path) -> tuple[doctest.TestResults, dict[str, object]]:
    """Run a page's examples as one session; return the results and what they left behind."""
    text = path.read_text(encoding="utf-8")
    test = doctest.DocTestParser().get_doctest(text, {}, path.name, str(path), 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    runner.run(test, clear_globs=False)
    return runner.summarize(verbose=False), test.globs


def close_stores(scope: dict[str, object]) -> None:
    for value in scope.values():
        if isinstance(value, Store):
            value.close()


def test_readme_examples_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # the quick example writes mem.db where it runs
    result, scope = run_page(ROOT / "README.md")
    close_stores(scope)
    assert result.failed == 0 and result.attempted >= 20, result
    assert (tmp_path / "mem.db").exists()  # the README's store is the SQLite default


def test_extract_guide_runs() -> None:
    result, scope = run_page(ROOT / "docs" / "extract.md")
    close_stores(scope)
    assert result.failed == 0 and result.attempted >= 20, result


def test_core_guide_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # it opens mem.db and bulk.db where it runs
    result, scope = run_page(ROOT / "docs" / "core.md")
    close_stores(scope)
    assert result.failed == 0 and result.attempted >= 12, result


def test_graph_guide_runs() -> None:
    result, scope = run_page(ROOT / "docs" / "graph.md")
    close_stores(scope)
    assert result.failed == 0 and result.attempted >= 25, result


def test_async_guide_runs() -> None:
    pytest.importorskip("fastapi", reason="its remote example needs the 'server' extra")
    result, scope = run_page(ROOT / "docs" / "async.md")
    close_stores(scope)
    assert result.failed == 0 and result.attempted >= 18, result
