"""pgvector on the PostgreSQL backend: record vectors in a ``halfvec(d)``
column (``vector(d)`` before pgvector 0.7) with an HNSW index, where the
server has the extension.

Found without configuration: when a store first writes or searches vectors,
the backend looks for the ``vector`` extension in the database, and creates
it when the server offers it (``pg_available_extensions``) and the user may;
``BRANCHMEM_PGVECTOR=off`` in the environment keeps it unused. Without it,
vectors stay in the ``vectors`` table only (float32 bytes) and searches rank
in Python, as always.

With it, each embedder and dimension gets a table of its own, hash-partitioned
by namespace (`postgres.vector_tables`: what it holds, how it is made, filled
and indexed). Writes go to ``vectors`` and to that table in the caller's
transaction.

`nearest` is the search side (`branchmem.retrieval.server_ann`): the
namespace's vectors nearest to the query, restricted in the same statement
to records whose index position lies in the anchor's ranges (a superset of
the gate's answer: the caller keeps only what the gate returned), tested on
the row's own copy of its position.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Sequence
from typing import Any

from .meta import PgMeta
from .vector_tables import MAX_DIM, Extension, column_kind, ensure, kind_of, literal, version

ENV = "BRANCHMEM_PGVECTOR"
"""Set to ``off`` (or ``0``) to leave pgvector unused on a server that has it."""


EF_SEARCH = 64
"""``hnsw.ef_search`` of a search with an iterative scan (pgvector 0.8 and later)."""


def _wanted() -> bool:
    return os.environ.get(ENV, "").strip().lower() not in ("off", "0", "no", "false")


class PgVectors(PgMeta):
    """`PgMeta` with vectors mirrored into pgvector tables where the server has it."""

    def pgvector(self) -> Extension | None:
        """The ``vector`` extension this store uses (created if the server
        offers it and it is missing), or None: looked up once per backend."""
        found = self.__dict__.get("_pgv_ext", False)
        if found is not False:
            return found  # type: ignore[no-any-return]
        ext = _detect(self._pool) if _wanted() else None
        self.__dict__["_pgv_ext"] = ext
        self.__dict__.setdefault("_pgv_tables", {})
        return ext

    def vector_table(self, embedder: str, dim: int) -> str | None:
        """The table holding ``embedder``'s ``dim``-dimensional vectors (made and
        filled from the stored ones on first need), or None
        without pgvector or for more dimensions than its index takes."""
        ext = self.pgvector()
        if ext is None or not 0 < dim <= MAX_DIM[column_kind(ext)]:
            return None
        tables: dict[tuple[str, int], str | None] = self.__dict__["_pgv_tables"]
        if (embedder, dim) not in tables:
            import psycopg

            try:
                tables[(embedder, dim)] = ensure(self._pool, ext, embedder, dim)
            except psycopg.Error:
                # Not made (on Citus an operator makes it: docs/scaling.md):
                # these vectors stay in ``vectors`` only, ranked in process.
                tables[(embedder, dim)] = None
        return tables[(embedder, dim)]

    def put_vectors(self, ns: str, embedder: str, rows: list[tuple[str, str, bytes]]) -> None:
        dims = {len(r[2]) // 4 for r in rows}
        # Made (on its own connection) before this transaction writes any row
        # that the table's fill would wait for.
        tabs = {d: self.vector_table(embedder, d) for d in dims}
        if not rows:
            return
        stored = {
            r[0]: (r[1], r[2])
            for r in self._by_key("id, seg, pos", "records", "id", ns, [r[0] for r in rows])
        }
        keep = [r for r in rows if r[0] in stored]
        self._insert(
            "vectors", "embedder, id, digest, vec", "text, text, text, bytea", ns,
            [(embedder, *r) for r in keep],
            " ON CONFLICT (ns, embedder, id) DO UPDATE SET digest = excluded.digest, "
            "vec = excluded.vec",
        )  # fmt: skip
        ext = self.pgvector()
        for d, tab in tabs.items():
            if tab is None or ext is None:
                continue
            same = [
                (embedder, i, g, *stored[i], literal(v)) for i, g, v in keep if len(v) // 4 == d
            ]
            typ = f"{ext.schema}.{kind_of(tab)}"
            self._insert(
                tab, "embedder, id, digest, seg, pos, vec", f"text, text, text, int8, int8, {typ}",
                ns, same,
                " ON CONFLICT (ns, id) DO UPDATE SET digest = excluded.digest, vec = excluded.vec, "
                "seg = excluded.seg, pos = excluded.pos",
            )  # fmt: skip

    def nearest(
        self,
        ns: str,
        embedder: str,
        q: Sequence[float],
        ranges: dict[int, int],
        n: int,
    ) -> list[tuple[str, str]] | None:
        """``(id, digest)`` of (about) the ``n`` vectors of ``ns`` nearest to the
        unit vector ``q`` (cosine) among records whose index position is in
        ``ranges``, from the HNSW index with an iterative scan; None without a
        pgvector table for this embedder (made, from the vectors stored,
        if missing). Its own short read transaction."""
        tab = self.vector_table(embedder, len(q))
        ext = self.pgvector()
        if tab is None or ext is None:
            return None
        s = ext.schema
        sql = (
            # The range test on the row's own copy of its position; for a row
            # without one (written before its record was placed, or by an
            # older version) a subquery per row found, not a join: the
            # planner then keeps the HNSW scan as the driver (a join was
            # planned as a scan of the namespace's records, then a sort).
            f"SELECT v.id, v.digest FROM {tab} v WHERE v.ns = %(ns)s AND CASE WHEN v.seg "
            f"IS NULL THEN (SELECT {in_ranges('c')} FROM records c WHERE c.ns = %(ns)s "
            f"AND c.id = v.id) ELSE {in_ranges('v')} END "
            f"ORDER BY v.vec OPERATOR({s}.<=>) %(q)s::{s}.{kind_of(tab)} LIMIT %(n)s"
        )
        params = {
            "ns": ns,
            "r": ranges_param(ranges),
            "q": "[" + ",".join(map(repr, q)) + "]",
            "n": n,
        }
        if self._trace is not None:
            self._trace(sql, params)
        with self._pool.connection() as conn, conn.pipeline():  # one round trip
            conn.execute("BEGIN")
            iterative = version(ext) >= (0, 8)
            # The candidate list of the first pass: an iterative scan goes on past
            # it (64 took 0.83x the time of 120 for the same recall, at 1M/100k);
            # without one, the scan returns no more than it.
            ef = EF_SEARCH if iterative else max(40, min(n, 1000))
            conn.execute(f"SET LOCAL hnsw.ef_search = {ef}")
            # The HNSW scan, whatever the estimates: without them a table was
            # planned as a scan of the namespace's key, then a sort of every
            # vector (200 ms for 30,000); a plan needing a sort is the one
            # way to order by distance but the index.
            conn.execute("SET LOCAL enable_seqscan = off")
            conn.execute("SET LOCAL enable_bitmapscan = off")
            conn.execute("SET LOCAL enable_sort = off")
            if iterative:
                conn.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
            cur = conn.execute(sql, params)
            conn.execute("COMMIT")
            rows = cur.fetchall()
        return [(r[0], r[1]) for r in rows]

    def vector_part_rows(self, ns: str, embedder: str, dim: int) -> int | None:
        """About how many rows the index scan of a search in ``ns`` steps
        through: the rows of the namespace's part of the pgvector table
        (PostgreSQL's estimate, ``reltuples``), at least the namespace's
        records; None without a table. One short read."""
        tab = self.vector_table(embedder, dim)
        if tab is None:
            return None
        sql = (
            "SELECT (SELECT max(seq) FROM records WHERE ns = %(ns)s), (SELECT c.reltuples "
            f"FROM pg_class c WHERE c.oid = (SELECT v.tableoid FROM {tab} v WHERE v.ns = %(ns)s "
            "LIMIT 1))"
        )
        if self._trace is not None:
            self._trace(sql, {"ns": ns})
        with self._pool.connection() as conn:
            mine, part = conn.execute(sql, {"ns": ns}).fetchone()
            conn.rollback()
        return max(int(mine or 0), int(part or 0))

    def vector_info(self) -> dict[str, Any]:
        """What `Store.info` says of vectors on this backend."""
        ext = self.pgvector()
        if ext is None:
            return {"pgvector": None, "ranking": "in process (numpy or Python)"}
        with self._pool.connection() as conn:
            rows = conn.execute(
                "SELECT embedder, dim, tab, (SELECT count(*) FROM pg_inherits "
                "WHERE inhparent = to_regclass(tab)) FROM vector_tables WHERE ns = '' ORDER BY tab"
            ).fetchall()
        return {
            "pgvector": ext.version,
            "ranking": "pgvector HNSW for large visible sets, gated; exact below",
            "tables": [
                {"embedder": e, "dim": d, "table": t, "type": kind_of(t), "partitions": p}
                for e, d, t, p in rows
            ],
        }


def in_ranges(alias: str) -> str:
    """SQL: the row ``alias``'s index position lies in the anchors' ranges, the
    ``r`` parameter (`ranges_param`)."""
    return f"{alias}.pos <= coalesce((%(r)s::jsonb ->> {alias}.seg::text)::int8, -1)"


def ranges_param(ranges: dict[int, int]) -> str:
    """The ``r`` parameter of `in_ranges`: segment -> last position, as JSON."""
    return json.dumps({str(k): v for k, v in ranges.items()})


_EXT = (
    "SELECT e.extversion, n.nspname FROM pg_extension e JOIN pg_namespace n "
    "ON n.oid = e.extnamespace WHERE e.extname = 'vector'"
)


def _detect(pool: Any) -> Extension | None:
    import psycopg

    with pool.connection() as conn:
        row = conn.execute(_EXT).fetchone()
        if row is None:
            offered = conn.execute(
                "SELECT 1 FROM pg_available_extensions WHERE name = 'vector'"
            ).fetchone()
            if offered is None:
                return None
            # No right to create it, or another opener did meanwhile: look again.
            with contextlib.suppress(psycopg.Error):
                conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
            row = conn.execute(_EXT).fetchone()
    return None if row is None else Extension(str(row[0]), str(row[1]))
