"""An example that needs an extra says which, in one line, when it is missing."""

from __future__ import annotations

import runpy
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.mark.parametrize("name", ["langgraph_fork", "langgraph_longterm"])
def test_a_missing_langgraph_is_one_line(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    for loaded in [m for m in sys.modules if m.split(".")[0] == "langgraph"]:
        monkeypatch.delitem(sys.modules, loaded)  # put back afterwards
    monkeypatch.setitem(sys.modules, "langgraph", None)  # as if not installed
    with pytest.raises(SystemExit) as exit_:
        runpy.run_path(str(EXAMPLES / f"{name}.py"), run_name="__main__")
    message = str(exit_.value.code)
    assert "is not installed" in message and "pip install 'branchmem[langgraph]'" in message
    assert "\n" not in message


def test_a_missing_openai_agents_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    for loaded in [m for m in sys.modules if m.split(".")[0] == "agents"]:
        monkeypatch.delitem(sys.modules, loaded)  # put back afterwards
    monkeypatch.setitem(sys.modules, "agents", None)  # as if not installed
    with pytest.raises(SystemExit) as exit_:
        runpy.run_path(str(EXAMPLES / "openai_agents_undo.py"), run_name="__main__")
    message = str(exit_.value.code)
    assert "is not installed" in message and "pip install 'branchmem[openai-agents]'" in message
    assert "\n" not in message
