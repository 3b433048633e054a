"""What a distributed PostgreSQL (Citus) needs of the backend, checked on
plain PostgreSQL: custom plans on every connection, statements that a shard
can run alone. On a Citus coordinator (``BRANCHMEM_TEST_CITUS``), every test
schema is distributed by namespace; the checks of that skip elsewhere.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from branchmem import Store
from pg_helpers import PG_URL, SKIP_REASON, Tracer, open_backend

pytestmark = pytest.mark.skipif(not PG_URL, reason=SKIP_REASON)


@pytest.fixture
def store() -> Iterator[Store]:
    tracer = Tracer()
    s = Store(backend=open_backend(tracer))
    yield s
    s.close()
    assert not tracer.problems


def test_backend_connections_plan_every_statement_for_its_values(store: Store) -> None:
    """A generic plan (chosen after a prepared statement's fifth run) cannot
    route to one shard on Citus: the backend's connections are pinned to
    custom plans, new ones included."""
    store.add_event("e0")
    pool = store._b._pool  # type: ignore[attr-defined]
    with pool.connection() as a, pool.connection() as b:
        for conn in (a, b):
            assert conn.execute("SHOW plan_cache_mode").fetchone() == ("force_custom_plan",)
