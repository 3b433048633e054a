"""The two systems that replay a scenario through a real LangGraph graph."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("langgraph")

from test_systems import ToScenario, contexts, keeps, leaks

from branchbench.metrics import score
from branchbench.scenario import Scenario
from branchbench.systems import make_system


def _switched_back(edit: dict[str, Any]) -> dict[str, Any]:
    """The edit scenario asked on the first branch after the edit arrived."""
    edit["anchor"] = "e4"
    edit["questions"][0].update(answer_any=["成都"], forbidden_any=["杭州"])
    return edit


def test_in_memory_store_leaks_where_the_gated_store_does_not(
    to_scenario: ToScenario, edit: dict[str, Any]
) -> None:
    back = to_scenario(_switched_back(edit))
    assert leaks(back, "langgraph_store")  # the edit's fact overwrote the key everywhere
    assert not leaks(back, "branchmem_langgraph")
    assert keeps(back, "branchmem_langgraph", "q1") and keeps(back, "branchmem_langgraph", "q2")


def test_the_edited_branch_keeps_the_shared_prefix(
    to_scenario: ToScenario, edit: dict[str, Any]
) -> None:
    sc = to_scenario(edit)
    assert not leaks(sc, "branchmem_langgraph")
    assert keeps(sc, "branchmem_langgraph", "q1") and keeps(sc, "branchmem_langgraph", "q2")


def test_children_that_arrive_before_their_parent_wait_for_it(
    to_scenario: ToScenario, edit: dict[str, Any]
) -> None:
    e1, e2, e3, e4, e3b, e4b = edit["events"]
    edit["events"] = [e1, e3b, e3, e2, e4, e4b]
    sc: Scenario = to_scenario(edit)
    assert not leaks(sc, "branchmem_langgraph")
    assert keeps(sc, "branchmem_langgraph", "q2")  # 搬家, from e1, reached through e2
    ctx = contexts(sc, "branchmem_langgraph")["q1"]
    assert score(ctx, sc.questions[0]).correct


def test_an_anchor_that_never_arrived_gets_an_empty_context(
    to_scenario: ToScenario, edit: dict[str, Any]
) -> None:
    sc = to_scenario(edit)
    system = make_system("branchmem_langgraph")
    for event in sc.events:
        system.receive(event)
    system.finish()
    assert system.context("nowhere", sc.questions[0]) == ""
