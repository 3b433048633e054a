"""LangGraph's own checkpointer conformance suite, run against BranchmemSaver on
both backends: every base capability must pass, and the optional ones we
implement (copy_thread, delete_for_runs, prune) too."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from pathlib import Path

import pytest

pytest.importorskip("langgraph.checkpoint.conformance")

from langgraph.checkpoint.conformance import checkpointer_test, validate

from branchmem import Store
from branchmem.integrations.langgraph import BranchmemSaver


@pytest.mark.parametrize("backend", ["memory", "sqlite"])
def test_conformance_suite_passes(backend: str, tmp_path: Path) -> None:
    made: list[Store] = []

    async def factory() -> AsyncGenerator[BranchmemSaver, None]:
        path = None if backend == "memory" else tmp_path / f"cp{len(made)}.db"
        store = Store(path)
        made.append(store)
        yield BranchmemSaver(store)
        store.close()

    registered = checkpointer_test(name=f"BranchmemSaver[{backend}]")(factory)
    report = asyncio.run(validate(registered))
    failures = {cap: result.failures for cap, result in report.results.items() if not result.passed}
    assert report.passed_all_base(), failures
    for cap in ("copy_thread", "delete_for_runs", "prune"):
        assert report.results[cap].passed, (cap, report.results[cap].failures)
