"""bench/public_recall.py --consolidate: each group is consolidated at its tip
before its questions, and a hit on a merged record counts for the inputs it
hides (they no longer show), so a merge is measured, not lost."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

from branchmem.retrieval.embed import get_embedder
from branchmem_eval.public import Character, Passage, Question

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench" / "public_recall.py"


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("public_recall", BENCH)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _group() -> Character:
    texts = {
        "p1": "I never eat shellfish.",
        "p2": "I never eat shellfish!",  # a duplicate once end punctuation is folded
        "p3": "I keep a strictly vegan diet.",
    }
    asks = {"p1": "shellfish dinner", "p2": "eat shellfish", "p3": "vegan diet"}
    return Character(
        "explicit/lifestyle_dietary",
        tuple(Passage(i, "explicit", t) for i, t in texts.items()),
        tuple(Question(f"q-{i}", "explicit", asks[i], frozenset({i})) for i in texts),
    )


def test_a_merged_record_counts_for_its_inputs() -> None:
    bench = _bench()
    emb = bench.Memo(get_embedder("hashing"))
    merged: dict[str, int] = {}
    ranks = bench.run([_group()], emb, None, consolidate=True, merged=merged)
    assert merged == {"records": 1, "inputs": 2}
    for name in ("search", "search-off"):
        assert ranks[name].count() == 3
        assert ranks[name].recall(10) == 1.0, name
    plain: dict[str, int] = {}
    ranks = bench.run([_group()], emb, None, merged=plain)
    assert plain == {} and ranks["search-off"].recall(10) == 1.0


def test_the_bench_prints_what_consolidation_merged(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "TMPDIR": str(tmp_path)}
    args = [sys.executable, str(BENCH), "--smoke", "--format", "prefeval", "--consolidate"]
    run = subprocess.run(args, capture_output=True, text=True, env=env, timeout=120)
    assert run.returncode == 0, run.stderr
    assert re.search(r"^consolidation merged \d+ memories into \d+ records$", run.stdout, re.M)
    assert re.search(r"^all +\d+  search +\d\.\d{3} +\d\.\d{3} +\d\.\d{3}$", run.stdout, re.M)
