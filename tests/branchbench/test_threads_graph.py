"""The threads split (format v1.1 ``heads``, rule 8) and the graph split.

Counts are pinned as in ``test_data.py``: a change to a split changes every
published figure, so it must be deliberate.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from test_systems import contexts

from branchbench.frozen import verify_split
from branchbench.metrics import score
from branchbench.rules import validate_scenario
from branchbench.scenario import Scenario, load_split, scenario_from_dict, split_dir
from branchbench.validate import validate_dir

EXPECTED = {"threads": (6, 22), "graph": (6, 18)}  # split: (scenarios, questions)

TWO_THREADS: dict[str, Any] = {
    "id": "threads-x",
    "fork_type": "edit",
    "title": "",
    "events": [
        {"id": "a1", "parent": None, "role": "user", "content": "我对花生过敏。"},
        {"id": "a2", "parent": "a1", "role": "user", "content": "我想去深圳。"},
        {"id": "a2b", "parent": "a1", "role": "user", "content": "我想去苏州。"},
        {"id": "b1", "parent": None, "role": "user", "content": "帮我订票。"},
    ],
    "anchor": "b1",
    "heads": ["a2b"],
    "questions": [
        {"id": "q1", "type": "leak", "question": "我想去哪？", "answer_any": ["苏州"],
         "forbidden_any": ["深圳"]},
        {"id": "q2", "type": "retain", "question": "我对什么过敏？", "answer_any": ["花生"]},
    ],
}  # fmt: skip


def _rules(data: dict[str, Any]) -> list[int]:
    return [v.rule for v in validate_scenario(scenario_from_dict(data))]


@pytest.mark.parametrize("split", sorted(EXPECTED))
def test_split_is_valid_frozen_and_counted(split: str) -> None:
    assert validate_dir(split_dir(split), manifest=True) == []
    assert verify_split(split) == split_dir(split)
    scenarios = load_split(split_dir(split))
    assert (len(scenarios), sum(len(s.questions) for s in scenarios)) == EXPECTED[split]
    assert all(any(q.type == "leak" for q in s.questions) for s in scenarios)


def test_every_threads_scenario_asks_across_threads() -> None:
    for s in load_split(split_dir("threads")):
        assert s.heads, s.id
        own = set(Scenario.path_ids(_without_heads(s)))
        # some answer word is only known through another thread's lineage
        other = [e.content for e in s.events if e.id not in own]
        assert any(w in c for q in s.questions for w in q.answer_any for c in other), s.id


def _without_heads(s: Scenario) -> Scenario:
    return Scenario(s.id, s.fork_type, s.title, s.events, s.anchor, s.questions)


def test_heads_make_another_threads_path_count() -> None:
    assert _rules(TWO_THREADS) == []
    bare = copy.deepcopy(TWO_THREADS)
    del bare["heads"]
    assert 3 in _rules(bare)  # without heads the other thread is not on the path


@pytest.mark.parametrize(
    ("heads", "why"),
    [(["a2"], "newest"), (["b1"], "own thread"), (["zz"], "not an event"), ([], "")],
)
def test_rule8_refuses_wrong_heads(heads: list[str], why: str) -> None:
    data = copy.deepcopy(TWO_THREADS)
    data["heads"] = heads
    found = validate_scenario(scenario_from_dict(data))
    if not heads:  # no heads: a v1 scenario, and rule 3 fails instead
        assert 8 not in [v.rule for v in found] and 3 in [v.rule for v in found]
        return
    assert 8 in [v.rule for v in found]
    assert any(why in v.message for v in found if v.rule == 8)


def test_rule8_wants_one_head_per_other_thread() -> None:
    data = copy.deepcopy(TWO_THREADS)
    data["events"].append({"id": "c1", "parent": None, "role": "user", "content": "你好。"})
    assert 8 in _rules(data)
    data["heads"] = ["a2b", "c1"]
    assert _rules(data) == []


def _rates(sc: Scenario, name: str, **settings: Any) -> tuple[int, int]:
    ctx = contexts(sc, name, **settings)
    leaked = sum(score(ctx[q.id], q).leak for q in sc.questions if q.type == "leak")
    kept = sum(score(ctx[q.id], q).retain for q in sc.questions)
    return leaked, kept


def test_langgraph_threads_leak_in_the_peer_not_in_branchmem() -> None:
    pytest.importorskip("langgraph")
    peer_leaks = 0
    for sc in load_split(split_dir("threads")):
        peer_leaked, peer_kept = _rates(sc, "langgraph_store")
        ours_leaked, ours_kept = _rates(sc, "branchmem_langgraph")
        peer_leaks += peer_leaked
        assert ours_leaked == 0, sc.id
        assert ours_kept >= peer_kept, sc.id
        assert ours_kept > 0, sc.id  # it did read across threads
    assert peer_leaks > 0


def _graph(sid: str) -> Scenario:
    return next(s for s in load_split(split_dir("graph")) if s.id == sid)


@pytest.mark.parametrize(("sid", "seen", "hidden"), [("graph-05", "log4j", "lucene"),
                                                      ("graph-06", "lucene", "log4j")])  # fmt: skip
def test_graph_context_follows_only_visible_edges(sid: str, seen: str, hidden: str) -> None:
    sc = _graph(sid)
    ctx = contexts(sc, "branchmem_memory_only", hops=3)["q1"]
    relations = ctx.split("相关关系：")[1]
    assert seen in relations and hidden not in relations
    assert "Carol -member of-> platform-team -owns->" in relations
    assert "相关关系" not in contexts(sc, "branchmem_memory_only")["q1"]  # hops=0: no graph


@pytest.mark.parametrize("name", ["branchmem", "branchmem_memory_only"])
def test_branchmem_reads_other_threads_newest_lineage(name: str) -> None:
    sc = scenario_from_dict(TWO_THREADS)
    assert _rates(sc, name) == (0, 2)  # 苏州 and 花生 from thread a, 深圳 not
    back = copy.deepcopy(TWO_THREADS)
    back["events"].insert(3, back["events"].pop(1))  # a2 (深圳) arrives last: thread a's head
    back["heads"] = ["a2"]
    back["questions"][0].update(answer_any=["深圳"], forbidden_any=["苏州"])
    assert _rules(back) == []
    assert _rates(scenario_from_dict(back), name) == (0, 2)
