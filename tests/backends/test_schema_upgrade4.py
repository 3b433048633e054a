"""A version-4 SQLite store (records in a rowid table) upgrades to records
unique by ``(ns, seq)`` (version 5 made that their clustered key, version 10 a
unique key of a rowid table again, for large rows: schema.py).

The fixture was written by the version-4 code through the public API
(`fixtures/make_store_schema4.py`, the same writes as the version-3 fixture);
the same writes replayed into a new store give the answers the upgraded file
must give, and every record keeps its seq.
"""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path
from typing import Any

from test_schema_upgrade3 import ANCHORS, _answers, _version
from test_schema_upgrade3 import replayed as replayed  # the fixture, shared

from branchmem import Store
from branchmem.backends.migrations import CURRENT

FIXTURE = Path(__file__).parents[1] / "fixtures" / "store-schema4.db"


def _records(path: Path) -> list[Any]:
    with sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True) as db:
        rows = db.execute("SELECT * FROM records ORDER BY ns, seq").fetchall()
    db.close()
    return rows


def _records_sql(path: Path) -> str:
    with sqlite3.connect(path) as db:
        (sql,) = db.execute("SELECT sql FROM sqlite_master WHERE name='records'").fetchone()
    db.close()
    return str(sql)


def test_the_fixture_is_a_version_4_store() -> None:
    assert _version(FIXTURE) == 4
    assert "WITHOUT ROWID" not in _records_sql(FIXTURE)


def test_a_version_4_store_upgrades_and_keeps_every_answer(
    tmp_path: Path, replayed: dict[str, Any]
) -> None:
    path = tmp_path / "v4.db"
    shutil.copyfile(FIXTURE, path)
    before = _records(path)
    with Store(path, clock=lambda: 3000.0) as store:
        assert _answers(store) == replayed
    assert _version(path) == CURRENT
    assert "WITHOUT ROWID" not in _records_sql(path)
    assert "PRIMARY KEY (ns, seq)" in _records_sql(path)
    assert _records(path) == before  # every row, every column, the same seqs
    with sqlite3.connect(path) as db:
        names = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='index'")}
    db.close()
    assert {"records_pos", "records_target", "records_timed"} <= names
    assert "records_seq" not in names  # the unique key now
    # New writes continue each namespace's count and are seen by the gate.
    top = {ns: max(r[1] for r in before if r[0] == ns) for ns in {r[0] for r in before}}
    with Store(path, clock=lambda: 3000.0) as store:
        d = store.add_memory("新的", sources=["e1"], id="new-d")
        o = store.add_memory("new", sources=["x1"], id="new-o", namespace="other")
        assert sorted([d.seq, o.seq]) == sorted(t + 1 for t in top.values())
        assert [m.id for m in store.memories(at="e1")][-1] == "new-d"
        assert [m.id for m in store.memories(at="x1", namespace="other")][-1] == "new-o"
        for ns in ANCHORS:
            seqs = [m.seq for m in store.records(namespace=ns)]
            assert seqs == sorted(seqs)
