"""The LangGraph examples print tables whose columns line up on a terminal,
where a CJK character takes two columns."""

from __future__ import annotations

import importlib.util
import unicodedata
from pathlib import Path
from types import ModuleType

import pytest

pytest.importorskip("langgraph", reason="needs 'langgraph', of the 'langgraph' extra")

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def starts(line: str) -> list[int]:
    """Display columns where a cell starts: after a run of two or more spaces."""
    out, col, spaces = [], 0, 0
    for ch in line:
        if ch == " ":
            spaces += 1
        else:
            if spaces >= 2 or (col == spaces and spaces > 0):
                out.append(col)
            spaces = 0
        col += 2 if unicodedata.east_asian_width(ch) in "WF" else 1
    return out


@pytest.mark.parametrize("name", ["langgraph_fork", "langgraph_longterm"])
def test_the_columns_line_up(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    load(name).main()
    header, *rows = capsys.readouterr().out.splitlines()
    columns = starts(header)
    assert len(columns) == 2 and rows
    for row in rows:
        assert starts(row)[-2:] == columns, (row, header)
