"""Runs the Agents SDK's own session tests (copied here) against
BranchmemSession; they are coroutines marked ``asyncio``, run here on a fresh
event loop each (the SDK's suite uses a plugin for that)."""

from __future__ import annotations

import asyncio
import inspect

import pytest

try:
    import agents
except ImportError:  # each test module skips, saying which extra
    pass
else:
    agents.set_tracing_disabled(True)  # (no network here: nothing to export traces to)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "asyncio: a coroutine test, run on its own event loop")


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    if not inspect.iscoroutinefunction(pyfuncitem.obj):
        return None
    names = pyfuncitem._fixtureinfo.argnames
    kwargs = {name: pyfuncitem.funcargs[name] for name in names}
    asyncio.run(pyfuncitem.obj(**kwargs))
    return True
