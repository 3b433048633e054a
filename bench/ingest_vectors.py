"""Ingest with vectors: records and their given vectors into a store, against
a plain table and, where installed, two vector stores, side by side.

    python bench/ingest_vectors.py                  # 100,000 records, 384-d, 3 runs
    python bench/ingest_vectors.py --records 20000
    python bench/ingest_vectors.py --smoke          # 2,000 records, one run (seconds)

The same texts and the same vectors (random 384-d float32, given by an
embedder that looks them up) each way, in batches of 10,000:

* branchmem: ``add_memories`` on one chain, then ``prepare`` (each record's
  vector stored, and its keyword tokens: the store keeps both for the first
  search of any later process); printed apart, and together.
* floor: a plain ``executemany`` of (id, text, vector blob) into a SQLite
  table with a primary key, one transaction a batch.
* ``sqlite-vec`` (a ``vec0`` table beside a text table) and ``lancedb`` (one
  table), when their packages are installed (not dependencies of branchmem:
  ``pip install sqlite-vec lancedb`` to compare). Neither gates by branch,
  nor tokenizes for keyword search.

Records per second; ratios against the floor measured in the same run.
"""

from __future__ import annotations

import argparse
import shutil
import sqlite3
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from ann_recall import DIM, Given
from branchmem import Store
from branchmem.retrieval.search import prepare

BATCH = 10_000


def data(n: int) -> tuple[list[str], Any]:
    import numpy as np

    rng = np.random.default_rng(1)
    words = ["用户", "喜欢", "杭州", "搬家", "预算", "python", "meeting", "flight", "doctor", "cat"]
    texts = [
        " ".join(words[j] for j in rng.integers(0, len(words), 8)) + f" #{i}" for i in range(n)
    ]
    vecs = rng.normal(size=(n, DIM)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    return texts, vecs


def ours(tmp: Path, texts: list[str], vecs: Any) -> tuple[float, float]:
    emb = Given("given-384", dict(zip(texts, vecs, strict=True)))
    with Store(tmp / "store.db") as s:
        s.add_events([{"id": "e0"}])
        t = time.perf_counter()
        for i in range(0, len(texts), BATCH):
            s.add_memories([{"content": c, "sources": ["e0"]} for c in texts[i : i + BATCH]])
        add = time.perf_counter() - t
        t = time.perf_counter()
        prepare(s, at="e0", embedder=emb)
        return add, time.perf_counter() - t


def floor(tmp: Path, texts: list[str], vecs: Any) -> float:
    db = sqlite3.connect(tmp / "plain.db")
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("CREATE TABLE docs (id TEXT PRIMARY KEY, content TEXT, vec BLOB)")
    t = time.perf_counter()
    for i in range(0, len(texts), BATCH):
        with db:
            db.executemany(
                "INSERT INTO docs VALUES (?, ?, ?)",
                (
                    (f"m{j}", texts[j], vecs[j].tobytes())
                    for j in range(i, min(i + BATCH, len(texts)))
                ),
            )
    db.close()
    return time.perf_counter() - t


def sqlite_vec(tmp: Path, texts: list[str], vecs: Any) -> float | None:
    try:
        import sqlite_vec as sv
    except ImportError:
        return None
    db = sqlite3.connect(tmp / "vec.db")
    if not hasattr(db, "enable_load_extension"):  # a Python built without it
        db.close()
        return None
    db.enable_load_extension(True)
    sv.load(db)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute(f"CREATE VIRTUAL TABLE v USING vec0(embedding float[{DIM}])")
    db.execute("CREATE TABLE docs (id INTEGER PRIMARY KEY, content TEXT)")
    t = time.perf_counter()
    for i in range(0, len(texts), BATCH):
        rows = range(i, min(i + BATCH, len(texts)))
        with db:
            db.executemany("INSERT INTO docs VALUES (?, ?)", ((j, texts[j]) for j in rows))
            db.executemany(
                "INSERT INTO v (rowid, embedding) VALUES (?, ?)",
                ((j, vecs[j].tobytes()) for j in rows),
            )
    db.close()
    return time.perf_counter() - t


def lance(tmp: Path, texts: list[str], vecs: Any) -> float | None:
    try:
        import lancedb
    except ImportError:
        return None
    db = lancedb.connect(str(tmp / "lance"))
    table = None
    t = time.perf_counter()
    for i in range(0, len(texts), BATCH):
        rows = [
            {"id": f"m{j}", "content": texts[j], "vector": vecs[j]}
            for j in range(i, min(i + BATCH, len(texts)))
        ]
        if table is None:
            table = db.create_table("docs", data=rows)
        else:
            table.add(rows)
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--records", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--smoke", action="store_true", help="2,000 records, one run")
    args = ap.parse_args()
    n, repeat = (2000, 1) if args.smoke else (args.records, args.repeat)
    texts, vecs = data(n)
    rates: dict[str, list[float]] = {}
    ratios: dict[str, list[float]] = {}
    for _ in range(repeat):
        tmp = Path(tempfile.mkdtemp(prefix="bm-ingest-"))
        try:
            add, prep = ours(tmp, texts, vecs)
            base = floor(tmp, texts, vecs)
            got = {
                "branchmem add_memories": add,
                "branchmem prepare (vectors + tokens)": prep,
                "branchmem, both": add + prep,
                "sqlite-vec": sqlite_vec(tmp, texts, vecs),
                "lancedb": lance(tmp, texts, vecs),
            }
            for name, secs in got.items():
                if secs is not None:
                    rates.setdefault(name, []).append(n / secs)
                    ratios.setdefault(name, []).append(secs / base)
            rates.setdefault("floor", []).append(n / base)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    print(f"ingest of {n:,} records with {DIM}-d vectors, batches of {BATCH:,}, {repeat} run(s):")
    fl = rates["floor"]
    print(f"  {'floor (plain executemany)':38} {min(fl):>9,.0f}-{max(fl):,.0f} records/s")
    for name in ("branchmem add_memories", "branchmem prepare (vectors + tokens)",
                 "branchmem, both", "sqlite-vec", "lancedb"):  # fmt: skip
        if name not in rates:
            print(f"  {name:38} not installed (or this Python cannot load it)")
            continue
        r, x = rates[name], ratios[name]
        print(
            f"  {name:38} {min(r):>9,.0f}-{max(r):,.0f} records/s, "
            f"time {min(x):.2f}-{max(x):.2f}x the floor"
        )


if __name__ == "__main__":
    main()
