"""Everything a store holds, as bytes to search for erased text: the SQLite
file and its write-ahead log, or every row of the PostgreSQL schema as text."""

from __future__ import annotations

import re
from pathlib import Path

from branchmem import Store


def stored_text(backend_name: str, store: Store) -> bytes | None:
    """The store's bytes (``None`` for the memory backend, which has none)."""
    b = store._engine.backend
    if backend_name == "sqlite":
        store.checkpoint()
        path = Path(b.path)  # type: ignore[attr-defined]
        return b"".join(
            Path(str(path) + s).read_bytes()
            for s in ("", "-wal", "-journal")
            if Path(str(path) + s).exists()
        )
    if backend_name in ("postgres", "pgvector"):
        from branchmem.backends.postgres.schema import TABLES

        tables = re.findall(r"CREATE TABLE IF NOT EXISTS (\w+)", TABLES)
        out = []
        with b._pool.connection() as conn:  # type: ignore[attr-defined]  # (on its schema)
            for t in tables:
                rows = conn.execute(f"SELECT t::text FROM {t} t").fetchall()
                out += [r[0].encode() for r in rows]
        return b"\n".join(out)
    return None
