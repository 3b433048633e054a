"""Versions of the SQLite schema: create a new store, upgrade an older one.

Version 2 (the first release) kept its version in ``store_info``; version 3
adds the ``schema_version`` table, one row per applied version; version 4
numbers records and audit lines within their namespace; version 5 keeps
records in their ``(ns, seq)`` key (one b-tree fewer per record written);
version 6 indexes events by their parents (children and siblings); version 9
adds the ``terms`` table (each record's stored keyword tokens); version 10
makes the tables whose rows can be large (records, audit lines, vectors,
tokens) rowid tables again (see `ROWID_TABLES`); version 11 adds the
``jobs`` table (the extraction queue, `backends.jobs`). ``store_info``
keeps the current version too, so that a release that knows only ``store_info``
refuses a newer file instead of misreading it.
"""

from __future__ import annotations

import sqlite3
import time

from ...errors import StorageError
from ..migrations import CURRENT, plan, steps_to_apply

VERSION_TABLE = (
    "CREATE TABLE IF NOT EXISTS schema_version ("
    "version INTEGER PRIMARY KEY, applied_at REAL NOT NULL)"
)

# ``seq`` counts within the namespace (a store-wide count would tell one tenant
# how much the others write). Records and audit lines are unique by (ns, seq).
# Version 5 made that their clustered key (WITHOUT ROWID, one b-tree fewer per
# record); version 10 made them rowid tables again, with (ns, seq) a unique
# index: in a clustered key every row is the key, and SQLite compares a key
# that overflows its page by reading it whole, so one large row (a long text,
# a checkpoint's data, an audit line listing an import's 50,000 ids, a
# 1,536-float vector) slowed every later lookup and insert that passed it
# (measured: an `add_event` 0.12 -> 0.25 ms from 10,000 to 1M events imported
# 50,000 at a time; a key lookup 4 -> 157 us beside 200 kB rows). Ingest costs
# about the same.
RECORDS_V4 = """CREATE TABLE IF NOT EXISTS {name} (
    ns INTEGER NOT NULL, seq INTEGER NOT NULL, id TEXT NOT NULL, kind TEXT NOT NULL,
    content TEXT NOT NULL, sources TEXT NOT NULL, key TEXT, importance REAL NOT NULL,
    meta TEXT, target TEXT, created_at REAL NOT NULL, seg INTEGER, pos INTEGER, extra TEXT,
    expires_at REAL, valid_from REAL, valid_to REAL,
    UNIQUE (ns, id)
);
"""
RECORDS = """CREATE TABLE IF NOT EXISTS {name} (
    ns INTEGER NOT NULL, seq INTEGER NOT NULL, id TEXT NOT NULL, kind TEXT NOT NULL,
    content TEXT NOT NULL, sources TEXT NOT NULL, key TEXT, importance REAL NOT NULL,
    meta TEXT, target TEXT, created_at REAL NOT NULL, seg INTEGER, pos INTEGER, extra TEXT,
    expires_at REAL, valid_from REAL, valid_to REAL,
    PRIMARY KEY (ns, seq)
);
"""
AUDIT = """CREATE TABLE IF NOT EXISTS {name} (
    ns INTEGER NOT NULL, seq INTEGER NOT NULL, at REAL NOT NULL, actor TEXT,
    op TEXT NOT NULL, ids TEXT NOT NULL, PRIMARY KEY (ns, seq)
);
"""
VECTORS = """CREATE TABLE IF NOT EXISTS {name} (
    ns INTEGER NOT NULL, embedder TEXT NOT NULL, id TEXT NOT NULL, digest TEXT NOT NULL,
    vec BLOB NOT NULL, PRIMARY KEY (ns, embedder, id)
);
"""
TERMS = """CREATE TABLE IF NOT EXISTS {name} (
    ns INTEGER NOT NULL, tokenizer TEXT NOT NULL, id TEXT NOT NULL, digest TEXT NOT NULL,
    toks BLOB NOT NULL, PRIMARY KEY (ns, tokenizer, id)
);
"""
_REC = (
    "id, kind, content, sources, key, importance, meta, target, created_at, seg, pos, extra, "
    "expires_at, valid_from, valid_to"
)
ROWID_TABLES = {
    "records": (RECORDS, f"ns, seq, {_REC}"),
    "audit": (AUDIT, "ns, seq, at, actor, op, ids"),
    "vectors": (VECTORS, "ns, embedder, id, digest, vec"),
    "terms": (TERMS, "ns, tokenizer, id, digest, toks"),
}
"""The tables version 10 rebuilt as rowid tables (their rows can be large), by
name: their statement and columns."""

SCHEMA = """
CREATE TABLE IF NOT EXISTS store_info (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS namespaces (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
-- A rowid table: rows append in arrival order, and only the small (ns, id)
-- index takes random inserts (measured faster to ingest than a clustered key).
CREATE TABLE IF NOT EXISTS events (
    ns INTEGER NOT NULL, id TEXT NOT NULL, parents TEXT, role TEXT NOT NULL,
    content TEXT NOT NULL, meta TEXT, created_at REAL NOT NULL, seg INTEGER, seq INTEGER
);
CREATE UNIQUE INDEX IF NOT EXISTS events_id ON events (ns, id);
-- Version 6: the tree's reads (children, siblings; `sqlite.tree`).
CREATE INDEX IF NOT EXISTS events_parents ON events (ns, parents);
CREATE INDEX IF NOT EXISTS events_merges ON events (ns) WHERE instr(parents, char(31)) > 0;
CREATE TABLE IF NOT EXISTS waits (
    ns INTEGER NOT NULL, parent TEXT NOT NULL, child TEXT NOT NULL,
    PRIMARY KEY (ns, parent, child)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS segments (
    ns INTEGER NOT NULL, seg INTEGER NOT NULL, parents TEXT NOT NULL, tip INTEGER NOT NULL,
    PRIMARY KEY (ns, seg)
) WITHOUT ROWID;
{records}-- Named, so that a lookup of many ids can insist on it (INDEXED BY): without
-- statistics the planner would rather scan the namespace in the key.
CREATE UNIQUE INDEX IF NOT EXISTS records_id ON records (ns, id);
CREATE INDEX IF NOT EXISTS records_pos ON records (ns, seg, pos) WHERE seg IS NOT NULL;
CREATE INDEX IF NOT EXISTS records_target ON records (ns, target) WHERE target IS NOT NULL;
CREATE INDEX IF NOT EXISTS records_timed ON records (ns)
    WHERE expires_at IS NOT NULL OR valid_from IS NOT NULL OR valid_to IS NOT NULL;
CREATE INDEX IF NOT EXISTS records_consolidated ON records (ns)
    WHERE instr(meta, '"consolidated_from"') > 0;
CREATE TABLE IF NOT EXISTS record_waits (
    ns INTEGER NOT NULL, event TEXT NOT NULL, record TEXT NOT NULL,
    PRIMARY KEY (ns, event, record)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS branches (
    ns INTEGER NOT NULL, name TEXT NOT NULL, head TEXT NOT NULL,
    fork_point TEXT, parent TEXT, created_at REAL, updated_at REAL,
    PRIMARY KEY (ns, name)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS head_moves (
    ns INTEGER NOT NULL, branch TEXT NOT NULL, from_head TEXT, to_head TEXT,
    why TEXT NOT NULL, actor TEXT, at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS head_moves_branch ON head_moves (ns, branch);
CREATE TABLE IF NOT EXISTS snapshots (
    ns INTEGER NOT NULL, name TEXT NOT NULL, branch TEXT NOT NULL, event TEXT NOT NULL,
    created_at REAL NOT NULL, PRIMARY KEY (ns, name)
) WITHOUT ROWID;
{audit}CREATE TABLE IF NOT EXISTS life (
    ns INTEGER NOT NULL, id TEXT NOT NULL, archived_at REAL, restored_at REAL,
    uses INTEGER NOT NULL, last_used REAL, PRIMARY KEY (ns, id)
) WITHOUT ROWID;
-- Record vectors per embedder (float32 bytes), deleted with their record.
{vectors}-- Version 9: each record's keyword tokens per tokenizer and version
-- (`retrieval.terms`), deleted with their record.
{terms}-- Query logs that searches of this store wrote to (absolute paths): purge reaches them.
CREATE TABLE IF NOT EXISTS query_logs (path TEXT PRIMARY KEY) WITHOUT ROWID;
-- Version 11: the extraction queue (`backends.jobs`), one row per (ns, tip).
CREATE TABLE IF NOT EXISTS jobs (
    ns INTEGER NOT NULL, tip TEXT NOT NULL, state TEXT NOT NULL, attempts INTEGER NOT NULL,
    not_before REAL NOT NULL, lease_until REAL, worker TEXT, error TEXT,
    created_at REAL NOT NULL, UNIQUE (ns, tip)
);
CREATE INDEX IF NOT EXISTS jobs_due ON jobs (state, not_before);
""".format(**{name: ddl.format(name=name) for name, (ddl, _) in ROWID_TABLES.items()})

# Statements that bring a store from the version before to the key's version.
STEPS: dict[int, list[str]] = {
    3: [VERSION_TABLE],
    # 4: records and audit lines numbered within their namespace, in the order
    # they were written (the tables are rebuilt; their indexes follow from SCHEMA).
    4: [
        RECORDS_V4.format(name="records_v4").rstrip().rstrip(";"),
        f"INSERT INTO records_v4 (ns, seq, {_REC}) SELECT ns, "
        f"row_number() OVER (PARTITION BY ns ORDER BY seq), {_REC} FROM records ORDER BY seq",
        "DROP TABLE records",
        "ALTER TABLE records_v4 RENAME TO records",
        AUDIT.format(name="audit_v4").rstrip().rstrip(";"),
        "INSERT INTO audit_v4 (ns, seq, at, actor, op, ids) SELECT ns, "
        "row_number() OVER (PARTITION BY ns ORDER BY seq), at, actor, op, ids FROM audit",
        "DROP TABLE audit",
        "ALTER TABLE audit_v4 RENAME TO audit",
    ],
    # 5: records keyed by (ns, seq); dropping the old table drops its indexes
    # (records_seq among them, now the key); SCHEMA makes the others again.
    5: [
        RECORDS.format(name="records_v5").rstrip().rstrip(";"),
        f"INSERT INTO records_v5 (ns, seq, {_REC}) SELECT ns, seq, {_REC} FROM records "
        "ORDER BY ns, seq",
        "DROP TABLE records",
        "ALTER TABLE records_v5 RENAME TO records",
    ],
    # 7: nothing here (the PostgreSQL backend's pgvector registry)
    # 8: nothing here (the PostgreSQL backend's write counters)
    # 9: nothing here either: the ``terms`` table is new, made by SCHEMA
    # 10: the tables whose rows can be large as rowid tables (see the comment
    # on RECORDS), each copied whole; SCHEMA makes their indexes again. The
    # old table's pages are zeroed as they are freed: a record purged later
    # must leave no copy behind in the file's free pages.
    10: [
        "PRAGMA secure_delete=ON",
        *[
            stmt
            for name, (ddl, cols) in ROWID_TABLES.items()
            for stmt in (
                ddl.format(name=name).rstrip().rstrip(";"),  # (one an old store lacks)
                ddl.format(name=f"{name}_v10").rstrip().rstrip(";"),
                f"INSERT INTO {name}_v10 ({cols}) SELECT {cols} FROM {name}",
                f"DROP TABLE {name}",
                f"ALTER TABLE {name}_v10 RENAME TO {name}",
            )
        ],
        "PRAGMA secure_delete=OFF",
    ],
    # 11: nothing here: the ``jobs`` table is new, made by SCHEMA
    # 12: nothing here: the ``records_consolidated`` index is new, made by SCHEMA
}


def _found_version(db: sqlite3.Connection) -> int | None:
    """The store's version, or None for a file without a store in it yet."""
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    if "schema_version" in tables:
        row = db.execute("SELECT max(version) FROM schema_version").fetchone()
        if row is not None and row[0] is not None:
            return int(row[0])
    if "store_info" in tables:
        row = db.execute("SELECT value FROM store_info WHERE key='schema'").fetchone()
        if row is not None:
            return int(row[0])
    return None


def prepare(db: sqlite3.Connection, schema: str, where: str) -> None:
    """Create the store or upgrade it to `CURRENT`, all in one write transaction.

    ``schema`` is the current schema as ``CREATE ... IF NOT EXISTS`` statements.
    """
    if _found_version(db) == CURRENT:
        return  # nothing to write: opening never waits for another writer's lock
    db.execute("BEGIN IMMEDIATE")
    try:
        stmts, versions = plan(_found_version(db), STEPS, schema, where)
        for stmt in [*stmts, VERSION_TABLE]:
            db.execute(stmt)
        now = time.time()
        for v in versions:
            db.execute("INSERT INTO schema_version VALUES (?, ?)", (v, now))
        db.execute("INSERT OR REPLACE INTO store_info VALUES ('schema', ?)", (str(CURRENT),))
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise


READS_AS_IS = 9
"""The oldest version a read-only open takes as it is: the steps since change
only how rows are laid out (version 10), not what the statements read."""


def check_readonly(db: sqlite3.Connection, where: str) -> None:
    """A store opened read-only cannot be upgraded: it must be at `CURRENT`, or
    at a version whose steps since change only the layout (`READS_AS_IS`)."""
    found = _found_version(db)
    if found is None:
        raise StorageError(f"{where} has no schema version; it is not a branchmem store")
    if not READS_AS_IS <= found <= CURRENT:
        steps_to_apply(found, where)  # a newer store: refused with the reason
        raise StorageError(
            f"{where} has schema version {found}; open it once without readonly=True "
            f"to upgrade it to version {CURRENT}"
        )
