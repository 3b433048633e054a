"""Each system on small hand-built scenarios, and the shared extractor."""

from __future__ import annotations

from collections.abc import Callable
from importlib.util import find_spec
from typing import Any

import pytest

from branchbench.base import bigrams, rank_facts
from branchbench.extract import Extractor, topic_key
from branchbench.metrics import score
from branchbench.scenario import Scenario, scenario_from_dict
from branchbench.systems import SYSTEMS, Settings, make_system

ToScenario = Callable[[dict[str, Any]], Scenario]


def contexts(sc: Scenario, name: str, **settings: Any) -> dict[str, str]:
    """The context each question of ``sc`` gets from system ``name``."""
    system = make_system(name, Settings(**settings))
    for event in sc.events:
        system.receive(event)
    system.finish()
    return {q.id: system.context(sc.anchor, q) for q in sc.questions}


def leaks(sc: Scenario, name: str, **settings: Any) -> bool:
    ctx = contexts(sc, name, **settings)
    return any(score(ctx[q.id], q).leak for q in sc.questions)


def keeps(sc: Scenario, name: str, qid: str, **settings: Any) -> bool:
    q = next(q for q in sc.questions if q.id == qid)
    return score(contexts(sc, name, **settings)[qid], q).retain


def test_registry_order_and_unknown_name() -> None:
    assert list(SYSTEMS) == [
        "full_history",
        "whole_summary",
        "extract_flat",
        "extract_flat_branch_raw",
        "branch_tags",
        "current_branch_raw",
        "branchmem",
        "branchmem_memory_only",
        "dream_flat",
        "branchmem_dream",
        *(["langgraph_store", "branchmem_langgraph"] if find_spec("langgraph") else []),
    ]
    with pytest.raises(ValueError, match="choose from"):
        make_system("nope")


def test_extractor_facts_and_summaries_with_true_sources(edit: dict[str, Any]) -> None:
    sc = scenario_from_dict(edit)
    ex = Extractor(summary_every=4)
    derived = [d for e in sc.events for d in ex.observe(e)] + ex.flush()
    facts = [d for d in derived if d.kind == "fact"]
    summaries = [d for d in derived if d.kind == "summary"]
    assert [f.sources for f in facts] == [("e1",), ("e3",), ("e3b",)]
    assert facts[1].content == "用户说：我下个月搬去成都。" and facts[1].key == "move"
    assert [s.sources for s in summaries] == [("e1", "e2", "e3", "e4"), ("e3b", "e4b")]
    assert "成都" in summaries[0].content and "杭州" in summaries[1].content
    assert ex.flush() == []


def test_topic_key_rules() -> None:
    assert topic_key("我的预算是3000元") == "budget"
    assert topic_key("我下个月搬到杭州") == "move"
    assert topic_key("今天天气不错") is None


def test_rank_facts_by_bigram_overlap_then_recency(edit: dict[str, Any]) -> None:
    sc = scenario_from_dict(edit)
    ex = Extractor()
    facts = [d for e in sc.events for d in ex.observe(e) if d.kind == "fact"]
    top = rank_facts(facts, "我下个月要搬去哪个城市？", k=2)
    assert [f.sources for f in top] == [("e3b",), ("e3",)]  # tie on overlap: newer first
    assert bigrams("搬去，成都") == {"搬去", "去成", "成都"}


def test_edit_example_who_leaks(to_scenario: ToScenario, edit: dict[str, Any]) -> None:
    sc = to_scenario(edit)
    for name in ("full_history", "whole_summary", "extract_flat", "extract_flat_branch_raw"):
        assert leaks(sc, name), name
    for name in ("current_branch_raw", "branchmem", "branch_tags"):
        assert not leaks(sc, name), name
    assert keeps(sc, "branchmem", "q1") and keeps(sc, "branchmem", "q2")
    assert keeps(sc, "current_branch_raw", "q2")


def test_branch_tags_hides_the_shared_prefix(to_scenario: ToScenario, edit: dict[str, Any]) -> None:
    # 准备搬家 was written while the first branch was current; the edit starts a new tag.
    assert not keeps(to_scenario(edit), "branch_tags", "q2")


def test_branch_tags_leaks_a_summary_written_across_the_fork(to_scenario: ToScenario) -> None:
    data = {
        "id": "t",
        "fork_type": "edit",
        "title": "",
        "events": [
            {"id": "e1", "parent": None, "role": "user", "content": "你好。"},
            {"id": "e2", "parent": "e1", "role": "assistant", "content": "你好！"},
            {"id": "e3", "parent": "e2", "role": "user", "content": "我下个月搬去成都。"},
            {"id": "e3b", "parent": "e2", "role": "user", "content": "我下个月搬去杭州。"},
            {"id": "e4b", "parent": "e3b", "role": "assistant", "content": "好的。"},
        ],
        "anchor": "e4b",
        "questions": [
            {
                "id": "q1",
                "type": "leak",
                "question": "我要搬去哪里？",
                "answer_any": ["杭州"],
                "forbidden_any": ["成都"],
            }
        ],
    }
    sc = to_scenario(data)
    # The 4-message summary [e1, e2, e3, e3b] is written when e3b arrives, so it
    # carries e3b's tag, and Chengdu with it.
    assert leaks(sc, "branch_tags")
    assert not leaks(sc, "branchmem")


def test_branch_tag_assignment_is_deterministic(
    to_scenario: ToScenario, edit: dict[str, Any]
) -> None:
    system = make_system("branch_tags")
    for e in to_scenario(edit).events:
        system.receive(e)
    assert system.tag_of == {  # type: ignore[attr-defined]
        "e1": "e1",
        "e2": "e1",
        "e3": "e1",
        "e4": "e1",
        "e3b": "e3b",
        "e4b": "e3b",
    }


def test_window_branchmem_keeps_a_prefix_fact_raw_filtering_loses(
    to_scenario: ToScenario, long_prefix: dict[str, Any]
) -> None:
    sc = to_scenario(long_prefix)
    assert keeps(sc, "current_branch_raw", "q2")
    assert not keeps(sc, "current_branch_raw", "q2", window=4)
    assert keeps(sc, "branchmem", "q2", window=4)
    assert not leaks(sc, "branchmem", window=4)
    ctx = contexts(sc, "full_history", window=2)["q1"]
    assert "清单" in ctx and "大理" not in ctx  # the last two messages received


def test_branchmem_correction_retracts_the_earlier_value(
    to_scenario: ToScenario, budget: dict[str, Any]
) -> None:
    sc = to_scenario(budget)
    q = sc.questions[0]
    # summary_every=100: the only summary covers every message, the 5000 branch too,
    # so the gate hides it and the facts alone decide.
    gated = score(contexts(sc, "branchmem", window=2, summary_every=100)["q1"], q)
    assert gated.correct and not gated.stale and not gated.leak
    flat = score(contexts(sc, "extract_flat_branch_raw", window=2, summary_every=100)["q1"], q)
    assert flat.stale and flat.leak


def test_child_before_parent(to_scenario: ToScenario, edit: dict[str, Any]) -> None:
    e1, e2, e3, e4, e3b, e4b = edit["events"]
    edit["events"] = [e1, e3b, e3, e2, e4, e4b]  # both children of e2 arrive before it
    sc = to_scenario(edit)
    assert not leaks(sc, "branchmem")
    assert not leaks(sc, "current_branch_raw")
    assert keeps(sc, "branchmem", "q1")
    assert leaks(sc, "full_history")
    for name in ("current_branch_raw", "branchmem"):  # conversation order, not arrival order
        raw = contexts(sc, name)["q1"].split("对话记录：\n")[1].splitlines()
        assert raw == [
            "用户：你好，我在准备搬家。",
            "助手：好的，需要我帮你做什么？",
            "用户：我下个月搬去杭州。",
            "助手：杭州不错。",
        ], name


def test_arrival_out_of_order_is_not_warned_about(
    to_scenario: ToScenario, edit: dict[str, Any]
) -> None:
    import warnings

    from branchmem import BranchmemWarning

    e1, e2, e3, e4, e3b, e4b = edit["events"]
    edit["events"] = [e1, e3b, e3, e2, e4, e4b]  # the scenario's order, on purpose
    sc = to_scenario(edit)
    with warnings.catch_warnings():
        warnings.simplefilter("error", BranchmemWarning)
        assert keeps(sc, "branchmem", "q1")


def test_no_window_and_zero_window(to_scenario: ToScenario, edit: dict[str, Any]) -> None:
    sc = to_scenario(edit)
    assert contexts(sc, "current_branch_raw", window=0)["q1"] == ""
    full = contexts(sc, "current_branch_raw")["q1"]
    assert full.splitlines()[1:] == [
        "用户：你好，我在准备搬家。",
        "助手：好的，需要我帮你做什么？",
        "用户：我下个月搬去杭州。",
        "助手：杭州不错。",
    ]


def test_branchmem_systems_use_the_store_extract_and_context(
    to_scenario: ToScenario, budget: dict[str, Any]
) -> None:
    from branchbench.systems import Branchmem

    sc = to_scenario(budget)
    system = make_system("branchmem", Settings(window=2))
    assert isinstance(system, Branchmem)
    for e in sc.events:
        system.receive(e)
    system.finish()
    ctx = system.context(sc.anchor, sc.questions[0])
    assert ctx == system.store.context(at=sc.anchor, window=2, k=None).text()
    # every record came through Store.extract: ids derived from the proposals
    assert all(m.id.startswith("x_") for m in system.store.memories(at=sc.anchor))
    only = make_system("branchmem_memory_only", Settings(window=2))
    for e in sc.events:
        only.receive(e)
    text = only.context(sc.anchor, sc.questions[0])
    assert text.startswith("相关记忆：") and "对话记录：" not in text
    q = sc.questions[0]
    got = score(text, q)
    assert got.correct and not got.stale and not got.leak


def test_slot_changes_need_words_of_change() -> None:
    from branchbench.slots import slot

    assert slot("先按十八桌算") == ("qty.桌", "十八桌")
    assert slot("改成二十五桌吧") == ("qty.桌", "二十五桌")
    assert slot("我想买台笔记本") == (None, "我想买台笔记本")
    from branchbench.slots import SlotExtractor
    from branchmem import Store

    store = Store()
    store.add_events(
        [
            {"id": "e1", "content": "现在年包四十二万。"},
            {"id": "e2", "parent": "e1", "content": "新offer年包五十万。"},
            {"id": "e3", "parent": "e2", "content": "我们先按十八桌算。"},
            {"id": "e4", "parent": "e3", "content": "还是改成二十五桌吧。"},
        ]
    )
    for at in ("e1", "e2", "e3", "e4"):
        store.extract(at=at, extractor=SlotExtractor())
    got = {m.content for m in store.memories(at="e4")}
    # no words of change: both salaries stay; "改成": the new count replaces the old
    assert got == {
        "用户说：现在年包四十二万",
        "用户说：新offer年包五十万",
        "用户说：还是改成二十五桌吧",
    }
    assert "用户说：我们先按十八桌算" in [m.content for m in store.memories(at="e3")]


def test_memory_only_drops_an_old_value_the_assistant_restated_in_digits(
    to_scenario: ToScenario,
) -> None:
    # The 4-message summary is written before the change; the assistant said
    # the old value in digits, so only the change's `previous` names that form.
    said = [
        "我每天吃两千大卡。",
        "好的，每天2000大卡。",
        "我住在成都。",
        "好的。",
        "还是改成一千八百大卡吧。",
    ]
    events = [
        {"id": f"e{n}", "parent": f"e{n - 1}" if n > 1 else None,
         "role": "assistant" if n % 2 == 0 else "user", "content": text}
        for n, text in enumerate(said, 1)
    ]  # fmt: skip
    question = {"id": "q1", "type": "retain", "question": "我每天吃多少大卡？",
                "answer_any": ["一千八百大卡"],
                "superseded_any": ["两千大卡", "2000大卡"]}  # fmt: skip
    sc = to_scenario({"id": "t", "fork_type": "in_branch_change", "title": "",
                      "events": events, "anchor": "e5", "questions": [question]})  # fmt: skip
    ctx = contexts(sc, "branchmem_memory_only", window=4)["q1"]
    assert not score(ctx, sc.questions[0]).stale, ctx
