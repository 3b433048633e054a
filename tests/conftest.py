"""One suite, every backend: the `make_store` fixture is parametrised over backends."""

from __future__ import annotations

import contextlib
import itertools
import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from branchmem import Store

BACKENDS = ["memory", "sqlite"]


@pytest.fixture(params=BACKENDS)
def backend_name(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def make_store(backend_name: str, tmp_path: Path) -> Iterator[Callable[[], Store]]:
    """A factory: each call opens a fresh, empty store on the chosen backend."""
    opened: list[Store] = []
    counter = itertools.count()

    def factory() -> Store:
        s = Store() if backend_name == "memory" else Store(tmp_path / f"store{next(counter)}.db")
        opened.append(s)
        return s

    yield factory
    for s in opened:
        with contextlib.suppress(Exception):
            s.close()


@pytest.fixture
def store(make_store: Callable[[], Store]) -> Store:
    return make_store()


def fresh_sqlite_path() -> str:
    fd, path = tempfile.mkstemp(suffix=".db")
    os.close(fd)
    os.remove(path)
    return path
