"""The scenario harness: the scoring rule, seeding through the public API, edges, the validator."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pytest

from branchmem import InvalidInput, Memory, Store
from branchmem_eval import scenario_check
from branchmem_eval.scenario_eval import (
    ScenarioClock,
    judge,
    run_scenario,
    run_set,
    seed,
)
from branchmem_eval.scenarios import DAY, EPOCH, ScenarioSet, load_set, parse_scenario


def mem_store(clock: ScenarioClock) -> Store:
    return Store(clock=clock)


# ------------------------------------------------------------------ the rule
FIVE = ["a1", "a2", "a3", "a4", "a5"]


@pytest.mark.parametrize(("found", "passed"), [(5, True), (4, True), (3, False), (0, False)])
def test_at_least_four_in_five_expected_strings_must_appear(found: int, passed: bool) -> None:
    contents = [f"record holding {s}" for s in FIVE[:found]] + ["unrelated"]
    v = judge(FIVE, [], contents)
    assert v.passed is passed
    assert v.found == tuple(FIVE[:found]) and v.missed == tuple(FIVE[found:])


@pytest.mark.parametrize(
    ("excluded", "leaked", "passed"),
    [(5, 0, True), (5, 1, True), (5, 2, False), (1, 1, False), (2, 1, False), (10, 2, True)],
)
def test_at_least_four_in_five_excluded_strings_must_stay_out(
    excluded: int, leaked: int, passed: bool
) -> None:
    bad = [f"x{i}" for i in range(excluded)]
    contents = ["the answer"] + [f"noise {s}" for s in bad[:leaked]]
    v = judge(["answer"], bad, contents)
    assert v.passed is passed
    assert len(v.leaked) == leaked


def test_both_halves_of_the_rule_must_hold() -> None:
    assert not judge(["Berlin"], ["Vienna"], ["lives in Vienna"]).passed  # found nothing
    assert not judge(["Berlin"], ["Vienna"], ["Berlin", "Vienna"]).passed  # leaked
    assert judge(["Berlin"], ["Vienna"], ["User lives in Berlin"]).passed


def test_strings_match_inside_contents_case_folded() -> None:
    v = judge(["berlin", "KREUZBERG"], ["vienna"], ["User lives in Berlin, in Kreuzberg"])
    assert v.passed and v.found == ("berlin", "KREUZBERG")
    assert judge([], ["VIENNA"], ["sister in Vienna"]).leaked == ("VIENNA",)


def test_empty_lists_count_as_met_and_an_empty_top_k_finds_nothing() -> None:
    assert judge([], ["secret"], []).passed
    assert judge([], ["secret"], ["nothing here"]).passed
    v = judge(["answer"], [], [])
    assert not v.passed and v.precision == 0.0 and v.recall == 0.0


def test_recall_and_precision_of_one_top_k() -> None:
    v = judge(["杭州", "猫", "滨江"], [], ["搬去杭州，新工作在滨江", "公司通知", "养了一只猫"])
    assert v.recall == 1.0 and v.relevant_hits == 2 and v.precision == pytest.approx(2 / 3)
    v = judge(["杭州", "猫"], [], ["搬去杭州"])
    assert v.recall == 0.5 and v.precision == 1.0


# --------------------------------------------------------------- a tiny set
def tiny(**extra: Any) -> dict[str, Any]:
    d: dict[str, Any] = {
        "id": "tiny",
        "events": [
            {"id": "e1", "content": "我下个月搬家", "day": 0},
            {"id": "e2", "content": "搬去成都"},
            {"id": "e2b", "parent": "e1", "content": "搬去杭州", "day": 3},
            {"id": "e3", "content": "我对花生过敏", "day": 40},
        ],
        "memories": [
            {"id": "m1", "content": "用户下个月搬家", "sources": ["e1"]},
            {"id": "m2", "content": "用户搬去成都", "sources": ["e2"]},
            {"id": "m3", "content": "用户搬去杭州", "sources": ["e2b"]},
            {"id": "m4", "content": "用户对花生过敏", "sources": ["e3"], "key": "allergy"},
        ],
        "assertions": [
            {"id": "a1", "query": "搬去哪里", "at": "e3", "k": 1, "expected": ["杭州"]},
            {
                "id": "a2",
                "query": "搬去哪里",
                "at": "e2",
                "k": 1,
                "expected": ["成都"],
                "excluded": ["杭州"],
            },
        ],
    }
    d.update(extra)
    return d


def test_defaults_parent_is_the_previous_event_and_records_take_their_sources_day() -> None:
    sc = parse_scenario(tiny())
    assert [e["parent"] for e in sc.events] == [None, "e1", "e1", "e2b"]
    assert [e["day"] for e in sc.events] == [0.0, 0.0, 3.0, 40.0]
    assert [m["day"] for m in sc.memories] == [0.0, 0.0, 3.0, 40.0]
    assert sc.now_day == 40.0 and sc.assertions[0].k == 1 and sc.assertions[0].at == ("e3",)


def test_seed_writes_on_the_scenario_days_through_the_store_clock() -> None:
    sc = parse_scenario(
        tiny(
            corrections=[
                {
                    "op": "supersede",
                    "target": "m4",
                    "id": "m4b",
                    "content": "用户对腰果过敏",
                    "sources": ["e3"],
                    "day": 41,
                },
                {"op": "retract", "target": "m1", "sources": ["e3"]},
            ],
            purge={"events": ["e2"]},
        )
    )
    clock = ScenarioClock()
    store = Store(clock=clock)
    seed(store, sc, clock)
    at = {m.id: m for m in store.memories(at="e3")}
    assert set(at) == {"m3", "m4b"}  # m1 retracted, m4 superseded
    assert at["m3"].created_at == EPOCH + 3 * DAY
    assert at["m4b"].created_at == EPOCH + 41 * DAY and at["m4b"].key == "allergy"
    # m2 went with its purged source; m1's retraction lies on the other branch
    assert [m.id for m in store.memories(at="e2")] == ["m1"]
    assert store.get_event("e2").content == ""
    with pytest.raises(Exception, match="m2"):
        store.get_memory("m2")


def test_a_run_judges_each_assertion_at_its_anchor() -> None:
    data = ScenarioSet("tiny", "tune", (parse_scenario(tiny()),))
    r = run_set(mem_store, data, mode="keyword")
    assert [o.verdict.passed for o in r.outcomes] == [True, True]
    assert [o.contents for o in r.outcomes] == [("用户搬去杭州",), ("用户搬去成都",)]
    assert (r.pass_rate, r.recall, r.precision, r.embedder) == (1.0, 1.0, 1.0, "-")


def test_figures_average_over_assertions_that_expect_something() -> None:
    d = tiny()
    d["assertions"] = [
        {"id": "a1", "query": "搬去哪里", "at": "e3", "k": 2, "expected": ["杭州", "花生"]},
        {"id": "a2", "query": "过敏", "at": "e3", "k": 1, "expected": ["成都"]},  # hidden there
        {"id": "a3", "query": "过敏", "at": "e3", "k": 1, "excluded": ["成都"]},
    ]
    r = run_set(mem_store, ScenarioSet("t", "tune", (parse_scenario(d),)), mode="keyword")
    a1 = r.outcomes[0].verdict
    assert [o.verdict.passed for o in r.outcomes] == [a1.passed, False, True]
    assert r.pass_rate == pytest.approx((a1.passed + 1) / 3)
    assert r.recall == pytest.approx((a1.recall + 0.0) / 2)  # a3 expects nothing
    assert r.precision == pytest.approx((a1.precision + 0.0) / 2)
    assert r.by_tag == {}


def test_recency_is_measured_from_the_scenario_now_not_today() -> None:
    d = tiny()
    d["assertions"] = [{"id": "a", "query": "用户", "at": "e3", "k": 3, "expected": ["花生"]}]
    sc = parse_scenario(d)
    hits: list[dict[str, float]] = []

    class Spy(Store):
        def search(self, query: str, **kw: Any) -> Any:
            hits.append({"now": kw["now"]})
            return super().search(query, **kw)

    run_scenario(lambda clock: Spy(clock=clock), sc, mode="keyword")
    assert hits == [{"now": EPOCH + 40 * DAY}]


def test_same_outcomes_on_every_backend(open_store: Callable[..., Store]) -> None:
    data = load_set("multihop", "tune")
    on_backend = run_set(
        lambda clock: open_store(clock=clock),
        data,
        embedder="hashing",
        scenarios=data.scenarios[:2],
    )
    in_memory = run_set(mem_store, data, embedder="hashing", scenarios=data.scenarios[:2])
    assert [o.contents for o in on_backend.outcomes] == [o.contents for o in in_memory.outcomes]


# --------------------------------------------------------------------- edges
EDGES = [
    {"subject": "Alice", "predicate": "owns", "object": "auth-service", "sources": ["e1"]},
    {
        "subject": "Alice",
        "predicate": "owns",
        "object": "billing",
        "sources": ["e1"],
        "retracted_by": ["e3"],
    },
]


class NoEdges:
    """A store without ``add_edge`` (an older one, or a stand-in)."""

    def __init__(self, store: Store) -> None:
        self._store = store

    def __getattr__(self, name: str) -> Any:
        if name == "add_edge":
            raise AttributeError(name)
        return getattr(self._store, name)


def test_edges_are_skipped_and_counted_on_a_store_without_add_edge() -> None:
    sc = parse_scenario(tiny(edges=EDGES))
    clock = ScenarioClock()
    done = seed(NoEdges(Store(clock=clock)), sc, clock)  # type: ignore[arg-type]
    assert (done.edges_loaded, done.edges_skipped) == (0, 2)
    # Store has the relation graph: the same scenario loads both edges.
    r = run_set(mem_store, ScenarioSet("t", "tune", (sc,)), mode="keyword")
    assert (r.edges_loaded, r.edges_skipped) == (2, 0)


class EdgeStore(Store):
    """A store with an ``add_edge`` that keeps each edge as a record (a stand-in
    for the relation graph), to show how the harness loads and retracts edges."""

    calls: list[tuple[str, str, str, Sequence[str]]]

    def add_edge(self, subject: str, predicate: str, obj: str, *, sources: Sequence[str]) -> Memory:
        self.calls = [*getattr(self, "calls", []), (subject, predicate, obj, tuple(sources))]
        return self.add_memory(f"{subject} {predicate} {obj}", sources=sources, kind="semantic")


def test_edges_are_loaded_and_retracted_where_the_store_has_add_edge() -> None:
    sc = parse_scenario(tiny(edges=EDGES))
    clock = ScenarioClock()
    store = EdgeStore(clock=clock)
    done = seed(store, sc, clock)
    assert (done.edges_loaded, done.edges_skipped) == (2, 0)
    assert store.calls == [
        ("Alice", "owns", "auth-service", ("e1",)),
        ("Alice", "owns", "billing", ("e1",)),
    ]
    at_e2 = {m.content for m in store.memories(at="e2")}
    at_e3 = {m.content for m in store.memories(at="e3")}
    assert {"Alice owns auth-service", "Alice owns billing"} <= at_e2  # the retraction is on e3
    assert "Alice owns auth-service" in at_e3 and "Alice owns billing" not in at_e3


# ------------------------------------------------------------ bad scenarios
@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"colour": "red"}, "unknown field"),
        (
            {"assertions": [{"id": "a", "query": "q", "at": "e1", "k": 0, "expected": ["x"]}]},
            "k must be a positive integer",
        ),
        ({"assertions": [{"id": "a", "query": "q", "at": "e1"}]}, "expected and/or excluded"),
        ({"memories": [{"id": "m", "content": "c", "sources": []}]}, "at least one source"),
        ({"corrections": [{"op": "undo", "target": "m1", "sources": ["e1"]}]}, '"op" must be'),
        ({"events": [{"id": "e1", "day": -1}]}, "day must be"),
    ],
)
def test_a_malformed_scenario_is_refused_saying_where(change: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidInput, match=message) as info:
        parse_scenario(tiny(**change), "set.json: scenarios[0]")
    assert str(info.value).startswith("set.json: scenarios[0]")


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        (
            {"memories": [{"id": "m1", "content": "用户搬去杭州", "sources": ["e9"]}]},
            "source e9, not an event",
        ),
        ({"events": [{"id": "e1"}, {"id": "e2", "parent": "e7"}]}, "parent e7, not an earlier"),
        (
            {"corrections": [{"op": "retract", "target": "m9", "sources": ["e1"]}]},
            "targets no memory",
        ),
        ({"purge": {"memories": ["m9"]}}, "purge names memory m9"),
        (
            {
                "edges": [
                    {
                        "subject": "a",
                        "predicate": "b",
                        "object": "c",
                        "sources": ["e1"],
                        "retracted_by": ["e9"],
                    }
                ]
            },
            "retracted_by has source e9",
        ),
        (
            {"assertions": [{"id": "a", "query": "q", "at": "e9", "expected": ["杭州"]}]},
            "anchor e9",
        ),
        (
            {
                "assertions": [
                    {
                        "id": "a",
                        "query": "q",
                        "at": "e3",
                        "expected": ["杭州"],
                        "excluded": ["广州"],
                    }
                ]
            },
            "stated by no record",
        ),
        (
            {
                "assertions": [
                    {
                        "id": "a",
                        "query": "q",
                        "at": "e3",
                        "expected": ["搬去杭州"],
                        "excluded": ["杭州"],
                    }
                ]
            },
            "overlap",
        ),
        (
            {"assertions": [{"id": "a", "query": "q", "at": "e3", "expected": ["成都"]}]},
            "no ranking passes",
        ),
        (
            {
                "assertions": [
                    {"id": "a", "query": "q", "at": "e2", "k": 1, "expected": ["成都", "搬家"]}
                ]
            },
            "no ranking passes",
        ),
    ],
)
def test_the_validator_names_each_kind_of_problem(change: dict[str, Any], problem: str) -> None:
    data = ScenarioSet("t", "tune", (parse_scenario(tiny(**change)),))
    found = scenario_check.problems(mem_store, data)
    assert any(problem in p for p in found), found


def test_the_validator_passes_a_sound_scenario() -> None:
    data = ScenarioSet("t", "tune", (parse_scenario(tiny()),))
    assert scenario_check.problems(mem_store, data) == []
