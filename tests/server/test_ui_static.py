"""The inspector's files: shipped in the package, nothing fetched from elsewhere."""

from __future__ import annotations

import re

from branchmem.ui import STATIC_DIR

FILES = ["index.html", "app.js", "api.js", "tree.js", "versions.js", "edges.js", "style.css"]


def test_every_file_is_shipped() -> None:
    for name in FILES:
        assert (STATIC_DIR / name).is_file(), name


def test_no_outside_address_in_any_file() -> None:
    # No CDN, font service or analytics: the page must work with no network.
    for path in STATIC_DIR.iterdir():
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"(https?:)?//[a-z0-9.-]+\.[a-z]{2,}", text, re.I), path.name


def test_the_key_goes_only_into_the_authorization_header() -> None:
    api = (STATIC_DIR / "api.js").read_text(encoding="utf-8")
    assert '"Authorization": "Bearer " + getKey()' in api
    for path in STATIC_DIR.glob("*.js"):
        text = path.read_text(encoding="utf-8")
        # The key is read in api.js and app.js's fragment reader only, never put in a URL.
        assert "localStorage" not in text, path.name
        assert not re.search(r"[?&]key=", text), path.name
