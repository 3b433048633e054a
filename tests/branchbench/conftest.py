"""Small hand-built scenarios (format v1) shared by the branchbench tests."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from branchbench.scenario import Scenario, scenario_from_dict, write_manifest

EDIT: dict[str, Any] = {
    "id": "edit-01",
    "fork_type": "edit",
    "title": "搬家城市改口",
    "events": [
        {"id": "e1", "parent": None, "role": "user", "content": "你好，我在准备搬家。"},
        {"id": "e2", "parent": "e1", "role": "assistant", "content": "好的，需要我帮你做什么？"},
        {"id": "e3", "parent": "e2", "role": "user", "content": "我下个月搬去成都。"},
        {"id": "e4", "parent": "e3", "role": "assistant", "content": "成都不错。"},
        {"id": "e3b", "parent": "e2", "role": "user", "content": "我下个月搬去杭州。"},
        {"id": "e4b", "parent": "e3b", "role": "assistant", "content": "杭州不错。"},
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
        {"id": "q2", "type": "retain", "question": "我最近在忙什么事？", "answer_any": ["搬家"]},
    ],
}

LONG_PREFIX: dict[str, Any] = {
    "id": "edit-02",
    "fork_type": "edit",
    "title": "过敏与旅行",
    "events": [
        {"id": "p1", "parent": None, "role": "user", "content": "先说一下，我对花生过敏。"},
        {"id": "p2", "parent": "p1", "role": "assistant", "content": "记住了。"},
        {"id": "p3", "parent": "p2", "role": "user", "content": "这次旅行我想去青岛。"},
        {"id": "p4", "parent": "p3", "role": "assistant", "content": "青岛的海鲜很好。"},
        {"id": "p3b", "parent": "p2", "role": "user", "content": "这次旅行我想去大理。"},
        {"id": "p4b", "parent": "p3b", "role": "assistant", "content": "大理很安静。"},
        {"id": "p5b", "parent": "p4b", "role": "user", "content": "帮我列一个行李清单。"},
        {"id": "p6b", "parent": "p5b", "role": "assistant", "content": "好的，清单如下。"},
    ],
    "anchor": "p6b",
    "questions": [
        {
            "id": "q1",
            "type": "leak",
            "question": "我这次想去哪里玩？",
            "answer_any": ["大理"],
            "forbidden_any": ["青岛"],
        },
        {"id": "q2", "type": "retain", "question": "我对什么东西过敏？", "answer_any": ["花生"]},
    ],
}

BUDGET: dict[str, Any] = {
    "id": "change-01",
    "fork_type": "in_branch_change",
    "title": "预算改口",
    "events": [
        {"id": "b1", "parent": None, "role": "user", "content": "我的预算是3000元。"},
        {"id": "b2", "parent": "b1", "role": "assistant", "content": "明白。"},
        {"id": "b3x", "parent": "b2", "role": "user", "content": "预算改成5000元。"},
        {"id": "b3", "parent": "b2", "role": "user", "content": "预算改成4000元吧。"},
        {"id": "b4", "parent": "b3", "role": "assistant", "content": "好的。"},
    ],
    "anchor": "b4",
    "questions": [
        {
            "id": "q1",
            "type": "leak",
            "question": "我的预算是多少？",
            "answer_any": ["4000"],
            "forbidden_any": ["5000"],
            "superseded_any": ["3000"],
        },
    ],
}


def write_split(directory: Path, scenarios: list[dict[str, Any]]) -> Path:
    """A frozen folder: one JSON file per scenario plus its MANIFEST."""
    directory.mkdir(parents=True, exist_ok=True)
    for data in scenarios:
        (directory / f"{data['id']}.json").write_text(
            json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8"
        )
    write_manifest(directory)
    return directory


@pytest.fixture
def edit() -> dict[str, Any]:
    """The format document's example: Chengdu edited to Hangzhou."""
    return copy.deepcopy(EDIT)


@pytest.fixture
def long_prefix() -> dict[str, Any]:
    """A fact early on the shared prefix, then a fork, then more turns."""
    return copy.deepcopy(LONG_PREFIX)


@pytest.fixture
def budget() -> dict[str, Any]:
    """A value changed inside the current branch while a sibling holds another."""
    return copy.deepcopy(BUDGET)


@pytest.fixture
def to_scenario() -> Callable[[dict[str, Any]], Scenario]:
    return lambda data: scenario_from_dict(copy.deepcopy(data))


@pytest.fixture
def small_split(tmp_path: Path) -> Path:
    """A frozen folder of the three scenarios above."""
    return write_split(tmp_path / "small", [EDIT, LONG_PREFIX, BUDGET])
