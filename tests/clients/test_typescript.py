"""The TypeScript client (clients/typescript) from the Python suite, so the README's
test command covers it: its types checked against the server's OpenAPI document
(and that check shown to fail when a route changes), its build, and its Node tests
against a real `branchmem serve`. Skipped where node or the package's node_modules
(`npm ci` in clients/typescript) are absent."""

from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="the server extra is not installed")

PACKAGE = Path(__file__).resolve().parents[2] / "clients" / "typescript"
NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(
    NODE is None or not (PACKAGE / "node_modules").is_dir(),
    reason="node or clients/typescript/node_modules is absent (cd clients/typescript && npm ci)",
)


def _node(*args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    """``node ARGS`` in the package, with this Python serving (BRANCHMEM_PYTHON)."""
    return subprocess.run(
        [str(NODE), *args],
        cwd=PACKAGE,
        env={**os.environ, "BRANCHMEM_PYTHON": sys.executable},
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def _openapi() -> dict[str, object]:
    from branchmem import Store
    from branchmem.server.app import create_app

    doc = create_app(Store(), None, mcp=False).openapi()
    doc["info"].pop("version", None)
    return doc


def test_the_types_match_the_servers_openapi_document() -> None:
    done = _node("scripts/openapi.mjs", "--check")
    assert done.returncode == 0, done.stderr


def test_the_check_fails_when_a_route_changes(tmp_path: Path) -> None:
    doc = _openapi()
    paths = doc["paths"]
    assert isinstance(paths, dict)
    del paths["/v1/namespaces/{namespace}/extract"]
    forget = copy.deepcopy(paths["/v1/namespaces/{namespace}/touch"])
    forget["post"]["operationId"] = "post_forget"
    paths["/v1/namespaces/{namespace}/forget"] = forget
    changed = tmp_path / "openapi.json"
    changed.write_text(json.dumps(doc))
    done = _node("scripts/openapi.mjs", "--check", "--from", str(changed))
    assert done.returncode == 1
    ns = "/v1/namespaces/{namespace}"
    assert f"routes the server has and the types lack: {ns}/forget" in done.stderr
    assert f"routes the types have and the server lacks: {ns}/extract" in done.stderr
    assert "npm run generate" in done.stderr
    # The same document unchanged passes: the check compares, it does not always fail.
    changed.write_text(json.dumps(_openapi()))
    assert _node("scripts/openapi.mjs", "--check", "--from", str(changed)).returncode == 0


def test_the_package_builds_and_its_node_tests_pass() -> None:
    tsc = _node("node_modules/typescript/bin/tsc", "-p", "tsconfig.json")
    assert tsc.returncode == 0, tsc.stdout + tsc.stderr
    tests = sorted(str(p.relative_to(PACKAGE)) for p in (PACKAGE / "test").glob("*.test.mjs"))
    assert tests, "no Node tests found"
    done = _node("--test", *tests)
    assert done.returncode == 0, done.stdout[-8000:] + done.stderr[-4000:]
    assert "# fail 0" in done.stdout
