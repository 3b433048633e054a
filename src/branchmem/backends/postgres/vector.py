"""pgvector on the PostgreSQL backend: record vectors in a ``halfvec(d)``
column (``vector(d)`` before pgvector 0.7) with an HNSW index, where the
server has the extension.

Found without configuration: when a store first writes or searches vectors,
the backend looks for the ``vector`` extension in the database, and creates
it when the server offers it (``pg_available_extensions``) and the user may;
``BRANCHMEM_PGVECTOR=off`` in the environment keeps it unused. Without it,
vectors stay in the ``vectors`` table only (float32 bytes) and searches rank
in Python, as always.

With it, each embedder and dimension gets a table of its own (named in the
``vector_tables`` registry): ``(ns, embedder, id, digest, vec halfvec(d))``,
keyed ``(ns, id)``, an HNSW index on ``vec`` (``halfvec_cosine_ops``), and a
foreign key to the ``vectors`` row with ``ON DELETE CASCADE``, so every purge
and namespace drop that deletes a record's vector deletes its copy here in
the same statement. On Citus an operator makes the table, distributed by ``ns``
beside ``vectors`` (`citus_table_statements`, docs/scaling.md): each shard's
index then holds its namespaces only.
Writes go to both tables in the caller's transaction; a table made for an
embedder that already has vectors is filled from them first.

Half precision, by measurement (`python bench/search.py --backend postgres`,
100,000 vectors of 256 dimensions, two runs): against ``vector`` the index is
0.61x the size, built in 0.74-0.94x the time and answers in 0.70-1.00x, with
recall@10 by the index alone 0.967-0.973 against 0.973-0.977. The index
only proposes candidates: the search scores them from the float32 vectors in
``vectors``. A table made as
``vector`` (by an older version, or on an older pgvector) stays in use: the
registry names each table, and its prefix (``hvec_`` or ``vec_``) its type.

`nearest` is the search side (`branchmem.retrieval.server_ann`): the
namespace's vectors nearest to the query, restricted in the same statement
to records whose index position lies in the anchor's ranges (a superset of
the gate's answer: the caller keeps only what the gate returned).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Sequence
from typing import Any, NamedTuple

from .meta import PgMeta
from .schema import SETUP_LOCK, vector_citus_statement
from .sql import unnest

ENV = "BRANCHMEM_PGVECTOR"
"""Set to ``off`` (or ``0``) to leave pgvector unused on a server that has it."""
MAX_DIM = {"halfvec": 4000, "vector": 2000}
"""The most dimensions pgvector's HNSW index takes, per column type."""
HALF_SINCE = (0, 7)
"""The pgvector version that has ``halfvec``."""
LINKS = 16
EF_CONSTRUCTION = 64
"""HNSW build parameters (pgvector's defaults)."""
FILL_CHUNK = 2000
"""Rows copied per statement when a new table is filled from stored vectors."""


class Extension(NamedTuple):
    version: str
    schema: str  # where its types and operators live


def table_name(embedder: str, dim: int, kind: str) -> str:
    """The table of one embedder and dimension with a ``kind`` column
    (``halfvec`` or ``vector``), a plain identifier.

    >>> table_name("hashing-256", 256, "halfvec")[:5], table_name("hashing-256", 256, "vector")[:4]
    ('hvec_', 'vec_')
    """
    h = hashlib.blake2b(embedder.encode("utf-8"), digest_size=5).hexdigest()
    return f"{'h' if kind == 'halfvec' else ''}vec_{h}_{dim}"


def kind_of(tab: str) -> str:
    """The column type of a vector table, from its name (`table_name`)."""
    return "halfvec" if tab.startswith("hvec_") else "vector"


def column_kind(ext: Extension) -> str:
    """The column type a new table gets on this extension."""
    return "halfvec" if _version(ext) >= HALF_SINCE else "vector"


def literal(vec: bytes) -> str:
    """float32 bytes as pgvector's text form, ``[x,y,...]`` (exact: a float32
    printed as the shortest float64 repr reads back as the same float32)."""
    from array import array

    a = array("f")
    a.frombytes(vec)
    return "[" + ",".join(map(repr, a.tolist())) + "]"


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
                tables[(embedder, dim)] = _ensure(self._pool, ext, embedder, dim)
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
        stored = {r[0] for r in self._by_key("id", "records", "id", ns, [r[0] for r in rows])}
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
            same = [(embedder, i, g, literal(v)) for i, g, v in keep if len(v) // 4 == d]
            typ = f"{ext.schema}.{kind_of(tab)}"
            self._insert(
                tab, "embedder, id, digest, vec", f"text, text, text, {typ}", ns,
                same,
                " ON CONFLICT (ns, id) DO UPDATE SET digest = excluded.digest, vec = excluded.vec",
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
            # The range test as a subquery per row found, not a join: the
            # planner then keeps the HNSW scan as the driver (a join was
            # planned as a scan of the namespace's records, then a sort).
            f"SELECT v.id, v.digest FROM {tab} v WHERE v.ns = %(ns)s AND (SELECT c.pos <= "
            "coalesce((%(r)s::jsonb ->> c.seg::text)::int8, -1) FROM records c "
            "WHERE c.ns = %(ns)s AND c.id = v.id) "
            f"ORDER BY v.vec OPERATOR({s}.<=>) %(q)s::{s}.{kind_of(tab)} LIMIT %(n)s"
        )
        params = {
            "ns": ns,
            "r": json.dumps({str(k): v for k, v in ranges.items()}),
            "q": "[" + ",".join(map(repr, q)) + "]",
            "n": n,
        }
        if self._trace is not None:
            self._trace(sql, params)
        with self._pool.connection() as conn, conn.pipeline():  # one round trip
            conn.execute("BEGIN")
            conn.execute(f"SET LOCAL hnsw.ef_search = {max(40, min(n, 1000))}")
            # The HNSW scan, whatever the estimates: without them a table was
            # planned as a scan of the namespace's key, then a sort of every
            # vector (200 ms for 30,000); a plan needing a sort is the one
            # way to order by distance but the index.
            conn.execute("SET LOCAL enable_seqscan = off")
            conn.execute("SET LOCAL enable_bitmapscan = off")
            conn.execute("SET LOCAL enable_sort = off")
            if _version(ext) >= (0, 8):
                conn.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
            cur = conn.execute(sql, params)
            conn.execute("COMMIT")
            rows = cur.fetchall()
        return [(r[0], r[1]) for r in rows]

    def vector_info(self) -> dict[str, Any]:
        """What `Store.info` says of vectors on this backend."""
        ext = self.pgvector()
        if ext is None:
            return {"pgvector": None, "ranking": "in process (numpy or Python)"}
        with self._pool.connection() as conn:
            rows = conn.execute(
                "SELECT embedder, dim, tab FROM vector_tables WHERE ns = '' ORDER BY tab"
            ).fetchall()
        return {
            "pgvector": ext.version,
            "ranking": "pgvector HNSW for large visible sets, gated; exact below",
            "tables": [
                {"embedder": e, "dim": d, "table": t, "type": kind_of(t)} for e, d, t in rows
            ],
        }


def _version(ext: Extension) -> tuple[int, ...]:
    try:
        return tuple(int(x) for x in ext.version.split(".")[:2])
    except ValueError:
        return (0,)


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


def table_statements(ext_schema: str, embedder: str, dim: int, kind: str = "halfvec") -> list[str]:
    """The statements that make the pgvector table of ``embedder`` and ``dim``
    (``ext_schema``: where the extension lives; ``kind``: ``halfvec``, or
    ``vector`` before pgvector 0.7): the table, its foreign key to
    ``vectors``, its HNSW index. `_ensure` runs them (the key only on a new
    table); on Citus an operator runs them with the distribution between the
    first two (`citus_table_statements`)."""
    tab = table_name(embedder, dim, kind)
    return [
        f"CREATE TABLE IF NOT EXISTS {tab} (ns text NOT NULL, embedder text NOT NULL, "
        f"id text NOT NULL, digest text NOT NULL, vec {ext_schema}.{kind}({dim}) NOT NULL, "
        "PRIMARY KEY (ns, id))",
        f"ALTER TABLE {tab} ADD CONSTRAINT {tab}_vectors FOREIGN KEY (ns, embedder, id) "
        "REFERENCES vectors (ns, embedder, id) ON DELETE CASCADE",
        f"CREATE INDEX IF NOT EXISTS {tab}_hnsw ON {tab} USING hnsw "
        f"(vec {ext_schema}.{kind}_cosine_ops) WITH (m = {LINKS}, "
        f"ef_construction = {EF_CONSTRUCTION})",
    ]


def citus_table_statements(
    ext_schema: str, embedder: str, dim: int, kind: str = "halfvec"
) -> list[str]:
    """On Citus, where the backend cannot make the table itself (a local table
    may not reference a distributed one): the table distributed beside
    ``vectors``, then its key, index and registry row (docs/scaling.md)."""
    tab = table_name(embedder, dim, kind)
    make, key, index = table_statements(ext_schema, embedder, dim, kind)
    return [
        make,
        vector_citus_statement(tab),
        key,
        index,
        f"INSERT INTO vector_tables (ns, embedder, dim, tab) VALUES ('', '{embedder}', {dim}, "
        f"'{tab}') ON CONFLICT DO NOTHING",
    ]


def _ensure(pool: Any, ext: Extension, embedder: str, dim: int) -> str:
    """The table of ``embedder`` and ``dim`` as the registry names it, or made
    (with `column_kind`'s type), filled from the stored vectors, indexed and
    registered first if missing (one transaction, under the schema's setup
    lock)."""
    kind = column_kind(ext)
    tab = table_name(embedder, dim, kind)
    make, key, index = table_statements(ext.schema, embedder, dim, kind)
    with pool.connection() as conn, conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (SETUP_LOCK,))
        known = conn.execute(
            "SELECT tab FROM vector_tables WHERE ns = '' AND embedder = %s AND dim = %s",
            (embedder, dim),
        ).fetchone()
        if known is not None:
            return str(known[0])  # made before, perhaps of the other type
        fresh = conn.execute("SELECT to_regclass(%s) IS NULL", (tab,)).fetchone()[0]
        conn.execute(make)
        if fresh:
            conn.execute(key)
        _fill(conn, ext, tab, embedder, dim)  # index after the fill: faster
        conn.execute(index)
        conn.execute(f"ANALYZE {tab}")  # estimates for the planner from the start
        conn.execute(
            "INSERT INTO vector_tables (ns, embedder, dim, tab) VALUES ('', %s, %s, %s) "
            "ON CONFLICT DO NOTHING",
            (embedder, dim, tab),
        )
    return tab


def _fill(conn: Any, ext: Extension, tab: str, embedder: str, dim: int) -> None:
    """Copy the stored vectors of ``embedder`` (every namespace) into ``tab``."""
    kind = kind_of(tab)
    cur = conn.cursor(name="fill")  # a server-side cursor: read in chunks
    cur.execute(
        "SELECT ns, id, digest, vec FROM vectors WHERE embedder = %s AND length(vec) = %s",
        (embedder, 4 * dim),
    )
    cols = "ns, id, digest, vec"
    while True:
        rows = cur.fetchmany(FILL_CHUNK)
        if not rows:
            break
        arrays = list(zip(*[(n, i, g, literal(bytes(v))) for n, i, g, v in rows], strict=True))
        conn.execute(
            f"INSERT INTO {tab} (ns, embedder, id, digest, vec) SELECT u.ns, %(e)s, u.id, "
            f"u.digest, u.vec FROM {unnest(cols, f'text, text, text, {ext.schema}.{kind}')} "
            "ON CONFLICT DO NOTHING",
            {"e": embedder, **{f"c{k}": list(a) for k, a in enumerate(arrays)}},
        )
    cur.close()
