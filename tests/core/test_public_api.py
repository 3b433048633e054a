"""The front door: `__all__` is honest, and the core needs nothing outside the standard library."""

from __future__ import annotations

import pkgutil
import subprocess
import sys
import textwrap

import branchmem


def test_all_is_sorted_and_complete() -> None:
    names = branchmem.__all__
    # isort-style: CONSTANTS, then Classes, then functions, each alphabetical
    assert names == sorted(names, key=lambda n: (not n.isupper(), not n[:1].isupper(), n))
    assert len(set(names)) == len(names)
    for name in names:
        assert hasattr(branchmem, name), name
    public = {
        n
        for n, v in vars(branchmem).items()
        if not n.startswith("_") and not isinstance(v, type(sys)) and n != "annotations"
    }
    assert public == set(names), "export new public names through __all__"


# Packages that need an optional extra (and say so in their docstring).
OPTIONAL = (
    "branchmem.integrations.",
    "branchmem.client.",  # server: httpx (the package's own import needs it)
)

# Modules of an extra: the server's (the rest of branchmem.server must not need
# it), and the contract suite's strategies (the rest of branchmem.testing must not).
NEEDS_AN_EXTRA = {
    "branchmem.testing.strategies",  # dev: hypothesis
    "branchmem.client",  # server: httpx
    "branchmem.server.app",  # server: fastapi
    "branchmem.server.models",  # server: pydantic
    "branchmem.server.mcp_tools",  # server: mcp
    "branchmem.server.schema",  # server: fastapi, pydantic
    "branchmem.server.deps",  # server: fastapi
    "branchmem.server.tree_routes",  # server: fastapi, pydantic
    "branchmem.server.mcp_branch_tools",  # server: mcp
    "branchmem.server.graph_routes",  # server: fastapi, pydantic
    "branchmem.server.background_routes",  # server: fastapi, pydantic
    "branchmem.server.mcp_args",  # server: pydantic
}


def test_core_imports_only_the_standard_library() -> None:
    core = [
        m.name
        for m in pkgutil.walk_packages(branchmem.__path__, "branchmem.")
        if not m.name.endswith("__main__")
        and not m.name.startswith(OPTIONAL)
        and m.name not in NEEDS_AN_EXTRA
    ]
    code = textwrap.dedent(
        f"""
        import importlib, sys
        before = set(sys.modules)
        for name in {core!r}:
            importlib.import_module(name)
        new = {{m.split(".")[0] for m in set(sys.modules) - before}}
        outside = sorted(n for n in new if n not in sys.stdlib_module_names
                         and n not in ("branchmem", "branchmem_eval")  # this distribution's
                         and not n.startswith("_"))
        print(",".join(outside))
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"core modules import non-standard packages: {out.stdout}"
