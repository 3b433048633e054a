"""The PostgreSQL schema: tables, indexes and versions.

Every primary key and every index leads with ``ns`` (the namespace name), so
that a distributed PostgreSQL can shard every table by it and co-locate them
(see docs/scaling.md). ``schema_version`` is the one table without a
namespace: it is small and read once per process.

Columns use the same encodings as SQLite (id lists joined by a separator,
JSON as text), so both backends share their row mapping (`sqlrows`).
"""

from __future__ import annotations

import time
from typing import Any

from ..migrations import plan

TABLES = """
CREATE TABLE IF NOT EXISTS schema_version (
    version integer PRIMARY KEY, applied_at double precision NOT NULL
);
CREATE TABLE IF NOT EXISTS events (
    ns text NOT NULL, id text NOT NULL, parents text, role text NOT NULL,
    content text NOT NULL, meta text, created_at double precision NOT NULL,
    seg bigint, seq bigint, arrival bigserial, PRIMARY KEY (ns, id)
);
CREATE INDEX IF NOT EXISTS events_parents ON events (ns, parents, arrival);
CREATE INDEX IF NOT EXISTS events_merges ON events (ns, arrival)
    WHERE strpos(parents, E'\\x1f') > 0;
CREATE TABLE IF NOT EXISTS waits (
    ns text NOT NULL, parent text NOT NULL, child text NOT NULL,
    PRIMARY KEY (ns, parent, child)
);
CREATE TABLE IF NOT EXISTS segments (
    ns text NOT NULL, seg bigint NOT NULL, parents text NOT NULL, tip bigint NOT NULL,
    PRIMARY KEY (ns, seg)
);
CREATE TABLE IF NOT EXISTS records (
    ns text NOT NULL, id text NOT NULL, seq bigint NOT NULL, kind text NOT NULL,
    content text NOT NULL, sources text NOT NULL, key text,
    importance double precision NOT NULL, meta text, target text,
    created_at double precision NOT NULL, seg bigint, pos bigint, extra text,
    expires_at double precision, valid_from double precision, valid_to double precision,
    PRIMARY KEY (ns, id)
);
CREATE UNIQUE INDEX IF NOT EXISTS records_seq ON records (ns, seq);
CREATE INDEX IF NOT EXISTS records_pos ON records (ns, seg, pos) WHERE seg IS NOT NULL;
CREATE INDEX IF NOT EXISTS records_target ON records (ns, target) WHERE target IS NOT NULL;
CREATE INDEX IF NOT EXISTS records_timed ON records (ns)
    WHERE expires_at IS NOT NULL OR valid_from IS NOT NULL OR valid_to IS NOT NULL;
CREATE INDEX IF NOT EXISTS records_consolidated ON records (ns)
    WHERE strpos(meta, '"consolidated_from"') > 0;
CREATE TABLE IF NOT EXISTS record_waits (
    ns text NOT NULL, event text NOT NULL, record text NOT NULL,
    PRIMARY KEY (ns, event, record)
);
CREATE TABLE IF NOT EXISTS branches (
    ns text NOT NULL, name text NOT NULL, head text NOT NULL, fork_point text,
    parent text, created_at double precision, updated_at double precision,
    PRIMARY KEY (ns, name)
);
CREATE TABLE IF NOT EXISTS head_moves (
    ns text NOT NULL, branch text NOT NULL, n bigint NOT NULL, from_head text,
    to_head text, why text NOT NULL, actor text, at double precision NOT NULL,
    PRIMARY KEY (ns, branch, n)
);
CREATE TABLE IF NOT EXISTS snapshots (
    ns text NOT NULL, name text NOT NULL, branch text NOT NULL, event text NOT NULL,
    created_at double precision NOT NULL, PRIMARY KEY (ns, name)
);
CREATE TABLE IF NOT EXISTS audit (
    ns text NOT NULL, seq bigint NOT NULL, at double precision NOT NULL, actor text,
    op text NOT NULL, ids text NOT NULL, PRIMARY KEY (ns, seq)
);
CREATE INDEX IF NOT EXISTS audit_at ON audit (ns, at);
CREATE TABLE IF NOT EXISTS life (
    ns text NOT NULL, id text NOT NULL, archived_at double precision,
    restored_at double precision, uses integer NOT NULL, last_used double precision,
    PRIMARY KEY (ns, id)
)
"""

# Version 4 adds two tables. ``counters`` holds store-wide counters in the row
# keyed by the empty namespace (the erasure count that caches in every process
# check). ``vectors`` holds record vectors per embedder as float32 bytes: a
# pgvector ``vector`` column can replace ``vec`` later with the key unchanged.
COUNTERS_AND_VECTORS = [
    """CREATE TABLE IF NOT EXISTS counters (
    ns text NOT NULL, erasures bigint NOT NULL, PRIMARY KEY (ns)
)""",
    """CREATE TABLE IF NOT EXISTS vectors (
    ns text NOT NULL, embedder text NOT NULL, id text NOT NULL, digest text NOT NULL,
    vec bytea NOT NULL, PRIMARY KEY (ns, embedder, id)
)""",
]
TABLES += ";\n" + ";\n".join(COUNTERS_AND_VECTORS)

# Version 7 adds the registry of pgvector tables (`postgres.vector`): one row per
# embedder and dimension, under the empty namespace, naming the table that
# holds those vectors as ``vector(dim)`` with an HNSW index. The tables
# themselves are made when first needed, on a server with the extension.
VECTOR_TABLES = [
    """CREATE TABLE IF NOT EXISTS vector_tables (
    ns text NOT NULL, embedder text NOT NULL, dim integer NOT NULL, tab text NOT NULL,
    PRIMARY KEY (ns, embedder, dim)
)"""
]
TABLES += ";\n" + ";\n".join(VECTOR_TABLES)

# Version 8 adds a write counter per namespace, raised by each write
# transaction as it commits: caches in every process check it, in the read
# view of their data, and are rebuilt only when something was written.
NS_COUNTERS = [
    """CREATE TABLE IF NOT EXISTS ns_counters (
    ns text NOT NULL, writes bigint NOT NULL, PRIMARY KEY (ns)
)"""
]
TABLES += ";\n" + ";\n".join(NS_COUNTERS)

# Version 9 adds each record's keyword tokens per tokenizer and version
# (`retrieval.terms`), apart from ``vectors``: no pgvector table may see them.
TERMS = [
    """CREATE TABLE IF NOT EXISTS terms (
    ns text NOT NULL, tokenizer text NOT NULL, id text NOT NULL, digest text NOT NULL,
    toks bytea NOT NULL, PRIMARY KEY (ns, tokenizer, id)
)"""
]
TABLES += ";\n" + ";\n".join(TERMS)

# Version 11 adds the extraction queue (`backends.jobs`): one row per
# (namespace, tip), all under the store-wide key ``ns = ''`` with the
# namespace in ``space`` (`postgres.jobs`: a worker's claim spans namespaces).
JOBS = [
    """CREATE TABLE IF NOT EXISTS jobs (
    ns text NOT NULL, space text NOT NULL, tip text NOT NULL, state text NOT NULL,
    attempts integer NOT NULL, not_before double precision NOT NULL,
    lease_until double precision, worker text, error text,
    created_at double precision NOT NULL, PRIMARY KEY (ns, space, tip)
)""",
    "CREATE INDEX IF NOT EXISTS jobs_due ON jobs (ns, state, not_before)",
]
TABLES += ";\n" + ";\n".join(JOBS)

# Statements that bring a store from the version before to the key's version
# (version 3 is the first PostgreSQL schema).
# Version 6 numbers events in arrival order (for children and siblings, in
# `postgres.tree`); the rows already stored get numbers within their namespace
# in the order the table holds them, and new ones follow from a sequence. Not
# ``ADD COLUMN arrival bigserial``: Citus refuses a serial column added to a
# distributed table (even where it exists: `prepare` skips the step then),
# and a sequence ``OWNED BY`` one; a plain column, filled, then given the
# sequence as its default, it takes (docs/scaling.md).
ARRIVAL = [
    "ALTER TABLE events ADD COLUMN IF NOT EXISTS arrival bigint",
    "CREATE SEQUENCE IF NOT EXISTS events_arrival_seq",
    "UPDATE events e SET arrival = o.n FROM (SELECT ns, id, row_number() OVER "
    "(PARTITION BY ns ORDER BY ctid) AS n FROM events) o WHERE e.ns = o.ns AND e.id = o.id",
    "SELECT setval('events_arrival_seq', (SELECT coalesce(max(arrival), 0) + 1 FROM events), "
    "false)",
    "ALTER TABLE events ALTER COLUMN arrival SET DEFAULT nextval('events_arrival_seq')",
    "ALTER TABLE events ALTER COLUMN arrival SET NOT NULL",
]
STEPS: dict[int, list[str]] = {
    4: COUNTERS_AND_VECTORS,
    6: ARRIVAL,
    7: VECTOR_TABLES,
    8: NS_COUNTERS,
    9: TERMS,
    11: JOBS,
    # 12: nothing here: the ``records_consolidated`` index is new, made by TABLES
    # 10: nothing here (SQLite's large-row tables as rowid tables; a
    # PostgreSQL table keeps its rows in a heap already)
}

# On a distributed PostgreSQL (Citus): every table with namespaced rows is
# distributed by ``ns``, all in one colocation group, so that each statement
# (which names one namespace) runs on one shard; ``counters`` (one row, under
# the empty namespace) is a copy on every node, read by every transaction;
# ``schema_version`` stays a local table on the coordinator (docs/scaling.md).
# ``vector_tables`` (the pgvector registry, rows under the empty namespace)
# is a reference table too; each pgvector table it names is distributed by
# ``ns`` beside ``vectors`` when made (`vector_citus_statement`).
DISTRIBUTED = (
    "events", "waits", "segments", "records", "record_waits", "branches", "head_moves",
    "snapshots", "audit", "life", "vectors", "ns_counters", "terms", "jobs",
)  # fmt: skip
REFERENCE = ("counters", "vector_tables")


def vector_citus_statement(table: str) -> str:
    """Distributes one pgvector table (`postgres.vector`) on Citus, beside ``vectors``."""
    return f"SELECT create_distributed_table('{table}', 'ns', colocate_with => 'vectors');"


def citus_statements() -> list[str]:
    """The statements that distribute a store's tables on Citus (run on the
    coordinator, with the store's schema in the ``search_path``)."""
    first = DISTRIBUTED[0]
    out = [f"SELECT create_distributed_table('{first}', 'ns');"]
    out += [
        f"SELECT create_distributed_table('{t}', 'ns', colocate_with => '{first}');"
        for t in DISTRIBUTED[1:]
    ]
    return out + [f"SELECT create_reference_table('{t}');" for t in REFERENCE]


# One key for "someone is creating or upgrading the schema" (any 64-bit value).
SETUP_LOCK = 0x6272616E63686D65  # "branchme"


def make_schema(conn: Any, schema: str) -> None:
    """``CREATE SCHEMA IF NOT EXISTS`` under the setup lock: the statement alone
    is not safe against a concurrent one (two openers of a new schema both
    found it missing, and the second failed on the duplicate name)."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (SETUP_LOCK,))
        conn.execute(f"CREATE SCHEMA IF NOT EXISTS {schema}")


def has_table(conn: Any, table: str, column: str | None = None) -> bool:
    """Does the schema first in the ``search_path`` hold ``table`` (with
    ``column``)? Read from the catalogs in this statement's snapshot, not by
    ``to_regclass``: a name the connection looked up before it waited for a
    lock may be answered from its cache, where a table another process made
    meanwhile is still missing (six processes opening one new schema on Citus:
    an opener found no ``schema_version`` after the first had made it)."""
    sql = (
        "SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n "
        "ON n.oid = c.relnamespace WHERE n.nspname = current_schema() AND c.relname = %s"
    )
    args: tuple[str, ...] = (table,)
    if column is not None:
        sql += (
            " AND EXISTS (SELECT 1 FROM pg_catalog.pg_attribute a WHERE a.attrelid = c.oid "
            "AND a.attname = %s AND NOT a.attisdropped)"
        )
        args += (column,)
    return bool(conn.execute(sql + ")", args).fetchone()[0])


def is_citus(conn: Any) -> bool:
    """Is the database a Citus coordinator (has it the ``citus`` extension)?"""
    sql = "SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus')"
    return bool(conn.execute(sql).fetchone()[0])


def prepare(conn: Any, where: str) -> None:
    """Create or upgrade the schema in the connection's ``search_path``, in one
    transaction; concurrent openers wait on an advisory lock, so one creates."""
    conn.execute("BEGIN")
    try:
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (SETUP_LOCK,))
        found = None
        if has_table(conn, "schema_version"):
            found = conn.execute("SELECT max(version) FROM schema_version").fetchone()[0]
        stmts, versions = plan(None if found is None else int(found), STEPS, TABLES, where)
        if 6 in versions and has_table(conn, "events", "arrival"):
            stmts = [s for s in stmts if s not in ARRIVAL]  # made already: nothing to add
        for stmt in stmts:
            conn.execute(stmt)
        now = time.time()
        for v in versions:
            conn.execute("INSERT INTO schema_version VALUES (%s, %s)", (v, now))
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
