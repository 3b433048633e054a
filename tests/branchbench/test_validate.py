"""The validator: each format rule is caught, and valid scenarios pass.

Every broken scenario is a small edit of one valid base, so a test fails
for exactly the rule it names and not by accident of another.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from branchbench.scenario import scenario_from_dict, write_manifest
from branchbench.validate import Violation, main, validate_dir, validate_scenario

Data = dict[str, Any]


def _ev(eid: str, parent: str | list[str] | None, role: str, content: str) -> Data:
    return {"id": eid, "parent": parent, "role": role, "content": content}


BASE: Data = {
    "id": "edit-x",
    "fork_type": "edit",
    "title": "搬家城市改口",
    "events": [
        _ev("e1", None, "user", "你好，我在准备搬家，我养了一只猫叫团子。"),
        _ev("e2", "e1", "assistant", "好的，需要我帮你做什么？"),
        _ev("e3", "e2", "user", "我下个月搬去成都。"),
        _ev("e4", "e3", "assistant", "成都不错。"),
        _ev("e3b", "e2", "user", "我下个月搬去杭州。"),
        _ev("e4b", "e3b", "assistant", "杭州不错。"),
    ],
    "anchor": "e4b",
    "questions": [
        {
            "id": "q1",
            "type": "leak",
            "question": "我下个月要搬去哪个城市？",
            "answer_any": ["杭州"],
            "forbidden_any": ["成都"],
        },
        {"id": "q2", "type": "retain", "question": "我的猫叫什么？", "answer_any": ["团子"]},
    ],
}


def variant(change: Callable[[Data], None], base: Data = BASE) -> Data:
    data = copy.deepcopy(base)
    change(data)
    return data


def event(data: Data, eid: str) -> Data:
    return next(e for e in data["events"] if e["id"] == eid)


def question(data: Data, qid: str) -> Data:
    return next(q for q in data["questions"] if q["id"] == qid)


def check(data: Data) -> list[Violation]:
    return validate_scenario(scenario_from_dict(data))


def rules(data: Data) -> set[int]:
    return {v.rule for v in check(data)}


# Valid bases, one per fork type -------------------------------------------------


def _regenerate(d: Data) -> None:
    d["fork_type"] = "regenerate"
    d["events"] = [
        _ev("e1", None, "user", "我养了一只猫叫团子，下个月搬家，推荐一个城市？"),
        _ev("e2", "e1", "assistant", "推荐成都，生活节奏慢。"),
        _ev("e2b", "e1", "assistant", "推荐杭州，风景好。"),
        _ev("e3", "e2b", "user", "好，就去那里。"),
    ]
    d["anchor"] = "e3"


def _checkpoint(d: Data) -> None:
    d["fork_type"] = "checkpoint"
    d["events"] += [
        _ev("e5", "e4", "user", "成都哪个区好？"),
        _ev("e6", "e5", "assistant", "成都可以住高新区。"),
    ]


def _switch_back(d: Data) -> None:
    d["fork_type"] = "switch_back"
    d["anchor"] = "e4"
    q = question(d, "q1")
    q["answer_any"], q["forbidden_any"] = ["成都"], ["杭州"]


def _in_branch_change(d: Data) -> None:
    d["fork_type"] = "in_branch_change"
    event(d, "e4")["content"] = "成都不错，预算两千够了。"
    d["events"] += [
        _ev("e5", "e4b", "user", "房租预算先定三千。"),
        _ev("e6", "e5", "assistant", "好的，三千。"),
        _ev("e7", "e6", "user", "改成四千吧。"),
        _ev("e8", "e7", "assistant", "好的，预算四千。"),
    ]
    d["anchor"] = "e8"
    d["questions"].append(
        {
            "id": "q3",
            "type": "leak",
            "question": "我的房租预算是多少？",
            "answer_any": ["四千"],
            "forbidden_any": ["两千"],
            "superseded_any": ["三千"],
        }
    )


VALID: dict[str, Data] = {
    "edit": BASE,
    "regenerate": variant(_regenerate),
    "checkpoint": variant(_checkpoint),
    "switch_back": variant(_switch_back),
    "in_branch_change": variant(_in_branch_change),
}


@pytest.mark.parametrize("fork_type", sorted(VALID))
def test_valid_base_passes(fork_type: str) -> None:
    assert check(VALID[fork_type]) == []


def test_out_of_order_delivery_is_valid() -> None:
    # A child may arrive before its parent; validity must not depend on arrival order.
    def shuffle(d: Data) -> None:
        d["events"] = list(reversed(d["events"]))

    assert check(variant(shuffle)) == []


def test_merge_parents_are_followed() -> None:
    def merge(d: Data) -> None:
        d["events"].append(_ev("m", ["e4b", "e2"], "user", "合并之后，团子也一起走。"))
        d["anchor"] = "m"

    assert check(variant(merge)) == []


# Rule 0: fields and enumerations ------------------------------------------------


@pytest.mark.parametrize(
    "change",
    [
        lambda d: d.update(fork_type="fork"),
        lambda d: event(d, "e2").update(role="bot"),
        lambda d: question(d, "q2").update(type="both"),
        lambda d: event(d, "e2").update(content="  "),
    ],
    ids=["fork_type", "role", "question-type", "empty-message"],
)
def test_rule0_fields(change: Callable[[Data], None]) -> None:
    assert 0 in rules(variant(change))


# Rule 1: ids, parents, cycles, anchor --------------------------------------------


def _cycle(d: Data) -> None:
    event(d, "e1")["parent"] = "e4b"


@pytest.mark.parametrize(
    "change",
    [
        lambda d: d["events"].append(_ev("e2", "e1", "assistant", "重复的编号。")),
        lambda d: question(d, "q2").update(id="q1"),
        lambda d: event(d, "e4b").update(parent="e9"),
        _cycle,
        lambda d: event(d, "e3").update(parent="e3"),
        lambda d: d.update(anchor="e99"),
    ],
    ids=["dup-event", "dup-question", "missing-parent", "cycle", "self-parent", "no-anchor"],
)
def test_rule1_graph(change: Callable[[Data], None]) -> None:
    assert 1 in rules(variant(change))


def test_rule1_names_the_cycle() -> None:
    [v] = [v for v in check(variant(_cycle)) if v.rule == 1]
    assert "cycle" in v.message and "e1" in v.message


# Rule 2: the scenario really forks ---------------------------------------------


def _linear(d: Data) -> None:
    d["events"] = [e for e in d["events"] if e["id"] not in ("e3", "e4")]
    question(d, "q1")["forbidden_any"] = ["重庆"]


def _tool_only_branch(d: Data) -> None:
    d["events"] = [e for e in d["events"] if e["id"] != "e4"]
    event(d, "e3")["role"] = "tool"


def _only_future(d: Data) -> None:
    # The anchor's own children are its future, not a sibling branch.
    d["events"] = [e for e in d["events"] if e["id"] not in ("e3", "e4")]
    d["events"].append(_ev("e5b", "e4b", "user", "算了，还是搬去成都。"))


@pytest.mark.parametrize(
    "change", [_linear, _tool_only_branch, _only_future], ids=["linear", "tool-only", "future"]
)
def test_rule2_fork(change: Callable[[Data], None]) -> None:
    assert 2 in rules(variant(change))


# Rules 3-6: keywords ------------------------------------------------------------


@pytest.mark.parametrize(
    "change",
    [
        lambda d: question(d, "q2").update(answer_any=["上海"]),
        lambda d: question(d, "q2").update(answer_any=["成都"]),
    ],
    ids=["nowhere", "only-off-path"],
)
def test_rule3_answer_on_path(change: Callable[[Data], None]) -> None:
    assert 3 in rules(variant(change))


def _ascii_case(d: Data) -> None:
    event(d, "e1")["content"] += "我开一辆tesla。"
    event(d, "e4")["content"] += "Tesla 在成都也好充电。"
    question(d, "q1")["forbidden_any"] = ["Tesla"]


@pytest.mark.parametrize(
    "change",
    [
        lambda d: event(d, "e2").update(content="成都和杭州都行，需要我帮你做什么？"),
        lambda d: event(d, "e4b").update(content="杭州不错，比成都潮湿一点。"),
        lambda d: question(d, "q1").update(forbidden_any=["广州"]),
        _ascii_case,
    ],
    ids=["in-prefix", "in-assistant-reply", "nowhere", "case-folded"],
)
def test_rule4_forbidden_only_off_path(change: Callable[[Data], None]) -> None:
    assert 4 in rules(variant(change))


def test_rule4_counts_descendants_of_the_anchor_as_off_path() -> None:
    def future(d: Data) -> None:
        d["events"].append(_ev("e5b", "e4b", "user", "朋友劝我去重庆。"))
        question(d, "q1")["forbidden_any"] = ["成都", "重庆"]

    assert check(variant(future)) == []


def test_rule5_forbidden_word_in_question() -> None:
    data = variant(lambda d: question(d, "q1").update(question="我要搬去成都还是杭州？"))
    assert 5 in rules(data)


def test_rule5_superseded_word_in_question() -> None:
    data = variant(
        lambda d: question(d, "q3").update(question="三千之后我把预算改成多少了？"),
        VALID["in_branch_change"],
    )
    assert 5 in rules(data)


def _contained(d: Data) -> None:
    event(d, "e4")["content"] = "杭州湾那边也看过，最后还是成都。"
    question(d, "q1")["forbidden_any"] = ["杭州湾"]


@pytest.mark.parametrize(
    "change",
    [
        lambda d: question(d, "q2").update(answer_any=[]),
        lambda d: question(d, "q1").update(forbidden_any=[]),
        lambda d: question(d, "q1").update(answer_any=["杭州", "成都"]),
        lambda d: question(d, "q1").update(forbidden_any=["成都", ""]),
        lambda d: question(d, "q2").update(forbidden_any=["成都"]),
        _contained,
    ],
    ids=["no-answer", "leak-without-forbidden", "same-word", "empty-word", "retain-forbidden",
         "answer-inside-forbidden"],
)  # fmt: skip
def test_rule6_keyword_lists(change: Callable[[Data], None]) -> None:
    assert 6 in rules(variant(change))


# Rule 7: the fork type matches the shape -----------------------------------------


@pytest.mark.parametrize(
    ("fork_type", "base"),
    [
        ("regenerate", "edit"),  # the siblings are user messages
        ("edit", "regenerate"),  # the siblings are assistant messages
        ("checkpoint", "edit"),  # the abandoned branch holds one turn only
        ("switch_back", "edit"),  # the anchor is on the later sibling
        ("in_branch_change", "edit"),  # no question with superseded_any
    ],
)
def test_rule7_fork_type_shape(fork_type: str, base: str) -> None:
    data = variant(lambda d: d.update(fork_type=fork_type), VALID[base])
    assert rules(data) == {7}


def test_rule7_switch_back_uses_arrival_order() -> None:
    # Same graph as the valid switch_back, but the anchor's branch now arrives last.
    def later(d: Data) -> None:
        d["events"] = [e for e in d["events"] if e["id"] not in ("e3", "e4")] + [
            event(d, "e3"),
            event(d, "e4"),
        ]

    assert rules(variant(later, VALID["switch_back"])) == {7}


def test_rule7_checkpoint_counts_turns_below_the_fork() -> None:
    # Two more user messages without replies are still one turn.
    def users_only(d: Data) -> None:
        d["fork_type"] = "checkpoint"
        d["events"] += [
            _ev("e5", "e4", "user", "成都哪个区好？"),
            _ev("e6", "e5", "user", "在吗？"),
        ]

    assert rules(variant(users_only)) == {7}


def _superseded_after_answer(d: Data) -> None:
    # "五千" is only said in the same reply that confirms "四千", never before it.
    event(d, "e8")["content"] = "好的，预算四千，不再是五千了。"
    question(d, "q3")["superseded_any"] = ["五千"]


@pytest.mark.parametrize(
    "change",
    [lambda d: question(d, "q3").update(superseded_any=["一万"]), _superseded_after_answer],
    ids=["not-on-path", "not-before-answer"],
)
def test_rule7_superseded_comes_before_answer(change: Callable[[Data], None]) -> None:
    assert 7 in rules(variant(change, VALID["in_branch_change"]))


def test_messages_name_rule_scenario_and_fix() -> None:
    [v] = check(variant(lambda d: event(d, "e2").update(content="成都？需要我帮你做什么？")))
    assert (v.scenario, v.rule) == ("edit-x", 4)
    assert "成都" in v.message and "e2" in v.message
    assert str(v).startswith(
        "edit-x: rule 4 (forbidden words occur off the path and never on it): "
    )


# Folders and the command line ---------------------------------------------------


def _write(folder: Path, data: Data, name: str | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name or data['id']}.json"
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


def test_validate_dir_reads_every_file(tmp_path: Path) -> None:
    for fork_type, data in VALID.items():
        _write(tmp_path, {**data, "id": fork_type})
    assert validate_dir(tmp_path) == []
    (tmp_path / "broken.json").write_text("{", encoding="utf-8")
    _write(tmp_path, {**BASE, "id": "other"}, name="renamed")
    found = {(v.scenario, v.rule) for v in validate_dir(tmp_path)}
    assert found == {("broken", 0), ("renamed", 0)}


def test_validate_dir_missing_or_empty(tmp_path: Path) -> None:
    assert [v.rule for v in validate_dir(tmp_path / "nope")] == [0]
    assert [v.rule for v in validate_dir(tmp_path)] == [0]


def test_validate_dir_checks_manifest(tmp_path: Path) -> None:
    path = _write(tmp_path, BASE)
    assert validate_dir(tmp_path, manifest=True)[0].scenario == "MANIFEST"
    write_manifest(tmp_path)
    assert validate_dir(tmp_path) == []
    path.write_text(path.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    assert [(v.scenario, v.rule) for v in validate_dir(tmp_path)] == [("MANIFEST", 0)]
    assert validate_dir(tmp_path, manifest=False) == []


def test_main_reports_rule_and_summary(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _write(tmp_path, BASE)
    assert main([str(tmp_path)]) == 0
    assert "OK, 1 scenario(s), 2 question(s)" in capsys.readouterr().out
    _write(tmp_path, variant(lambda d: question(d, "q1").update(question="搬去成都吗？")))
    assert main([str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "edit-x: rule 5 (no forbidden or superseded word occurs in the question text): " in out
    assert "FAILED, 1 violation(s); 1 of 1 scenario file(s) rejected" in out
