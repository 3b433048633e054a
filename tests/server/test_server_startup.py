"""What a served search's first call would pay is paid at startup: the array
library a search over many records ranks with is imported before the first
request, so the first search after a restart does not wait for it."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("numpy")
pytest.importorskip("fastapi")

SCRIPT = textwrap.dedent(
    """
    import sys
    from fastapi.testclient import TestClient
    from branchmem import Store
    from branchmem.server.app import create_app

    app = create_app(Store(), None, embedder="hashing")
    before = "numpy" in sys.modules
    with TestClient(app):  # startup ran; no request yet
        after = "numpy" in sys.modules
    print(before, after)
    """
)


def test_the_server_imports_numpy_at_startup_not_on_the_first_search() -> None:
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120, check=True
    )
    assert out.stdout.split() == ["False", "True"], out.stdout + out.stderr
