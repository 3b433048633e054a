"""A version-3 SQLite store (seqs counted across the file) upgrades to per-namespace seqs.

The fixture was written by the version-3 code through the public API
(`fixtures/make_store_schema3.py`); the same writes replayed into a new store
give the answers the upgraded file must give.
"""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from branchmem import Memory, StorageError, Store
from branchmem.backends.migrations import CURRENT
from branchmem.backends.sqlite import schema as sqlite_schema
from fixtures import make_store_schema3 as history

FIXTURE = Path(__file__).parents[1] / "fixtures" / "store-schema3.db"
ANCHORS = {"default": ["e1", "e2", "e2b", "main", "late-child"], "other": ["x1"]}


def _copy(tmp_path: Path) -> Path:
    path = tmp_path / "v3.db"
    shutil.copyfile(FIXTURE, path)
    return path


def _mem(m: Memory) -> tuple[Memory, float, str | None]:
    return (m, m.created_at, m.via)  # a Memory compares without these


def _answers(s: Store) -> dict[str, Any]:
    """Everything a caller can ask the fixture's store, seqs aside."""
    out: dict[str, Any] = {}
    for ns, anchors in ANCHORS.items():
        out[ns] = {
            "records": [_mem(m) for m in s.records(namespace=ns)],
            "events": s.events(namespace=ns),
            "audit": [(a.at, a.op, a.ids, a.actor, a.seq) for a in s.audit(ns)],
            "branches": s.branches(namespace=ns),
            "snapshots": s.snapshots(namespace=ns),
            "at": {
                a: [_mem(m) for m in s.memories(at=a, namespace=ns, now=2000.0)] for a in anchors
            },
            "archived": {
                a: [m.id for m in s.memories(at=a, namespace=ns, include_archived=True)]
                for a in anchors
            },
            "search": [
                h.memory.id
                for h in s.search("搬家 tenant", at=anchors[0], namespace=ns, embedder="hashing")
            ],
        }
    out["history"] = s.history("main")
    out["gone"] = s.audit("gone")
    return out


@pytest.fixture(scope="module")
def replayed() -> dict[str, Any]:
    with history.patched_ids():
        store = Store(clock=history.clock())
        history.write_history(store)
    return _answers(store)


def _dump(path: Path) -> list[Any]:
    with sqlite3.connect(path) as db:
        tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master ORDER BY name")]
        rows = [
            (t, sorted(map(repr, db.execute(f"SELECT * FROM {t}"))))
            for t, kind in db.execute("SELECT name, type FROM sqlite_master ORDER BY name")
            if kind == "table"
        ]
    db.close()
    return [tables, rows]


def _version(path: Path) -> int:
    assert path.is_file(), f"{path} is missing (it is committed with git add -f: *.db is ignored)"
    with sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True) as db:
        (v,) = db.execute("SELECT max(version) FROM schema_version").fetchone()
    db.close()
    return int(v)


def test_the_fixture_is_a_version_3_store() -> None:
    assert _version(FIXTURE) == 3


def test_a_version_3_store_upgrades_and_keeps_every_answer(
    tmp_path: Path, replayed: dict[str, Any]
) -> None:
    path = _copy(tmp_path)
    with Store(path, clock=lambda: 3000.0) as store:
        assert _answers(store) == replayed
        # Seqs now count within each namespace, in the order they were written.
        for ns in ANCHORS:
            seqs = [m.seq for m in store.records(namespace=ns)]
            assert seqs == list(range(1, len(seqs) + 1))
        # New writes continue each namespace's own count.
        store.add_memory("新的", sources=["e1"], id="new-d")
        store.add_memory("new", sources=["x1"], id="new-o", namespace="other")
        assert store.get_memory("new-d").seq == len(replayed["default"]["records"]) + 1
        assert store.get_memory("new-o", namespace="other").seq == 4
    assert _version(path) == CURRENT


def test_the_upgrade_is_one_transaction(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _copy(tmp_path)
    before = _dump(path)
    last = max(sqlite_schema.STEPS)
    steps = {**sqlite_schema.STEPS, last: [*sqlite_schema.STEPS[last], "CREATE TABLE broken (x"]}
    monkeypatch.setattr(sqlite_schema, "STEPS", steps)
    with pytest.raises(StorageError):
        Store(path)
    assert _dump(path) == before  # every statement of the upgrade was rolled back
    monkeypatch.undo()
    with Store(path) as store:
        assert [m.seq for m in store.records(namespace="other")] == [1, 2, 3]
