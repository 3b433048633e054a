"""The HTTP app mounts the MCP tools, and the MCP tools never reach back into the
app: what both need (`Served`) lives in a module of its own.

Imports are read from the source, so those under ``TYPE_CHECKING`` and those
inside functions count too."""

from __future__ import annotations

import ast
from pathlib import Path

import branchmem

ROOT = Path(branchmem.__file__).parent


def source_of(module: str) -> Path | None:
    """The file of a ``branchmem`` module, or None for one outside the package."""
    parts = module.split(".")
    if parts[0] != "branchmem":
        return None
    base = ROOT.joinpath(*parts[1:])
    for path in (base / "__init__.py", base.with_suffix(".py")):
        if path.is_file():
            return path
    return None


def imports_of(module: str) -> set[str]:
    """The ``branchmem`` modules that ``module`` imports anywhere in its source."""
    path = source_of(module)
    if path is None:
        return set()
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    return imports_in(path.read_text(encoding="utf-8"), package)


def imports_in(source: str, package: str) -> set[str]:
    """The ``branchmem`` modules that ``source``, a module of ``package``, imports."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")
            base = base[: len(base) - node.level + 1] if node.level else []
            origin = ".".join([*base, *(node.module or "").split(".")]).strip(".")
            # ``from . import service`` imports the module service; ``from .x import f``, x
            names = [f"{origin}.{a.name}" for a in node.names]
            subs = [n for n in names if source_of(n) is not None]
            found.update(subs if len(subs) == len(names) else [*subs, origin])
    return {m for m in found if source_of(m) is not None}


def reaches(start: str) -> set[str]:
    """Every ``branchmem`` module that importing ``start`` can import, at any depth."""
    seen: set[str] = set()
    todo = [start]
    while todo:
        for m in imports_of(todo.pop()) - seen:
            seen.add(m)
            todo.append(m)
    return seen


def test_the_app_mounts_the_mcp_tools_and_they_never_import_the_app() -> None:
    assert "branchmem.server.mcp_tools" in imports_of("branchmem.server.app")
    assert "branchmem.server.app" not in reaches("branchmem.server.mcp_tools")


def test_both_take_served_from_its_own_module() -> None:
    for module in ("branchmem.server.app", "branchmem.server.mcp_tools"):
        assert "branchmem.server.served" in imports_of(module)
    assert not {"branchmem.server.app", "branchmem.server.mcp_tools"} & reaches(
        "branchmem.server.served"
    )


def test_the_reader_counts_imports_under_type_checking_and_in_functions() -> None:
    # the kinds of import the circle was made of: a check that missed them could not fail
    source = """
from typing import TYPE_CHECKING
from . import service as svc
if TYPE_CHECKING:
    from .served import Served
def mount():
    from .app import create_app
    from ..errors import InvalidInput
"""
    assert imports_in(source, "branchmem.server") == {
        "branchmem.server.service",
        "branchmem.server.served",
        "branchmem.server.app",
        "branchmem.errors",
    }
