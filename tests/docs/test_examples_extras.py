"""An example that needs an extra says which, in one line, when it is missing."""

from __future__ import annotations

import runpy
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

CASES = [  # (example, the package it needs, the extra that installs it)
    ("langgraph_fork", "langgraph", "langgraph"),
    ("langgraph_longterm", "langgraph", "langgraph"),
    ("openai_agents_undo", "agents", "openai-agents"),
    ("adk_rewind", "google.adk", "adk"),
]


@pytest.mark.parametrize(("name", "package", "extra"), CASES)
def test_a_missing_extra_is_one_line(
    name: str, package: str, extra: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for loaded in [m for m in sys.modules if m == package or m.startswith(package + ".")]:
        monkeypatch.delitem(sys.modules, loaded)  # put back afterwards
    monkeypatch.setitem(sys.modules, package, None)  # as if not installed
    with pytest.raises(SystemExit) as exit_:
        runpy.run_path(str(EXAMPLES / f"{name}.py"), run_name="__main__")
    message = str(exit_.value.code)
    assert "is not installed" in message and f"pip install 'branchmem[{extra}]'" in message
    assert "\n" not in message
