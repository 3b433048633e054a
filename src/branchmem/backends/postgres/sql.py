"""Statement text for the PostgreSQL backend: id lists, column arrays, inserts.

Every insert names its namespace once, as ``%(ns)s``. A few rows go as one
``INSERT ... VALUES`` of several rows, which a distributed PostgreSQL (Citus)
routes to the namespace's shard; more go as ``INSERT ... SELECT`` over
``unnest`` of one array per column, which Citus runs on the coordinator
first, but which costs psycopg and the server far less per row than a long
``VALUES`` list (see `VALUES_PARAMS`).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

ID_ARRAY = "string_to_array(%(ids)s, chr(31))"
"""The ids in the ``ids`` parameter, sent as one string joined by `SEP` (ids
are printable, so it is in none): cheaper to send than an array."""
IDS = f"ANY({ID_ARRAY})"
"""Matches one of the ids in the ``ids`` parameter."""

VALUES_PARAMS = 50
"""Parameters (``ns`` included) up to which an insert goes as ``VALUES``: the
most psycopg keeps a statement's parse for (`psycopg._queries`); a longer
statement is parsed anew at every run. Measured here, an insert of one to six
events (49 parameters) in its own transaction took 0.67-0.73 of the time of
the same rows in arrays; seven took 1.26x, twenty 1.75x."""


def unnest(cols: str, types: str, alias: str = "u", *, ordinality: bool = False) -> str:
    """``unnest(%(c0)s::t0[], ...) AS u(cols)``: one array parameter per column
    (``WITH ORDINALITY``: the last of ``cols`` names the row number, from 1)."""
    arrays = ", ".join(f"%(c{i})s::{t.strip()}[]" for i, t in enumerate(types.split(",")))
    more = " WITH ORDINALITY" if ordinality else ""
    return f"unnest({arrays}){more} AS {alias}({cols})"


def columns(rows: list[tuple[Any, ...]], width: int) -> dict[str, Any]:
    """Rows to the ``c0..cN`` column arrays that `unnest` reads."""
    cols = list(zip(*rows, strict=True)) if rows else [() for _ in range(width)]
    return {f"c{i}": list(c) for i, c in enumerate(cols)}


@lru_cache(maxsize=512)
def _values(width: int, n: int) -> tuple[str, tuple[tuple[str, ...], ...]]:
    names = tuple(tuple(f"v{r}_{j}" for j in range(width)) for r in range(n))
    rows = ", ".join("(%(ns)s, " + ", ".join(f"%({k})s" for k in row) + ")" for row in names)
    return "VALUES " + rows, names


def insert(
    table: str, cols: str, types: str, rows: list[tuple[Any, ...]], tail: str = ""
) -> tuple[str, dict[str, Any]]:
    """``INSERT INTO table (ns, cols)`` of ``rows`` (the values after ``ns``,
    of the PostgreSQL ``types``), then ``tail`` (an ``ON CONFLICT`` clause):
    the statement and its parameters but ``ns``."""
    width = len(cols.split(","))
    head = f"INSERT INTO {table} (ns, {cols}) "
    if 1 + width * len(rows) <= VALUES_PARAMS:
        text, names = _values(width, len(rows))
        params: dict[str, Any] = {}
        for keys, row in zip(names, rows, strict=True):
            params.update(zip(keys, row, strict=True))
        return head + text + tail, params
    return head + f"SELECT %(ns)s, u.* FROM {unnest(cols, types)}" + tail, columns(rows, width)


def each_key(cols: str, table: str, key: str, keys: str = ID_ARRAY, *, many: bool = False) -> str:
    """``SELECT cols FROM table`` for each distinct value of the SQL array
    ``keys`` in column ``key``: one index lookup per key (a ``LATERAL`` join;
    ``OFFSET 0`` keeps the planner from folding it into a join of the whole
    namespace), whatever the table's statistics say; for ``many`` keys (more
    than `conn.LATERAL_UP_TO`), ``key = ANY(...)``. (That, for a few keys on a
    table an import has just filled, before its first ``ANALYZE``, was planned
    as a scan of the whole namespace.)"""
    if many:
        return f"SELECT {cols} FROM {table} WHERE ns = %(ns)s AND {key} = ANY({keys})"
    return (
        f"SELECT t.* FROM (SELECT DISTINCT unnest({keys}) AS k) w CROSS JOIN LATERAL "
        f"(SELECT {cols} FROM {table} WHERE ns = %(ns)s AND {key} = w.k OFFSET 0) t"
    )
