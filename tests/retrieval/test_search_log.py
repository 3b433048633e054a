"""The query log, replay, and Recall@K over labelled sets (API and CLI)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from branchmem import InvalidInput, QueryLog, Store
from branchmem.cli import main
from branchmem.retrieval import replay
from branchmem_eval import LabelledQuery, read_labelled, recall

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "bench" / "data" / "recall-dev.jsonl"


def seeded(path: Path) -> Store:
    store = Store(path)
    store.add_events([{"id": "e1"}, {"id": "e2", "parent": "e1"}, {"id": "e2b", "parent": "e1"}])
    store.add_memory("用户下个月搬去成都", sources=["e2"], id="cd")
    store.add_memory("用户下个月搬去杭州", sources=["e2b"], id="hz")
    store.add_memory("用户对花生过敏", sources=["e1"], id="peanut", key="allergy")
    return store


def test_log_records_what_is_needed_to_replay(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = seeded(tmp_path / "s.db")
    log = tmp_path / "q.jsonl"
    hits = store.search("搬去杭州", at=["e2b", "e2"], k=3, embedder="hashing", log=log)
    [entry] = list(QueryLog(log).entries())
    assert entry["anchors"] == ["e2b", "e2"]
    assert entry["embedder"] == "hashing-256" and entry["tokenizer"] == "stem"
    assert entry["now"] > 0 and entry["k"] == 3 and entry["mode"] == "hybrid"
    assert [h["id"] for h in entry["hits"]] == [h.memory.id for h in hits]
    assert [h["via"] for h in entry["hits"]] == [h.via for h in hits]
    assert entry["hits"][0]["parts"] == hits[0].parts
    report = replay(store, log)
    assert report.searches == 1 and report.changes == ()
    store.close()
    capsys.readouterr()
    assert main(["replay", str(log), "--db", str(tmp_path / "s.db")]) == 0
    assert capsys.readouterr().out == "1 search replayed, 0 changed\n"


def test_replay_reports_changed_results(tmp_path: Path) -> None:
    store = seeded(tmp_path / "s.db")
    log = tmp_path / "q.jsonl"
    store.search("花生", at="e2b", k=2, mode="keyword", log=log)
    store.search("杭州", at="e2b", k=2, embedder="hashing", log=log)
    store.add_memory("用户其实对花生和杏仁都过敏", sources=["e2b"], id="nuts")
    report = replay(store, log)
    assert report.searches == 2
    [change] = [c for c in report.changes if c.query == "花生"]
    assert change.added == ("nuts",)
    assert "added nuts" in str(change)
    # the CLI says the same and exits 1
    store.close()
    assert main(["replay", str(log), "--db", str(tmp_path / "s.db")]) == 1


def test_replay_rejects_what_is_not_a_log(tmp_path: Path) -> None:
    store = seeded(tmp_path / "s.db")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"query": "x"}\n', encoding="utf-8")
    with pytest.raises(InvalidInput, match="not a logged search"):
        replay(store, bad)
    bad.write_text("not json\n", encoding="utf-8")
    with pytest.raises(InvalidInput, match="not a JSON line"):
        replay(store, bad)


def test_cli_search_prints_hits_and_explanations(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    seeded(tmp_path / "s.db").close()
    db = str(tmp_path / "s.db")
    assert main(["search", "花生", "--db", db, "--at", "e2b", "--embedder", "hashing"]) == 0
    out = capsys.readouterr().out
    assert "peanut" in out and "via e2b" in out and "cd" not in out.split()
    args = ["search", "花生", "--db", db, "--at", "e2b", "--mode", "keyword", "--json"]
    assert main([*args, "--explain", "--meta", "x=1"]) == 0
    assert capsys.readouterr().out == ""
    assert main([*args, "--explain", "--kind", "semantic", "--key-prefix", "all"]) == 0
    [line] = capsys.readouterr().out.splitlines()
    hit = json.loads(line)
    assert hit["memory"]["id"] == "peanut" and hit["explanation"]["visibility"]["visible"]
    assert main(["search", "花生", "--db", db, "--at", "nowhere", "--mode", "keyword"]) == 1
    assert main([*args, "--meta", "novalue"]) == 1
    # one scope weight per anchor, or a clear error
    assert main([*args, "--scope-weight", "0.5"]) == 0
    assert json.loads(capsys.readouterr().out)["score"] == pytest.approx(hit["score"] * 0.5)
    assert main([*args, "--scope-weight", "1", "--scope-weight", "2"]) == 1
    assert "one per anchor" in capsys.readouterr().err


def test_recall_counts_the_first_relevant_hit() -> None:
    store = Store()
    store.add_event("e1")
    for i, text in enumerate(["预算三千", "杭州的房子", "杭州 预算"]):
        store.add_memory(text, sources=["e1"], id=f"m{i}")
    qs = [
        LabelledQuery("a", "default", ("e1",), "杭州预算", expected_ids=("m2",)),
        LabelledQuery("b", "default", ("e1",), "预算", expected_keywords=("三千",)),
        LabelledQuery("c", "default", ("e1",), "成都", expected_ids=("m1",)),
    ]
    row = recall(store, qs, mode="keyword", ks=(1, 2))
    assert row.queries == 3 and row.embedder == "-"
    # "a" first at rank 1; "b" at rank 2 (the shorter m2 also holds 预算); "c" never
    assert row.recall == {1: 1 / 3, 2: 2 / 3}
    assert row.mrr == pytest.approx((1 + 1 / 2 + 0) / 3)


def test_labelled_set_errors_say_what_is_wrong(tmp_path: Path) -> None:
    f = tmp_path / "set.jsonl"
    f.write_text('{"type": "query", "at": "e1", "query": "x"}\n', encoding="utf-8")
    with pytest.raises(InvalidInput, match="expected_ids or expected_keywords"):
        read_labelled(f)
    f.write_text('{"type": "thing"}\n', encoding="utf-8")
    with pytest.raises(InvalidInput, match="type event, memory or query"):
        read_labelled(f)


def test_shipped_set_is_what_the_builder_makes() -> None:
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import build_recall_set
    finally:
        sys.path.remove(str(ROOT / "bench"))
    lines = [json.dumps(d, ensure_ascii=False, sort_keys=True) for d in build_recall_set.build()]
    assert SHIPPED.read_text(encoding="utf-8").splitlines() == lines


def test_cli_eval_recall_on_the_shipped_set(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["eval", "recall", str(SHIPPED), "--embedder", "hashing", "--json"]
    assert main(args) == 0
    rows = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [(r["embedder"], r["mode"]) for r in rows] == [
        ("-", "keyword"),
        ("hashing-256", "hybrid"),
        ("hashing-256", "vector"),
    ]
    data = read_labelled(SHIPPED)
    assert all(r["queries"] == len(data.queries) >= 25 for r in rows)
    hybrid = rows[1]
    # Numbers reported in docs/retrieval.md; a change here must update that page.
    assert hybrid["recall@5"] == pytest.approx(1.0)
    assert hybrid["mrr"] == pytest.approx(0.7598, abs=1e-3)
