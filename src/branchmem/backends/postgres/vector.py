"""pgvector on the PostgreSQL backend: record vectors in a ``halfvec(d)``
column (``vector(d)`` before pgvector 0.7) with an HNSW index, where the
server has the extension.

Found without configuration: when a store first writes or searches vectors,
the backend looks for the ``vector`` extension in the database, and creates
it when the server offers it (``pg_available_extensions``) and the user may;
``BRANCHMEM_PGVECTOR=off`` in the environment keeps it unused. Without it,
vectors stay in the ``vectors`` table only (float32 bytes) and searches rank
in Python, as always.

With it, each embedder and dimension gets a table of its own, hash-partitioned
by namespace (`postgres.vector_tables`: what it holds, how it is made, filled
and indexed). Writes go to ``vectors`` and to that table in the caller's
transaction.

`nearest` is the search side (`branchmem.retrieval.server_ann`): the
namespace's vectors nearest to the query, restricted in the same statement
to records whose index position lies in the anchor's ranges (a superset of
the gate's answer: the caller keeps only what the gate returned), tested on
the row's own copy of its position.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Sequence
from typing import Any

from ..sqlrows import SEP
from .meta import PgMeta
from .sql import IDS
from .vector_tables import MAX_DIM, Extension, column_kind, ensure, kind_of, literal, version

ENV = "BRANCHMEM_PGVECTOR"
"""Set to ``off`` (or ``0``) to leave pgvector unused on a server that has it."""


EF_SEARCH = 64
"""``hnsw.ef_search`` of a search with an iterative scan (pgvector 0.8 and later)."""


def _wanted() -> bool:
    return os.environ.get(ENV, "").strip().lower() not in ("off", "0", "no", "false")


class PgVectors(PgMeta):
    """`PgMeta` with vectors mirrored into pgvector tables where the server has it."""

    def pgvector(self) -> Extension | None:
        """The ``vector`` extension this store uses (created if the server
        offers it and it is missing), or None: looked up once per backend."""
        found = self.__dict__.get("_pgv_ext", False)
        if found is not False:
            return found  # type: ignore[no-any-return]
        ext = _detect(self._pool) if _wanted() else None
        self.__dict__["_pgv_ext"] = ext
        self.__dict__.setdefault("_pgv_tables", {})
        return ext

    def citus(self) -> bool:
        """Is the database a Citus coordinator (the ``citus`` extension, as
        the store found it when opened)?"""
        return self._citus

    def vector_table(self, embedder: str, dim: int) -> str | None:
        """The table holding ``embedder``'s ``dim``-dimensional vectors (made and
        filled from the stored ones on first need), or None
        without pgvector or for more dimensions than its index takes."""
        ext = self.pgvector()
        if ext is None or not 0 < dim <= MAX_DIM[column_kind(ext)]:
            return None
        tables: dict[tuple[str, int], str | None] = self.__dict__["_pgv_tables"]
        if (embedder, dim) not in tables:
            import psycopg

            try:
                tables[(embedder, dim)] = ensure(self._pool, ext, embedder, dim, self.citus())
            except psycopg.Error:
                # Not made (no right to, say): these vectors stay in ``vectors``
                # only, ranked in process.
                tables[(embedder, dim)] = None
        return tables[(embedder, dim)]

    def put_vectors(self, ns: str, embedder: str, rows: list[tuple[str, str, bytes]]) -> None:
        dims = {len(r[2]) // 4 for r in rows}
        # Made (on its own connection) before this transaction writes any row
        # that the table's fill would wait for.
        tabs = {d: self.vector_table(embedder, d) for d in dims}
        if not rows:
            return
        stored = {
            r[0]: (r[1], r[2])
            for r in self._by_key("id, seg, pos", "records", "id", ns, [r[0] for r in rows])
        }
        keep = [r for r in rows if r[0] in stored]
        self._insert(
            "vectors", "embedder, id, digest, vec", "text, text, text, bytea", ns,
            [(embedder, *r) for r in keep],
            " ON CONFLICT (ns, embedder, id) DO UPDATE SET digest = excluded.digest, "
            "vec = excluded.vec",
        )  # fmt: skip
        ext = self.pgvector()
        for d, tab in tabs.items():
            if tab is None or ext is None:
                continue
            same = [
                (embedder, i, g, *stored[i], literal(v)) for i, g, v in keep if len(v) // 4 == d
            ]
            typ = f"{ext.schema}.{kind_of(tab)}"
            self._insert(
                tab, "embedder, id, digest, seg, pos, vec", f"text, text, text, int8, int8, {typ}",
                ns, same,
                " ON CONFLICT (ns, id) DO UPDATE SET digest = excluded.digest, vec = excluded.vec, "
                "seg = excluded.seg, pos = excluded.pos",
            )  # fmt: skip

    def delete_records(self, ns: str, ids: list[str]) -> None:
        self._delete_copies(ns, f"id = {IDS}", ids)
        super().delete_records(ns, ids)

    def drop_namespace(self, ns: str) -> None:
        self._delete_copies(ns, "", [])
        super().drop_namespace(ns)

    def _delete_copies(self, ns: str, where: str, ids: list[str]) -> None:
        """On Citus, delete the pgvector copies of what is purged (of ``ids``
        by ``where``, or of the whole namespace) from every registered table,
        before their ``vectors`` rows. Elsewhere the tables' foreign key
        cascades; on Citus it does where a table is distributed beside
        ``vectors``, but not from a table left on the coordinator (as an
        earlier version made them), whose rows the workers' deletes never reach."""
        if (where and not ids) or not self.citus():
            return
        tabs = self._q("SELECT tab FROM vector_tables WHERE ns = %(ns)s ORDER BY tab", {"ns": ""})
        for (tab,) in tabs:
            sql = f"DELETE FROM {tab} WHERE ns = %(ns)s" + (f" AND {where}" if where else "")
            params: dict[str, Any] = {"ns": ns, "ids": SEP.join(ids)} if where else {"ns": ns}
            self._q(sql, params, defer=True)

    def _nearest_sql(
        self, ns: str, embedder: str, q: Sequence[float], ranges: dict[int, int], n: int
    ) -> tuple[str, dict[str, Any], list[str]] | None:
        """The statement of `nearest`, its parameters and the settings it runs
        under; None without a pgvector table."""
        tab = self.vector_table(embedder, len(q))
        ext = self.pgvector()
        if tab is None or ext is None:
            return None
        s = ext.schema
        sql = (
            # The range test on the row's own copy of its position; for a row
            # without one (written before its record was placed, or by an
            # older version) a subquery per row found, not a join: the
            # planner then keeps the HNSW scan as the driver (a join was
            # planned as a scan of the namespace's records, then a sort).
            f"SELECT v.id, v.digest FROM {tab} v WHERE v.ns = %(ns)s AND CASE WHEN v.seg "
            f"IS NULL THEN (SELECT {in_ranges('c')} FROM records c WHERE c.ns = %(ns)s "
            f"AND c.id = v.id) ELSE {in_ranges('v')} END "
            f"ORDER BY v.vec OPERATOR({s}.<=>) %(q)s::{s}.{kind_of(tab)} LIMIT %(n)s"
        )
        params = {
            "ns": ns,
            "r": ranges_param(ranges),
            "q": "[" + ",".join(map(repr, q)) + "]",
            "n": n,
        }
        iterative = version(ext) >= (0, 8)
        # On Citus the statement runs on the namespace's worker, and SET LOCAL
        # stays on the coordinator unless told to go along (Citus's default
        # is ``none``): the worker then planned an exact scan and a sort.
        sets = ["SET LOCAL citus.propagate_set_commands = 'local'"] if self.citus() else []
        # The candidate list of the first pass: an iterative scan goes on past
        # it (64 took 0.83x the time of 120 for the same recall, at 1M/100k);
        # without one, the scan returns no more than it.
        ef = EF_SEARCH if iterative else max(40, min(n, 1000))
        sets.append(f"SET LOCAL hnsw.ef_search = {ef}")
        # The HNSW scan, whatever the estimates: without them a table was
        # planned as a scan of the namespace's key, then a sort of every
        # vector (200 ms for 30,000); a plan needing a sort is the one
        # way to order by distance but the index.
        sets += [f"SET LOCAL enable_{x} = off" for x in ("seqscan", "bitmapscan", "sort")]
        if iterative:
            sets.append("SET LOCAL hnsw.iterative_scan = relaxed_order")
        return sql, params, sets

    def _run_nearest(self, sql: str, params: dict[str, Any], sets: list[str]) -> Any:
        if self._trace is not None:
            self._trace(sql, params)
        with self._pool.connection() as conn, conn.pipeline():  # one round trip
            conn.execute("BEGIN")
            for one in sets:
                conn.execute(one)
            cur = conn.execute(sql, params)
            conn.execute("COMMIT")
            return cur.fetchall()

    def nearest(
        self,
        ns: str,
        embedder: str,
        q: Sequence[float],
        ranges: dict[int, int],
        n: int,
    ) -> list[tuple[str, str]] | None:
        """``(id, digest)`` of (about) the ``n`` vectors of ``ns`` nearest to the
        unit vector ``q`` (cosine) among records whose index position is in
        ``ranges``, from the HNSW index with an iterative scan; None without a
        pgvector table for this embedder (made, from the vectors stored,
        if missing). Its own short read transaction."""
        made = self._nearest_sql(ns, embedder, q, ranges, n)
        if made is None:
            return None
        return [(r[0], r[1]) for r in self._run_nearest(*made)]

    def nearest_plan(
        self, ns: str, embedder: str, q: Sequence[float], ranges: dict[int, int], n: int
    ) -> tuple[bool, str] | None:
        """What the server's plan of `nearest`'s statement does, under the same
        settings (on Citus: the plan the worker runs): whether it scans an
        HNSW index, and in words (`plan_words`). For ``explain=True``."""
        made = self._nearest_sql(ns, embedder, q, ranges, n)
        if made is None:
            return None
        sql, params, sets = made
        rows = self._run_nearest("EXPLAIN (FORMAT JSON) " + sql, params, sets)
        plan = rows[0][0]
        return plan_words(json.loads(plan) if isinstance(plan, str) else plan)

    def vector_part_rows(self, ns: str, embedder: str, dim: int) -> int | None:
        """About how many rows the index scan of a search in ``ns`` steps
        through: the rows of the namespace's part of the pgvector table
        (PostgreSQL's estimate, ``reltuples``), at least the namespace's
        records; None without a table. One short read."""
        tab = self.vector_table(embedder, dim)
        if tab is None:
            return None
        sql = (
            "SELECT (SELECT max(seq) FROM records WHERE ns = %(ns)s), (SELECT c.reltuples "
            f"FROM pg_class c WHERE c.oid = (SELECT v.tableoid FROM {tab} v WHERE v.ns = %(ns)s "
            "LIMIT 1))"
        )
        if self._trace is not None:
            self._trace(sql, {"ns": ns})
        with self._pool.connection() as conn:
            mine, part = conn.execute(sql, {"ns": ns}).fetchone()
            conn.rollback()
        return max(int(mine or 0), int(part or 0))

    def vector_info(self) -> dict[str, Any]:
        """What `Store.info` says of vectors on this backend."""
        ext = self.pgvector()
        if ext is None:
            return {"pgvector": None, "ranking": "in process (numpy or Python)"}
        with self._pool.connection() as conn:
            rows = conn.execute(
                "SELECT embedder, dim, tab, (SELECT count(*) FROM pg_inherits "
                "WHERE inhparent = to_regclass(tab)) FROM vector_tables WHERE ns = '' ORDER BY tab"
            ).fetchall()
        return {
            "pgvector": ext.version,
            "ranking": "pgvector HNSW for large visible sets, gated; exact below",
            "tables": [
                {"embedder": e, "dim": d, "table": t, "type": kind_of(t), "partitions": p}
                for e, d, t, p in rows
            ],
        }


def in_ranges(alias: str) -> str:
    """SQL: the row ``alias``'s index position lies in the anchors' ranges, the
    ``r`` parameter (`ranges_param`)."""
    return f"{alias}.pos <= coalesce((%(r)s::jsonb ->> {alias}.seg::text)::int8, -1)"


def ranges_param(ranges: dict[int, int]) -> str:
    """The ``r`` parameter of `in_ranges`: segment -> last position, as JSON."""
    return json.dumps({str(k): v for k, v in ranges.items()})


def plan_words(plan: Any) -> tuple[bool, str]:
    """Whether an ``EXPLAIN (FORMAT JSON)`` plan scans an index in distance
    order (the HNSW scan: an index scan with an ``Order By``), and that scan
    or the plan's nodes in words. Citus nests the worker's plan in its own
    (``Remote Plan``): found there too.

    >>> plan_words([{"Plan": {"Node Type": "Limit", "Plans": [{"Node Type": "Index Scan",
    ...     "Index Name": "t_hnsw", "Order By": "(vec <=> q)"}]}}])
    (True, 'Index Scan using t_hnsw')
    >>> plan_words([{"Plan": {"Node Type": "Limit", "Plans": [{"Node Type": "Sort"}]}}])
    (False, 'Limit, Sort')
    """
    nodes: list[tuple[dict[str, Any], bool]] = []

    def walk(x: Any, remote: bool) -> None:
        if isinstance(x, dict):
            if "Node Type" in x:
                nodes.append((x, remote))
            for k, v in x.items():
                walk(v, remote or k == "Remote Plan")
        elif isinstance(x, list):
            for v in x:
                walk(v, remote)

    walk(plan, False)
    for node, remote in nodes:
        if "Index" in node["Node Type"] and node.get("Order By"):
            where = " on a worker" if remote else ""
            return True, f"{node['Node Type']} using {node.get('Index Name')}{where}"
    return False, ", ".join(str(n["Node Type"]) for n, _ in nodes)


_EXT = (
    "SELECT e.extversion, n.nspname FROM pg_extension e JOIN pg_namespace n "
    "ON n.oid = e.extnamespace WHERE e.extname = 'vector'"
)


def _detect(pool: Any) -> Extension | None:
    import psycopg

    with pool.connection() as conn:
        row = conn.execute(_EXT).fetchone()
        if row is None:
            offered = conn.execute(
                "SELECT 1 FROM pg_available_extensions WHERE name = 'vector'"
            ).fetchone()
            if offered is None:
                return None
            # No right to create it, or another opener did meanwhile: look again.
            with contextlib.suppress(psycopg.Error):
                conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
            row = conn.execute(_EXT).fetchone()
    return None if row is None else Extension(str(row[0]), str(row[1]))
