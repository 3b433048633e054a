"""The package's layers: imports run one way (no cycle, type-only ones and those
inside functions included), `Store` is a plain class whose doors (the
functions of `branchmem.front`) reach nothing of it but its engine, nothing
below the shells imports it, and no module is over `MAX_LINES` lines.

Every module of ``src/branchmem`` is read as source (nothing is imported), so
an import under ``TYPE_CHECKING`` or inside a function counts like any other.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import types
from collections.abc import Iterator
from pathlib import Path

import branchmem.front
from branchmem import Store

ROOT = Path(__file__).resolve().parents[2] / "src"
PACKAGE = "branchmem"

# The shells, which may import `Store` (and the modules that define and export it,
# and `AsyncStore`, whose methods are `Store`'s own, awaited).
SHELLS = (
    "branchmem.cli",
    "branchmem.client",
    "branchmem.server",
    "branchmem.integrations",
    "branchmem.testing",  # the contract suite, which runs `Store` over a backend
)
MAY_IMPORT_STORE = {"branchmem", "branchmem.store", "branchmem.async_store"}
MAX_LINES = 500  # small files with one job (no god-file)


def modules(root: Path = ROOT, package: str = PACKAGE) -> dict[str, tuple[Path, bool]]:
    """Module name -> (file, is a package's ``__init__``)."""
    out = {}
    for path in sorted((root / package).rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        is_pkg = parts[-1] == "__init__"
        if is_pkg:
            parts.pop()
        out[".".join(parts)] = (path, is_pkg)
    return out


def imports(name: str, path: Path, is_pkg: bool, known: set[str]) -> Iterator[str]:
    """The modules of the package that ``name`` imports, anywhere in its source.

    ``from a import b`` counts as an import of ``a.b`` when that is a module
    (``from . import x`` of a submodule), else of ``a``; an import of a name
    that is not a module of the package counts as its nearest enclosing one."""
    here = name.split(".") if is_pkg else name.split(".")[:-1]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = here[: len(here) - node.level + 1]
                base = ".".join([*parts, node.module] if node.module else parts)
            else:
                base = node.module or ""
            targets = [
                f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names
            ]
        else:
            continue
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                yield target


def graph(root: Path = ROOT, package: str = PACKAGE) -> dict[str, set[str]]:
    mods = modules(root, package)
    known = set(mods)
    return {name: set(imports(name, path, is_pkg, known)) for name, (path, is_pkg) in mods.items()}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        x = stack.pop()
                        on_stack.discard(x)
                        comp.append(x)
                        if x == v:
                            break
                    if len(comp) > 1:
                        found.append(sorted(comp))
            elif w not in index:
                index[w] = low[w] = len(index)
                stack.append(w)
                on_stack.add(w)
                work.append((w, iter(sorted(edges[w]))))
            elif w in on_stack:
                low[v] = min(low[v], index[w])
    return found


def test_no_import_cycle() -> None:
    left = cycles(graph())
    assert left == [], f"import cycles (each module imports the next, around): {left}"


def test_the_cycle_finder_sees_every_kind_of_import(tmp_path: Path) -> None:
    """A cycle made only by a type-only import, one inside a function, or a
    submodule named by ``from . import``, absolute or relative, is found."""
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    files = {
        "a.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .b import B\n",
        "b.py": "def f():\n    import pkg.a\n",
        "c.py": "from .sub import d\n",
        "sub/d.py": "from .. import c\n",
        "e.py": "from pkg.sub.f import x\n",
        "sub/f.py": "x = 1\n",
    }
    for name, text in files.items():
        (pkg / name).write_text(text)
    found = {frozenset(c) for c in cycles(graph(tmp_path, "pkg"))}
    assert found == {frozenset({"pkg.a", "pkg.b"}), frozenset({"pkg.c", "pkg.sub.d"})}
    assert graph(tmp_path, "pkg")["pkg.e"] == {"pkg.sub.f"}


def test_store_is_a_plain_class() -> None:
    assert Store.__bases__ == (object,)
    assert Store.__mro__ == (Store, object)


def test_nothing_below_the_shells_imports_store() -> None:
    edges = graph()
    importers = sorted(m for m, targets in edges.items() if "branchmem.store" in targets)
    below = [m for m in importers if not m.startswith(SHELLS) and m not in MAY_IMPORT_STORE]
    assert below == [], f"these import branchmem.store; type them with branchmem.api: {below}"
    # And none reaches it through the package's front door either.
    front = [
        m
        for m, targets in edges.items()
        if "branchmem" in targets and not m.startswith(SHELLS) and m not in MAY_IMPORT_STORE
    ]
    assert front == [], f"these import the package itself (and so Store): {front}"


# What a search runs: retrieval reaches down to the engine's layers only. Code
# built on `StoreAPI` (evaluation included, in the package `branchmem_eval`)
# lives above it, never inside it.
ABOVE_RETRIEVAL = ("branchmem.api", "branchmem.store", "branchmem.context", "branchmem.front")


def test_retrieval_imports_nothing_above_it() -> None:
    up = sorted(
        f"{m} -> {t}"
        for m, targets in graph().items()
        if m.startswith("branchmem.retrieval")
        for t in targets
        if t.startswith(ABOVE_RETRIEVAL)
    )
    assert up == [], f"retrieval holds what a search runs; move these up a layer: {up}"


def absolute_imports(path: Path) -> set[str]:
    """The top-level packages ``path`` imports by absolute name, anywhere in it."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {a.name.partition(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            found.add(node.module.partition(".")[0])
    return found


def test_only_the_shells_import_the_evaluation_package() -> None:
    """`branchmem_eval` is built on the library; the library reaches it only from
    the command line (``branchmem eval``)."""
    users = sorted(
        name
        for name, (path, _) in modules().items()
        if not name.startswith(SHELLS) and "branchmem_eval" in absolute_imports(path)
    )
    assert users == [], f"only the shells may use branchmem_eval: {users}"


def test_no_module_is_over_max_lines() -> None:
    sizes = {n: len(p.read_text(encoding="utf-8").splitlines()) for n, (p, _) in modules().items()}
    over = {n: lines for n, lines in sizes.items() if lines > MAX_LINES}
    assert over == {}, f"split these by responsibility (lines): {over}"


def self_uses(source: str) -> list[str]:
    """What the functions of ``source`` do with their first parameter, ``self``,
    other than read ``self._engine``, and where; also a ``self`` not typed `Front`."""
    bad = []
    for fn in ast.walk(ast.parse(source)):
        if not isinstance(fn, ast.FunctionDef):
            continue
        first = (fn.args.posonlyargs + fn.args.args)[:1]
        if not first or first[0].arg != "self":
            bad.append(f"{fn.name}: its first parameter is not self")
            continue
        if not (isinstance(first[0].annotation, ast.Name) and first[0].annotation.id == "Front"):
            bad.append(f"{fn.name}: self is not typed Front")
        engine = {
            id(node.value)
            for node in ast.walk(fn)
            if isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "self"
            and node.attr == "_engine"
            and isinstance(node.ctx, ast.Load)
        }
        for node in ast.walk(fn):
            if isinstance(node, ast.Name) and node.id == "self" and id(node) not in engine:
                bad.append(f"{fn.name}:{node.lineno}: self used other than as self._engine")
    return bad


def front_modules() -> dict[str, Path]:
    return {n: p for n, (p, _) in modules().items() if n.startswith("branchmem.front.")}


def test_the_doors_touch_self_only_as_its_engine() -> None:
    found = front_modules()
    assert set(found) >= {"branchmem.front.reads", "branchmem.front.search"}
    for name, path in found.items():
        assert self_uses(path.read_text(encoding="utf-8")) == [], name


def test_the_door_check_sees_every_other_use_of_self() -> None:
    source = (
        "def ok(self: Front, x: int) -> int:\n    return f(self._engine, x)\n"
        "def attr(self: Front) -> None:\n    self._engine.backend.close()\n"
        "def other(self: Front) -> int:\n    return self.memories(at=None)\n"
        "def whole(self: Front) -> None:\n    g(self)\n"
        "def sets(self: Front) -> None:\n    self._engine = None\n"
        "def untyped(self) -> None:\n    f(self._engine)\n"
        "def none(x: int) -> None: ...\n"
    )
    found = self_uses(source)
    assert not any(b.startswith("ok") for b in found)
    assert not any(b.startswith("attr") for b in found)  # the engine's own attributes are its
    for name in ("other", "whole", "sets", "untyped", "none"):
        assert any(b.startswith(name) for b in found), name


def test_every_door_is_bound_on_store_under_its_name() -> None:
    doors = {}
    for name in front_modules():
        module = importlib.import_module(name)
        for attr, value in vars(module).items():
            if isinstance(value, types.FunctionType) and value.__module__ == name:
                assert not attr.startswith("_"), f"{name}.{attr}: a door is public"
                assert attr not in doors, f"{attr} is a door twice"
                doors[attr] = value
    assert doors, "no door found"
    for attr, door in doors.items():
        assert Store.__dict__.get(attr) is door, f"Store.{attr} is not {door.__module__}.{attr}"
    # What Store writes itself: opening, closing, and handing itself to a layer above.
    own = {
        n
        for n, v in vars(Store).items()
        if not n.startswith("_") and inspect.isfunction(v) and v.__module__ == "branchmem.store"
    }
    assert own == {
        "close", "consolidate", "context", "extract", "import_export", "profile", "start_worker"
    }  # fmt: skip
    # And all a door's self declares is the engine.
    assert branchmem.front.Front.__annotations__ == {"_engine": "Engine"}
