"""The pgvector tables of the PostgreSQL backend (`postgres.vector`): one per
embedder and dimension, named in the ``vector_tables`` registry, made,
filled from the stored vectors and indexed when first needed.

A table holds ``(ns, embedder, id, digest, seg, pos, vec halfvec(d))``, keyed
``(ns, id)``, hash-partitioned by ``ns`` into `PARTITIONS` parts, an HNSW
index on ``vec`` (``halfvec_cosine_ops``) in each part, and a foreign key to
the ``vectors`` row with ``ON DELETE CASCADE``, so every purge and namespace
drop that deletes a record's vector deletes its copy here in the same
statement. A search reads its namespace's part only, whose index holds no
other part's namespaces. On Citus, where ``vectors`` is distributed, the
table is one plain table distributed by ``ns`` beside it
(`citus_table_statements`, docs/scaling.md): each shard's index then holds
its namespaces only, and the key cascades on each worker. ``seg``
and ``pos`` copy the record's index position as it was when the vector was
written (NULL for a record not yet placed, and in the rows of a table an
older version made), so that the search's range test reads the row the index
scan has in hand. A table made for an embedder that already has vectors is
filled from them first, then indexed with `build_memory` for the build (far
faster than the server's default when the graph fits).

Half precision, by measurement (`python bench/search.py --backend postgres`,
100,000 vectors of 256 dimensions, two runs): against ``vector`` the index is
0.61x the size, built in 0.74-0.94x the time and answers in 0.70-1.00x, with
recall@10 by the index alone 0.967-0.973 against 0.973-0.977. The index
only proposes candidates: the search scores them from the float32 vectors in
``vectors``. A table made as ``vector`` (by an older version, or on an older
pgvector) stays in use: the registry names each table, and its prefix
(``hvec_`` or ``vec_``) its type.
"""

from __future__ import annotations

import contextlib
import hashlib
from typing import Any, NamedTuple

from .schema import SETUP_LOCK, has_table, vector_citus_statement
from .sql import unnest

MAX_DIM = {"halfvec": 4000, "vector": 2000}
"""The most dimensions pgvector's HNSW index takes, per column type."""
HALF_SINCE = (0, 7)
"""The pgvector version that has ``halfvec``."""
LINKS = 16
EF_CONSTRUCTION = 64
"""HNSW build parameters (pgvector's defaults)."""
FILL_CHUNK = 2000
"""Rows copied per statement when a new table is filled from stored vectors."""
PARTITIONS = 16
"""Hash partitions by namespace of a new table, each with its own HNSW index
(0: one plain table). The index scan tests every row it meets against the
namespace, so a namespace's search reads past the other namespaces of its
part: 16 parts cut that share to a sixteenth of the store's namespaces."""
ELEMENT_BYTES = 800
"""What pgvector's HNSW build holds in memory per row beside the vector
itself (m 16): 64 MB held 54,718 rows of 256 half-precision dimensions
(1,226 bytes a row, 512 of them the vector)."""
BUILD_MEMORY_MAX = 2 * 2**30
"""The most ``maintenance_work_mem`` an index build asks for (the graph of
about 1.5M vectors of 256 half-precision dimensions)."""


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
    return "halfvec" if version(ext) >= HALF_SINCE else "vector"


def literal(vec: bytes) -> str:
    """float32 bytes as pgvector's text form, ``[x,y,...]`` (exact: a float32
    printed as the shortest float64 repr reads back as the same float32)."""
    from array import array

    a = array("f")
    a.frombytes(vec)
    return "[" + ",".join(map(repr, a.tolist())) + "]"


def version(ext: Extension) -> tuple[int, ...]:
    try:
        return tuple(int(x) for x in ext.version.split(".")[:2])
    except ValueError:
        return (0,)


class Statements(NamedTuple):
    """The statements that make one pgvector table (`table_statements`)."""

    make: list[str]
    """The table, then its partitions."""
    key: str
    """Its foreign key to ``vectors``."""
    hnsw: str
    """Its HNSW index (one per partition)."""


def table_statements(
    ext_schema: str, embedder: str, dim: int, kind: str = "halfvec", partitions: int = PARTITIONS
) -> Statements:
    """The statements that make the pgvector table of ``embedder`` and ``dim``
    (``ext_schema``: where the extension lives; ``kind``: ``halfvec``, or
    ``vector`` before pgvector 0.7; ``partitions``: hash parts by ``ns``, 0
    for one plain table). `ensure` runs them (the key only on a new table);
    on Citus unpartitioned, with the distribution between the table and its
    key (`citus_table_statements`)."""
    tab = table_name(embedder, dim, kind)
    by = " PARTITION BY HASH (ns)" if partitions else ""
    make = [
        f"CREATE TABLE IF NOT EXISTS {tab} (ns text NOT NULL, embedder text NOT NULL, "
        f"id text NOT NULL, digest text NOT NULL, seg bigint, pos bigint, "
        f"vec {ext_schema}.{kind}({dim}) NOT NULL, PRIMARY KEY (ns, id)){by}"
    ]
    make += [
        f"CREATE TABLE IF NOT EXISTS {tab}_{i} PARTITION OF {tab} "
        f"FOR VALUES WITH (MODULUS {partitions}, REMAINDER {i})"
        for i in range(partitions)
    ]
    return Statements(
        make,
        f"ALTER TABLE {tab} ADD CONSTRAINT {tab}_vectors FOREIGN KEY (ns, embedder, id) "
        "REFERENCES vectors (ns, embedder, id) ON DELETE CASCADE",
        f"CREATE INDEX IF NOT EXISTS {tab}_hnsw ON {tab} USING hnsw "
        f"(vec {ext_schema}.{kind}_cosine_ops) WITH (m = {LINKS}, "
        f"ef_construction = {EF_CONSTRUCTION})",
    )


def citus_table_statements(
    ext_schema: str, embedder: str, dim: int, kind: str = "halfvec"
) -> list[str]:
    """On Citus: the table distributed beside ``vectors`` (one plain table:
    each shard holds its namespaces), then its key, index and registry row,
    as `ensure` makes it there (docs/scaling.md)."""
    tab = table_name(embedder, dim, kind)
    made = table_statements(ext_schema, embedder, dim, kind, partitions=0)
    return [
        *made.make,
        vector_citus_statement(tab),
        made.key,
        made.hnsw,
        f"INSERT INTO vector_tables (ns, embedder, dim, tab) VALUES ('', '{embedder}', {dim}, "
        f"'{tab}') ON CONFLICT DO NOTHING",
    ]


def build_memory(rows: int, dim: int, kind: str) -> int:
    """The bytes of ``maintenance_work_mem`` that let pgvector build the HNSW
    graph of ``rows`` vectors in memory (`ELEMENT_BYTES` a row beside the
    vector, a tenth more for safety), at most `BUILD_MEMORY_MAX`.

    >>> build_memory(100_000, 256, "halfvec") // 2**20, build_memory(10**7, 1536, "vector") // 2**30
    (137, 2)
    """
    per = ELEMENT_BYTES + dim * (2 if kind == "halfvec" else 4)
    return min(BUILD_MEMORY_MAX, rows * per * 11 // 10)


def build_index(conn: Any, tab: str, index: str, rows: int, dim: int) -> None:
    """Run ``index`` (the HNSW index of ``tab``, ``rows`` rows), with
    `build_memory` for it where that is more than the server gives. A parallel
    build takes that memory as shared memory, which a container may not have
    (``could not resize shared memory segment``): it is then built again with
    the server's own settings, as before."""
    import psycopg

    need = build_memory(rows, dim, kind_of(tab))
    have = conn.execute(
        "SELECT setting::int8 * 1024 FROM pg_settings WHERE name = 'maintenance_work_mem'"
    ).fetchone()[0]
    if need > have:
        with contextlib.suppress(psycopg.Error), conn.transaction():  # a savepoint
            conn.execute(f"SET LOCAL maintenance_work_mem = '{need // 1024}kB'")
            conn.execute(index)
            return
    conn.execute(index)


def ensure(pool: Any, ext: Extension, embedder: str, dim: int, citus: bool = False) -> str:
    """The table of ``embedder`` and ``dim`` as the registry names it, or made
    (with `column_kind`'s type), filled from the stored vectors, indexed and
    registered first if missing (one transaction, under the schema's setup
    lock). A table an older version made without ``seg`` and ``pos`` gets
    them, empty: its rows are range-tested against ``records``. On Citus
    (``citus``), where ``vectors`` is distributed, the table is made as
    `citus_table_statements` makes it: distributed beside ``vectors``, so
    that its rows live, and go, with theirs; one left on the coordinator is
    dropped and made so."""
    kind = column_kind(ext)
    tab = table_name(embedder, dim, kind)
    with pool.connection() as conn, conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (SETUP_LOCK,))
        spread = citus and distributed(conn, "vectors")
        made = table_statements(ext.schema, embedder, dim, kind, 0 if spread else PARTITIONS)
        known = conn.execute(
            "SELECT tab FROM vector_tables WHERE ns = '' AND embedder = %s AND dim = %s",
            (embedder, dim),
        ).fetchone()
        old = tab if known is None else str(known[0])
        if spread and has_table(conn, old) and not distributed(conn, old):
            # Left on the coordinator by an earlier version, beside a distributed
            # ``vectors``: the workers' deletes never reached it (purged vectors
            # stayed there), and a search cannot join it to the shards. Its rows
            # are copies: made again, distributed, from ``vectors``.
            conn.execute(f"DROP TABLE {old}")
            conn.execute(
                "DELETE FROM vector_tables WHERE ns = '' AND embedder = %s AND dim = %s",
                (embedder, dim),
            )
            known = None
        if known is not None:
            _add_positions(conn, str(known[0]))
            return str(known[0])  # made before, perhaps of the other type
        if not has_table(conn, tab):
            for sql in [*made.make, *([vector_citus_statement(tab)] if spread else []), made.key]:
                conn.execute(sql)
        else:  # left unregistered (its registry row deleted): kept as it was made
            _add_positions(conn, tab)
        rows = fill(conn, ext, tab, embedder, dim)  # index after the fill: faster
        build_index(conn, tab, made.hnsw, rows, dim)
        conn.execute(f"ANALYZE {tab}")  # estimates for the planner from the start
        conn.execute(
            "INSERT INTO vector_tables (ns, embedder, dim, tab) VALUES ('', %s, %s, %s) "
            "ON CONFLICT DO NOTHING",
            (embedder, dim, tab),
        )
    return tab


def distributed(conn: Any, table: str) -> bool:
    """Is ``table`` (of the ``search_path``) a distributed table on this
    Citus coordinator?"""
    return bool(
        conn.execute(
            "SELECT EXISTS (SELECT 1 FROM pg_dist_partition WHERE logicalrelid = to_regclass(%s) "
            "AND partmethod = 'h')",
            (table,),
        ).fetchone()[0]
    )


def _add_positions(conn: Any, tab: str) -> None:
    """Give ``tab`` its ``seg`` and ``pos`` columns if an older version made it
    without (NULL in its rows: no row is rewritten)."""
    has = conn.execute(
        "SELECT count(*) FROM pg_attribute WHERE attrelid = to_regclass(%s) "
        "AND attname IN ('seg', 'pos') AND NOT attisdropped",
        (tab,),
    ).fetchone()[0]
    if has < 2:
        conn.execute(
            f"ALTER TABLE {tab} ADD COLUMN IF NOT EXISTS seg bigint, "
            "ADD COLUMN IF NOT EXISTS pos bigint"
        )


def fill(conn: Any, ext: Extension, tab: str, embedder: str, dim: int) -> int:
    """Copy the stored vectors of ``embedder`` (every namespace) into ``tab``,
    with their records' positions; the number of rows copied."""
    kind = kind_of(tab)
    cur = conn.cursor(name="fill")  # a server-side cursor: read in chunks
    cur.execute(
        "SELECT v.ns, v.id, v.digest, c.seg, c.pos, v.vec FROM vectors v LEFT JOIN records c "
        "ON c.ns = v.ns AND c.id = v.id WHERE v.embedder = %s AND length(v.vec) = %s",
        (embedder, 4 * dim),
    )
    cols = "ns, id, digest, seg, pos, vec"
    done = 0
    while True:
        rows = cur.fetchmany(FILL_CHUNK)
        if not rows:
            break
        done += len(rows)
        arrays = list(zip(*[(*r[:5], literal(bytes(r[5]))) for r in rows], strict=True))
        conn.execute(
            f"INSERT INTO {tab} (ns, embedder, id, digest, seg, pos, vec) SELECT u.ns, %(e)s, "
            "u.id, u.digest, u.seg, u.pos, u.vec FROM "
            f"{unnest(cols, f'text, text, text, int8, int8, {ext.schema}.{kind}')} "
            "ON CONFLICT DO NOTHING",
            {"e": embedder, **{f"c{k}": list(a) for k, a in enumerate(arrays)}},
        )
    cur.close()
    return done
