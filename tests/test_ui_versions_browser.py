"""The inspector's versions in a real browser (Debian's chromium via Playwright):
the `‹ 2/2 ›` switcher on siblings, edited/regenerated marks, short ids with the
full one on hover. Layout is asserted from element boxes, never from pixels."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from branchmem import Store
from test_ui_browser import _cli, _history, _serving, page  # noqa: F401 (a fixture)

LONG = "x_3064d52c9f1e4b7a8d2c6e0f1a2b3c4d"  # 34 characters, like a generated id


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, str]]:
    db = tmp_path / "mem.db"
    _history(db)
    with Store(db) as s:
        s.add_event(LONG, parent="a3r", role="user", content="再说说西湖", namespace="alice")
    key = _cli("keys", "create", "--db", str(db), "--principal", "alice", "--grant", "alice:write")
    with _serving(db) as base:
        yield base, key.strip().splitlines()[-1]


def _box(pg: Any, selector: str) -> dict[str, float]:
    box = pg.locator(selector).first.bounding_box()
    assert box is not None, selector
    return dict(box)


def test_versions_on_screen(served: tuple[str, str], page: Any, tmp_path: Path) -> None:  # noqa: F811
    base, key = served
    page.goto(f"{base}/ui?ns=alice&at=a3r#key={key}")
    page.wait_for_selector('#memories [data-memory-id="m-a3r"][data-visible="true"]')
    row = '#tree [data-event-id="u2b"]'
    assert page.inner_text(f"{row} .versions").replace("\n", "") == "‹2/2›"
    assert page.get_attribute(f"{row} .versions", "aria-label") == "version 2 of 2"
    assert page.inner_text(f"{row} .tag.mark") == "edited"
    assert page.inner_text('#tree [data-event-id="a3r"] .tag.mark') == "regenerated"
    assert page.query_selector('#tree [data-event-id="u2"] .tag.mark') is None  # version 1
    assert page.query_selector('#tree [data-event-id="u1"] .versions') is None  # no sibling
    # The long id is cut, the full one is on hover.
    long_row = f'#tree [data-event-id="{LONG}"] .id'
    shown = page.inner_text(long_row)
    assert shown != LONG and len(shown) <= 14 and shown.startswith(LONG[:6])
    assert page.get_attribute(long_row, "title") == LONG
    # Layout: the switcher sits on its row, right of the id, and left of the text.
    r, ids, sw = _box(page, row), _box(page, f"{row} .id"), _box(page, f"{row} .versions")
    assert r["y"] <= sw["y"] and sw["y"] + sw["height"] <= r["y"] + r["height"] + 1
    assert sw["x"] >= ids["x"] + ids["width"] - 1
    # Versions are indented below their parent, one level in, not drawn as a follow-up.
    parent = _box(page, '#tree [data-event-id="u1"] .role')
    assert _box(page, f"{row} .role")["x"] > parent["x"]
    page.screenshot(path=str(tmp_path / "versions.png"))
    assert (tmp_path / "versions.png").stat().st_size > 10_000
    # ‹ on the regenerated reply switches to the first version: the anchor moves.
    page.click('#tree [data-event-id="a3r"] .vgo[data-go="a3"]')
    page.wait_for_selector('#memories [data-memory-id="m-a3"][data-visible="true"]')
    assert page.inner_text("#anchor-label") == "a3"
    assert "at=a3" in page.url
