"""The first search over a large visible set, and embedding a set, against floors.

1. State: a SQLite store of N visible records whose vectors and tokens are
   stored already; a fresh `Store` object on the file runs its first search
   (the gate read, tokens, the query's postings, the vector matrix, the
   fused top 10), against the floor of a persisted design: a plain SQLite
   file written beside it with the same vectors (one float32 blob a row) and
   the same texts in an FTS5 table, where a fresh connection reads every
   vector into one numpy matrix, takes one matvec and its top 10, and runs
   one FTS5 ``MATCH`` ranked by ``bm25()``. The same search with the stored
   tokens left unused (each text tokenized in the process, as before they
   were stored) is timed beside them, and so is the gate read alone
   (``memories(at)``) against a plain indexed ``SELECT`` of the same rows,
   and the first search through HTTP after ``branchmem serve`` starts on the
   file (`bench/server.py`'s ``serve``; timed from its first ``/healthz``).
2. Tokens: decoding each record's stored tokens (`retrieval.terms`) against
   tokenizing its text.
3. Embedding: the records' vectors made by the search cache
   (`RankCache.passage_vectors`, no store: normalising and keeping them),
   against the embedder's own ``embed_passages`` on the same texts.

Each pair is timed side by side, alternating, ``--repeat`` times; printed as
the range of the ratio (ours / floor)::

    python bench/first_search.py [--records 100000] [--repeat 3] [--smoke]
"""

from __future__ import annotations

import argparse
import random
import shutil
import sqlite3
import tempfile
import time
from pathlib import Path

from branchmem import HashingEmbedder, Store
from branchmem.retrieval import terms
from branchmem.retrieval.cache import RankCache
from branchmem.retrieval.search import prepare
from branchmem.retrieval.tokenize import get_tokenizer

WORDS = [
    "用户",
    "喜欢",
    "杭州",
    "成都",
    "搬家",
    "花生",
    "过敏",
    "下个月",
    "工作",
    "咖啡",
    "周末",
    "跑步",
    "python",
    "rust",
    "meeting",
    "tuesday",
    "blue",
    "cat",
    "dentist",
    "flight",
    "北京",
    "上海",
    "医生",
    "预约",
]


QUERY = "花生 过敏"


def texts(n: int) -> list[str]:
    rnd = random.Random(7)
    return [" ".join(rnd.choice(WORDS) for _ in range(10)) + f" #{i}" for i in range(n)]


def build(path: Path, n: int) -> None:
    """The store, and beside it the floor's plain file (`floor_path`)."""
    with Store(path) as s:
        s.add_events(
            [{"id": "e0"}] + [{"id": f"e{i}", "parent": f"e{i - 1}"} for i in range(1, 50)]
        )
        for i in range(0, n, 20_000):
            part = texts(n)[i : i + 20_000]
            s.add_memories([{"content": t, "sources": [f"e{j % 50}"]} for j, t in enumerate(part)])
        prepare(s, at="e49", embedder=HashingEmbedder())  # the vectors, stored
    src = sqlite3.connect(path)
    rows = src.execute(
        "SELECT r.content, v.vec FROM records r JOIN vectors v ON v.ns = r.ns AND v.id = r.id"
    ).fetchall()
    src.close()
    assert len(rows) == n
    db = sqlite3.connect(floor_path(path))
    db.execute("CREATE TABLE docs (id INTEGER PRIMARY KEY, vec BLOB)")
    db.execute("CREATE VIRTUAL TABLE fts USING fts5(content)")
    db.executemany(
        "INSERT INTO docs (id, vec) VALUES (?, ?)", ((i, v) for i, (_, v) in enumerate(rows))
    )
    db.executemany(
        "INSERT INTO fts (rowid, content) VALUES (?, ?)", ((i, c) for i, (c, _) in enumerate(rows))
    )
    db.commit()
    db.close()


def floor_path(path: Path) -> Path:
    return path.with_name(path.stem + "-floor.db")


def first_search(path: Path, stored_terms: bool = True) -> float:
    """The first search of a fresh `Store`; without ``stored_terms`` the
    stored tokens go unused and none are written (every text tokenized)."""
    real = terms.store_key
    if not stored_terms:
        terms.store_key = lambda tok: None  # type: ignore[assignment]
    try:
        t = time.perf_counter()
        with Store(path) as s:
            s.search(QUERY, at="e49", embedder=HashingEmbedder())
        return time.perf_counter() - t
    finally:
        terms.store_key = real  # type: ignore[assignment]


def decoding(path: Path, repeat: int) -> list[float]:
    """Decoding the stored tokens of every record / tokenizing their texts."""
    tok = get_tokenizer()
    db = sqlite3.connect(path)
    blobs = [bytes(b) for (b,) in db.execute("SELECT toks FROM terms")]
    contents = [c for (c,) in db.execute("SELECT content FROM records")]
    db.close()
    out = []
    for _ in range(repeat):
        t = time.perf_counter()
        for c in contents:
            terms.stats_of(tok(c))
        base = time.perf_counter() - t
        t = time.perf_counter()
        for b in blobs:
            terms.decode(b)
        out.append((time.perf_counter() - t) / base)
    return out


def floor(path: Path) -> float:
    """A fresh connection to the plain file: every vector into one matrix, one
    matvec and its top 10, and one FTS5 ``MATCH`` ranked by ``bm25()``."""
    import numpy as np

    q = np.asarray(HashingEmbedder().embed_queries([QUERY])[0], dtype=np.float32)
    q /= np.linalg.norm(q) or 1.0
    t = time.perf_counter()
    db = sqlite3.connect(floor_path(path))
    blobs = [v for (v,) in db.execute("SELECT vec FROM docs")]
    mat = np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(blobs), -1)
    sims = mat @ q
    top = np.argpartition(-sims, 10)[:10]
    kw = db.execute(
        "SELECT rowid, bm25(fts) FROM fts WHERE fts MATCH ? ORDER BY bm25(fts) LIMIT 10",
        (" OR ".join(QUERY.split()),),
    ).fetchall()
    db.close()
    assert len(top) == 10 and kw
    return time.perf_counter() - t


def served_first_search(path: Path) -> float:
    """The first search through HTTP after a server restart: ``branchmem serve``
    started on the file (timed from its first answer to ``/healthz``), then
    one ``POST search`` timed end to end."""
    import httpx

    from server import serve  # bench/server.py

    proc, base = serve(str(path), "--embedder", "hashing")
    try:
        body = {"query": QUERY, "at": "e49", "k": 10}
        t = time.perf_counter()
        r = httpx.post(f"{base}/v1/namespaces/default/search", json=body, timeout=600)
        took = time.perf_counter() - t
        r.raise_for_status()
        assert r.json()["hits"], r.text
        return took
    finally:
        proc.terminate()
        proc.wait(30)


def gate_read(path: Path) -> tuple[float, float]:
    """A fresh `Store`'s ``memories(at)`` (every record is visible), and a
    fresh connection's plain indexed ``SELECT`` of the same rows and columns
    (`sqlrows.REC_COLS`), fetched as tuples: the rows found by the index on
    their positions and read in rowid order. (Left to the planner, the query
    walked the index on the records' ids and read the table's pages at
    random, twice as slow: a floor that flattered the gate.)"""
    from branchmem.backends.sqlrows import REC_COLS

    with Store(path) as s:
        t = time.perf_counter()
        n = len(s.memories(at="e49"))
        ours = time.perf_counter() - t
    db = sqlite3.connect(path)
    t = time.perf_counter()
    rows = db.execute(
        f"SELECT {REC_COLS} FROM records WHERE rowid IN "
        "(SELECT rowid FROM records INDEXED BY records_pos WHERE ns = 1 AND seg >= 0)"
    ).fetchall()
    plain = time.perf_counter() - t
    db.close()
    assert len(rows) == n, (len(rows), n)
    return ours, plain


def embedding(n: int, repeat: int) -> list[float]:
    from branchmem.model import Memory

    emb = HashingEmbedder()
    mems = [Memory(id=f"m{i}", content=t, sources=("e0",)) for i, t in enumerate(texts(n))]
    out = []
    for _ in range(repeat):
        t = time.perf_counter()
        emb.embed_passages([m.content for m in mems])
        base = time.perf_counter() - t
        t = time.perf_counter()
        RankCache().passage_vectors(emb, mems)
        out.append((time.perf_counter() - t) / base)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--records", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--smoke", action="store_true", help="2,000 records, one repeat")
    args = ap.parse_args()
    n, repeat = (2000, 1) if args.smoke else (args.records, args.repeat)
    tmp = Path(tempfile.mkdtemp(prefix="bm-first-"))
    try:
        path = tmp / "s.db"
        build(path, n)
        size = sum(f.stat().st_size for f in tmp.glob("s.db*"))  # (with its -wal, if any)
        floor_size = floor_path(path).stat().st_size
        print(
            f"file size per record: the store {size / n:,.0f} bytes (records, vectors, tokens, "
            f"indexes) vs the floor's plain file {floor_size / n:,.0f} bytes "
            f"(vector blobs and FTS5) ratio {size / floor_size:.2f}x"
        )
        ours, plain, base = [], [], []
        for _ in range(repeat):
            ours.append(first_search(path))
            plain.append(first_search(path, stored_terms=False))
            base.append(floor(path))
        served = [served_first_search(path) for _ in range(repeat)]
        ratios = [o / b for o, b in zip(ours, base, strict=True)]
        before = [o / b for o, b in zip(plain, base, strict=True)]
        print(
            f"first search, {n:,} visible, vectors and tokens stored: "
            f"{min(ours):.2f}-{max(ours):.2f} s vs floor (vectors + matvec + FTS5 bm25) "
            f"{min(base):.2f}-{max(base):.2f} s "
            f"ratio {min(ratios):.2f}-{max(ratios):.2f}x (goal <= 3x)"
        )
        print(
            f"  the same, tokens made in process: {min(plain):.2f}-{max(plain):.2f} s ratio "
            f"{min(before):.2f}-{max(before):.2f}x"
        )
        sr = [o / b for o, b in zip(served, base, strict=True)]
        print(
            f"  the same through HTTP after a server restart: {min(served):.2f}-"
            f"{max(served):.2f} s ratio {min(sr):.2f}-{max(sr):.2f}x"
        )
        reads = [gate_read(path) for _ in range(repeat)]
        gr = [o / p for o, p in reads]
        print(
            f"gate read (memories(at), {n:,} visible): "
            f"{min(o for o, _ in reads):.2f}-{max(o for o, _ in reads):.2f} s vs a plain "
            f"indexed SELECT of the same rows {min(p for _, p in reads):.2f}-"
            f"{max(p for _, p in reads):.2f} s ratio {min(gr):.2f}-{max(gr):.2f}x (goal <= 2x)"
        )
        dr = decoding(path, repeat)
        print(f"decoding stored tokens vs tokenizing: ratio {min(dr):.2f}-{max(dr):.2f}x")
        er = embedding(n, repeat)
        print(
            f"embedding {n:,} records vs the embedder's batch encode: ratio "
            f"{min(er):.2f}-{max(er):.2f}x (goal <= 1.2x)"
        )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
