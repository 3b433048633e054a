"""The records whose meta names inputs (``consolidated_from``) are found through
an index of their own (`Backend.consolidations`), on every backend: a
retraction asks which consolidations list what it retracts, and reading
every record of the namespace for that made each retraction cost as much as
the namespace is large (half a second at 50,000 records on SQLite).

On SQLite the index is a partial one, made for stores written before it when
they are opened (schema version 12); a store of version 11 opened read-only
lacks it and answers the same by a scan."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

from branchmem import Store
from branchmem.backends.sqlite import SQLiteBackend

QUERY = "SELECT seq, id FROM records WHERE ns=? AND instr(meta, '\"consolidated_from\"') > 0"


def _fill(s: Store) -> None:
    s.add_events([{"id": "e1"}, {"id": "e2", "parent": "e1"}])
    s.add_memories(
        [
            {"id": "a", "content": "A", "sources": ["e1"]},
            {"id": "b", "content": "B", "sources": ["e2"]},
            {"id": "c", "content": "A and B", "sources": ["e1", "e2"],
             "meta": {"consolidated_from": ["a", "b"]}},
            {"id": "d", "content": "D", "sources": ["e2"], "meta": {"note": "plain"}},
            {"id": "f", "content": "A again", "sources": ["e1"],
             "meta": {"consolidated_from": ["a"]}},
        ]
    )  # fmt: skip


def test_the_consolidations_of_a_namespace_are_listed(open_store: Callable[..., Store]) -> None:
    s = open_store()
    _fill(s)
    b = s._engine.backend
    assert b.consolidations("default") == ["c", "f"]  # in write order
    assert b.consolidations("elsewhere") == []
    # A retraction of an input takes each consolidation that lists it down.
    s.retract("a", sources=["e2"])
    assert [m.id for m in s.memories(at="e2")] == ["b", "d"]
    # A purge of an input takes them with it, and out of the list.
    s.purge(memories=["b"])
    assert b.consolidations("default") == ["f"]
    assert "c" not in {m.id for m in s.records()}


def test_sqlite_reads_the_index_and_an_older_store_gets_it(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    with Store(path) as s:
        _fill(s)
    db = sqlite3.connect(path)
    plan = " ".join(str(r) for r in db.execute(f"EXPLAIN QUERY PLAN {QUERY}", (1,)))
    assert "records_consolidated" in plan, plan
    # As version 11 left it: no index. Opened read-only it scans; opened to
    # write, it is upgraded and the index holds the records stored before.
    db.execute("DROP INDEX records_consolidated")
    db.execute("DELETE FROM schema_version WHERE version = 12")
    db.execute("UPDATE store_info SET value='11' WHERE key='schema'")
    db.commit()
    ro = SQLiteBackend(str(path), readonly=True)
    assert ro.consolidations("default") == ["c", "f"]
    ro.close()
    with Store(path) as s:
        assert s._engine.backend.consolidations("default") == ["c", "f"]
    names = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='index'")}
    assert "records_consolidated" in names
    versions = [v for (v,) in db.execute("SELECT version FROM schema_version")]
    assert versions[-1] == 12
    db.close()
