"""``bench/public_recall.py`` run in a subprocess, as a user runs it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run_public_recall(tmp_path: Path, *args: str) -> list[str]:
    """The bench's output lines for ``args`` (it must exit 0)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "TMPDIR": str(tmp_path)}
    bench = str(ROOT / "bench" / "public_recall.py")
    run = subprocess.run(
        [sys.executable, bench, *args], capture_output=True, text=True, env=env, check=True
    )
    return run.stdout.splitlines()
