"""The web inspector: static files (plain HTML, CSS and JavaScript modules) that
`branchmem serve` mounts at ``/ui``. No build step and no network access beyond
the server's own API: the page works offline."""

from __future__ import annotations

from pathlib import Path

STATIC_DIR = Path(__file__).with_name("static")
"""Where the inspector's files live inside the installed package."""
