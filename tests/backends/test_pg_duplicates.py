"""A stored key met inside a ``COPY`` is a duplicate, whatever code the server
gives it: PostgreSQL raises ``23505`` (unique_violation); a Citus coordinator
re-raises its worker's error as ``XX000`` with the shard's constraint name
(``duplicate key value violates unique constraint "events_pkey_102008"``).

The classifier is checked on errors of both shapes (no server needed). The
batches that re-add stored ids through ``COPY`` run against the Citus shape:
on a Citus coordinator (``BRANCHMEM_TEST_CITUS``) the real one, each test
schema distributed; on plain PostgreSQL, as its stand-in, a trigger that
raises that shape before the key is checked (Citus refuses triggers on
distributed tables, so the stand-in is not made there).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest

from branchmem import Store
from branchmem.ops import stream as ingest_stream
from helpers.pg_helpers import CITUS_URL, PG_URL, SCHEMAS, SKIP_REASON, Tracer, open_backend

psycopg = pytest.importorskip("psycopg")

CITUS_SHAPE = 'duplicate key value violates unique constraint "{table}_pkey_102008"'


def _error(sqlstate: str, message: str) -> Exception:
    exc: Exception = psycopg.errors.lookup(sqlstate)(message)
    return exc


def test_the_citus_shape_of_a_duplicate_is_recognised() -> None:
    from branchmem.backends.postgres.stream import duplicate_key

    citus = _error("XX000", CITUS_SHAPE.format(table="events"))
    assert not isinstance(citus, psycopg.errors.UniqueViolation)
    assert duplicate_key(citus, "events")
    assert duplicate_key(_error("XX000", CITUS_SHAPE.format(table="records")), "records")
    # Plain PostgreSQL's, with and without the shard suffix.
    assert duplicate_key(_error("23505", 'unique constraint "events_pkey"'), "events")
    assert duplicate_key(
        _error("XX000", 'duplicate key value violates unique constraint "events_pkey"'), "events"
    )
    # A translated message still names the constraint.
    translated = "doppelter Schlüsselwert verletzt Unique-Constraint »events_pkey_102011«"
    assert duplicate_key(_error("XX000", translated), "events")


def test_other_errors_are_not_duplicates() -> None:
    from branchmem.backends.postgres.stream import duplicate_key

    for exc in [
        _error("XX000", CITUS_SHAPE.format(table="records")),  # another table's key
        _error("XX000", 'duplicate key value violates unique constraint "myevents_pkey"'),
        _error("XX000", 'duplicate key value violates unique constraint "events_pkey_x"'),
        _error("XX000", "could not connect to worker node"),
        _error("22P02", 'invalid input syntax for type bigint: "events_pkey"'),
        _error("53100", "could not extend file: No space left on device"),
    ]:
        assert not duplicate_key(exc, "events"), exc


# On PostgreSQL: the server raises the Citus shape ----------------------------------

pg = pytest.mark.skipif(not PG_URL, reason=SKIP_REASON)


@contextmanager
def citus_shaped_duplicates(schema: str) -> Iterator[None]:
    """A trigger on ``schema``'s events and records that raises what a Citus
    coordinator raises for a stored key, before PostgreSQL's own check: the
    stand-in for a cluster. On a Citus coordinator, nothing: the server
    raises that shape itself."""
    if CITUS_URL:
        yield
        return
    fn = f"{schema}.citus_shaped_duplicate"
    # Only in a COPY: an INSERT ... ON CONFLICT meets no error on Citus either.
    body = f"""CREATE FUNCTION {fn}() RETURNS trigger LANGUAGE plpgsql AS $f$
BEGIN
  IF left(ltrim(current_query()), 4) = 'COPY' AND (EXISTS (SELECT 1 FROM {schema}.events
             WHERE TG_TABLE_NAME = 'events' AND ns = NEW.ns AND id = NEW.id)
     OR EXISTS (SELECT 1 FROM {schema}.records WHERE TG_TABLE_NAME = 'records'
             AND ns = NEW.ns AND id = NEW.id)) THEN
    RAISE EXCEPTION 'duplicate key value violates unique constraint "%_pkey_102008"',
      TG_TABLE_NAME USING ERRCODE = 'XX000',
      DETAIL = format('Key (ns, id)=(%s, %s) already exists.', NEW.ns, NEW.id);
  END IF;
  RETURN NEW;
END $f$"""
    with psycopg.connect(PG_URL, autocommit=True) as conn:
        conn.execute(body)
        for table in ("events", "records"):
            conn.execute(
                f"CREATE TRIGGER citus_shaped BEFORE INSERT ON {schema}.{table} "
                f"FOR EACH ROW EXECUTE FUNCTION {fn}()"
            )
    try:
        yield
    finally:
        with psycopg.connect(PG_URL, autocommit=True) as conn:
            conn.execute(f"DROP FUNCTION {fn}() CASCADE")


@pytest.fixture
def citus_store() -> Iterator[Callable[[], Store]]:
    """Stores whose schema raises a stored key the Citus way."""
    tracer = Tracer()
    opened: list[tuple[Store, object]] = []

    def make() -> Store:
        b = open_backend(tracer)
        shaped = citus_shaped_duplicates(b.schema)
        shaped.__enter__()
        s = Store(backend=b)
        opened.append((s, shaped))
        return s

    yield make
    for s, shaped in opened:
        shaped.__exit__(None, None, None)  # type: ignore[attr-defined]
        s.close()
    assert not tracer.problems


@pg
def test_a_stored_key_in_a_copy_raises_the_citus_shape(citus_store: Callable[[], Store]) -> None:
    """By the stand-in's trigger, or by Citus itself (on a worker's shard)."""
    store = citus_store()
    store.add_event("e0")
    conn = psycopg.connect(PG_URL, autocommit=True)
    try:
        table = f"{store._engine.backend.schema}.events (ns, id, role, content, created_at)"
        copying = conn.cursor().copy(f"COPY {table} FROM STDIN")
        with pytest.raises(psycopg.errors.InternalError_) as exc, copying as copy:
            copy.write_row(("default", "e0", "user", "", 0))
        assert exc.value.sqlstate == "XX000"
        assert not isinstance(exc.value, psycopg.errors.UniqueViolation)
        assert re.search(r'"events_pkey_\d+"', str(exc.value)), exc.value
    finally:
        conn.close()


@pg
def test_re_adding_a_stored_streamed_batch_is_a_no_op(
    citus_store: Callable[[], Store], monkeypatch: pytest.MonkeyPatch
) -> None:
    from test_streamed_batches import test_re_adding_a_stored_batch_is_a_no_op as scenario

    monkeypatch.setattr(ingest_stream, "CHUNK", 4)
    monkeypatch.setattr(ingest_stream, "STREAM_FROM", 8)
    scenario(citus_store, [])


@pg
def test_a_bad_event_late_in_a_50000_batch_leaves_nothing(
    citus_store: Callable[[], Store],
) -> None:
    from test_streamed_batches import (
        test_a_bad_event_late_in_a_50000_batch_leaves_nothing as scenario,
    )

    scenario(citus_store)


@pg
def test_copy_batches_with_a_stored_id_in_the_middle() -> None:
    from test_postgres import (
        test_batches_that_go_in_by_copy_with_a_stored_id_in_the_middle as scenario,
    )

    schema = SCHEMAS.take()
    try:
        Store(backend=_plain_backend(schema)).close()  # creates the tables
        with citus_shaped_duplicates(schema):
            scenario(schema)
    finally:
        SCHEMAS.give_back([schema])


def _plain_backend(schema: str) -> object:
    from branchmem.backends.postgres import PostgresBackend

    return PostgresBackend(PG_URL, schema=schema)
