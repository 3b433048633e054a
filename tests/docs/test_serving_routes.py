"""docs/serving.md's "Routes" names every route the app serves, with its method."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytest.importorskip("fastapi")

from helpers.server_fixtures import make_served

DOC = Path(__file__).parents[2] / "docs" / "serving.md"
PREFIX = "/v1/namespaces/{namespace}/"


def _routes_section() -> str:
    text = DOC.read_text(encoding="utf-8")
    start = text.index("## Routes")
    return text[start : text.index("\n## ", start + 1)]


def test_every_served_route_is_listed() -> None:
    served = make_served()
    doc = _routes_section()
    missing = []
    for route in served.client.app.routes:
        path = getattr(route, "path", "")
        if path.endswith("oauth2-redirect"):
            continue  # a helper page of /docs
        for method in sorted(set(getattr(route, "methods", None) or ()) - {"HEAD"}):
            rel = path[len(PREFIX) :] if path.startswith(PREFIX) else path
            rel = re.sub(r"\{(event|memory|conflict)_id:path\}", "{id}", rel)
            rel = rel.replace("{name:path}", "{name}")
            said = rf"`(?:[A-Z]+\|)*{method}(?:\|[A-Z]+)* {re.escape(rel)}[`?]"
            if not re.search(said, doc):
                missing.append(f"{method} {rel}")
    served.store.close()
    assert not missing, f"docs/serving.md's Routes leaves out {missing}"
