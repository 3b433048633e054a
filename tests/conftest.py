"""One suite, every backend: the `make_store` fixture is parametrised over backends."""

from __future__ import annotations

import contextlib
import itertools
import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, cast

import pytest

from branchmem import Store
from branchmem.backends.base import Backend
from branchmem.backends.memory import MemoryBackend
from branchmem.backends.sqlite import SQLiteBackend
from helpers.pg_helpers import (
    PG_URL,
    PGSERVER,
    PGSERVER_SKIP,
    PGV_SCHEMAS,
    SCHEMAS,
    SKIP_REASON,
    Tracer,
    open_backend,
)

BACKENDS = [
    "memory",
    "sqlite",
    pytest.param("postgres", marks=pytest.mark.skipif(not PG_URL, reason=SKIP_REASON)),
    # The same backend on the session's own PostgreSQL 18 with pgvector
    # (pg_helpers.PGSERVER), for the modules in PGVECTOR_MODULES only.
    pytest.param(
        "pgvector", marks=pytest.mark.skipif(not PGSERVER.available(), reason=PGSERVER_SKIP)
    ),
]

PGVECTOR_MODULES = {
    "test_pgvector.py",
    "test_search_properties.py",
    "test_vectors.py",
    "test_stored_terms.py",
    "test_erasure.py",
    "test_search.py",
}
"""The test modules whose backend-parametrised tests also run on the pgvector
server: search (its gate-first property), vectors and erasure,
about two minutes here. The gate's own properties take seven minutes there
and touch nothing pgvector changes; the whole suite would add more than CI
allows. BRANCHMEM_TEST_PGVECTOR_ALL=1 runs every module there."""


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if os.environ.get("BRANCHMEM_TEST_PGVECTOR_ALL") == "1":
        return
    keep, drop = [], []
    for item in items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        off = params.get("backend_name") == "pgvector" and item.path.name not in PGVECTOR_MODULES
        (drop if off else keep).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


@pytest.fixture(params=BACKENDS)
def backend_name(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def open_store(backend_name: str, tmp_path: Path) -> Iterator[Callable[..., Store]]:
    """A factory: each call opens a fresh, empty store on the chosen backend,
    passing its keyword arguments (``clock=``, ``policy=``) to `Store`.

    On PostgreSQL each store gets its own schema, emptied when closed, and
    every statement is checked to stay on one namespace.
    """
    opened: list[Store] = []
    tracer = Tracer()
    counter = itertools.count()

    def factory(**kw: Any) -> Store:
        if backend_name == "memory":
            s = Store(**kw)
        elif backend_name == "postgres":
            s = Store(backend=open_backend(tracer), **kw)
        elif backend_name == "pgvector":
            s = Store(backend=open_backend(tracer, PGV_SCHEMAS), **kw)
        else:
            s = Store(tmp_path / f"store{next(counter)}.db", **kw)
        opened.append(s)
        return s

    yield factory
    for s in opened:
        with contextlib.suppress(Exception):
            s.close()
    assert not tracer.problems, "statements not confined to one namespace:\n" + "\n".join(
        tracer.problems[:5]
    )


@pytest.fixture
def make_backend(backend_name: str, tmp_path: Path) -> Iterator[Callable[[], Backend]]:
    """A factory of fresh, empty backends of the chosen kind (for the contract
    suite, `branchmem.testing`, which closes them through its stores)."""
    tracer = Tracer()
    counter = itertools.count()

    def factory() -> Backend:
        if backend_name == "memory":
            return MemoryBackend()
        if backend_name == "postgres":
            return cast(Backend, open_backend(tracer))
        if backend_name == "pgvector":
            return cast(Backend, open_backend(tracer, PGV_SCHEMAS))
        return SQLiteBackend(tmp_path / f"backend{next(counter)}.db")

    yield factory
    assert not tracer.problems, "statements not confined to one namespace:\n" + "\n".join(
        tracer.problems[:5]
    )


@pytest.fixture
def make_store(open_store: Callable[..., Store]) -> Callable[[], Store]:
    """A factory: each call opens a fresh, empty store on the chosen backend."""
    return lambda: open_store()


@pytest.fixture
def store(make_store: Callable[[], Store]) -> Store:
    return make_store()


@pytest.fixture
def reopen(backend_name: str, tmp_path: Path) -> Iterator[Callable[[], Store]]:
    """Each call: a new `Store` object over the same stored data (one file,
    one PostgreSQL schema, one memory backend), as another process would open."""
    shared = MemoryBackend()
    pool = PGV_SCHEMAS if backend_name == "pgvector" else SCHEMAS
    schema = pool.take() if backend_name in ("postgres", "pgvector") else ""

    def make() -> Store:
        if backend_name == "memory":
            return Store(backend=shared)
        if backend_name in ("postgres", "pgvector"):
            from branchmem.backends.postgres import PostgresBackend

            return Store(backend=PostgresBackend(pool.url, schema=schema))
        return Store(tmp_path / "v.db")

    yield make
    if schema:
        pool.give_back([schema])


def fresh_sqlite_path() -> str:
    fd, path = tempfile.mkstemp(suffix=".db")
    os.close(fd)
    os.remove(path)
    return path


def pytest_sessionfinish(session: pytest.Session) -> None:
    SCHEMAS.drop_all()
    if PGV_SCHEMAS.made:
        PGV_SCHEMAS.drop_all()
    PGSERVER.stop()
