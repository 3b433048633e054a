"""The inspector's versions in a real browser (Debian's chromium via Playwright):
the `‹ 2/2 ›` switcher on siblings, edited/regenerated marks, short ids with the
full one on hover. Layout is asserted from element boxes, never from pixels."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_ui_browser import _cli, _history, _serving, page  # noqa: F401 (a fixture)
from test_ui_browser import pytestmark as pytestmark  # skipped where chromium is not installed

from branchmem import Store

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
    # Layout: the switcher sits on its row, at its right edge (right of the id and
    # of the text), so the middle of the row is the message, not an arrow.
    r, ids, sw = _box(page, row), _box(page, f"{row} .id"), _box(page, f"{row} .versions")
    assert r["y"] <= sw["y"] and sw["y"] + sw["height"] <= r["y"] + r["height"] + 1
    assert sw["x"] >= ids["x"] + ids["width"] - 1
    assert r["x"] + r["width"] - 12 <= sw["x"] + sw["width"] <= r["x"] + r["width"] + 1
    assert sw["x"] > r["x"] + r["width"] / 2
    text = _box(page, f"{row} .text")
    assert text["x"] + text["width"] <= sw["x"] + 1
    # Only the arrows are buttons; the count between them is text.
    assert page.locator(f"{row} .versions button").count() == 2
    assert page.get_attribute(f"{row} .vgo[data-go]", "aria-label") == "previous version: u2"
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


def test_a_click_in_the_middle_of_a_row_moves_the_anchor_there(
    served: tuple[str, str],
    page: Any,  # noqa: F811
) -> None:
    base, key = served
    page.goto(f"{base}/ui?ns=alice&at=u1#key={key}")
    page.wait_for_selector('#tree [data-event-id="u2"] .versions')

    def anchor_is(eid: str) -> None:
        page.wait_for_function(
            "id => document.querySelector('#anchor-label').textContent === id", arg=eid
        )

    def moved_from(eid: str) -> str:
        page.wait_for_function(
            "id => document.querySelector('#anchor-label').textContent !== id", arg=eid
        )
        return str(page.inner_text("#anchor-label"))

    # Rows whose switcher has a live arrow (u2: ›, a3r: ‹), clicked where a user
    # aims at the message: anywhere across the middle of the row.
    for eid in ("u2", "a3r"):
        row = f'#tree [data-event-id="{eid}"]'
        box = _box(page, row)
        for frac in (0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7):
            page.click('#tree [data-event-id="u1"] .role')
            anchor_is("u1")
            page.click(row, position={"x": box["width"] * frac, "y": box["height"] / 2})
            assert moved_from("u1") == eid, (eid, frac)
        # The arrows are at the row's right edge, the only buttons of the row.
        for arrow in page.locator(f"{row} .versions button").all():
            b = arrow.bounding_box()
            assert b is not None and b["x"] > box["x"] + 0.75 * box["width"]
    # The count between the arrows is no button either: a click there selects the row.
    page.click('#tree [data-event-id="u2b"] .vnum')
    anchor_is("u2b")


@pytest.fixture
def served_retracted(tmp_path: Path) -> Iterator[tuple[str, str, Path]]:
    db = tmp_path / "mem.db"
    _history(db)
    with Store(db) as s:
        s.retract("m-hz", sources=["a3r"], namespace="alice", id="r-hz")
        s.add_event("lonely", parent=None, namespace="empty")
    key = _cli("keys", "create", "--db", str(db), "--principal", "alice", "--grant",
               "alice:write", "--grant", "empty:write")  # fmt: skip
    with _serving(db) as base:
        yield base, key.strip().splitlines()[-1], db


def test_retractions_states_and_the_diff_on_screen(
    served_retracted: tuple[str, str, Path],
    page: Any,  # noqa: F811
    tmp_path: Path,
) -> None:
    base, key, db = served_retracted
    page.goto(f"{base}/ui?ns=alice&at=a3r#key={key}")
    page.wait_for_selector('#memories [data-memory-id="r-hz"]')
    card = '#memories [data-memory-id="r-hz"]'
    assert page.inner_text(f"{card} > span").startswith("retracts: 用户下个月搬去杭州")
    assert "r-hz" not in page.inner_text(f"{card} > span")
    with Store(db) as s:
        visible = len(s.memories(at="a3r", namespace="alice"))
        hidden = sum(1 for m in s.records(namespace="alice") if m.target is None) - visible
    # Counted as memories() counts them: the retraction is not one.
    assert page.inner_text("#mem-count") == f"({visible} visible, {hidden} hidden)"
    assert page.query_selector("#conflicts .empty") is not None
    # Moving the anchor highlights what appeared and lists what disappeared.
    page.click('#tree [data-event-id="u2"]')
    page.wait_for_selector('#memories [data-memory-id="m-cd"][data-change="appeared"]')
    gone = [
        e.get_attribute("data-memory-id")
        for e in page.query_selector_all('#diff [data-change="disappeared"]')
    ]
    with Store(db) as s:
        d = s.diff("a3r", "u2", namespace="alice")
    assert gone == [m.id for m in d.only_a] and gone
    assert [
        e.get_attribute("data-memory-id")
        for e in page.query_selector_all('[data-change="appeared"]')
    ] == [m.id for m in d.only_b]
    # The diff list sits below the memory cards, inside the panel.
    panel, diff = _box(page, "#mem-panel"), _box(page, "#diff")
    assert diff["y"] >= _box(page, "#memories")["y"] and diff["x"] >= panel["x"]
    page.screenshot(path=str(tmp_path / "diff.png"))
    assert (tmp_path / "diff.png").stat().st_size > 10_000
    # A namespace without branches, snapshots or memories says so, and a search
    # there ends in a "no results" state, not in nothing.
    page.goto(f"{base}/ui?ns=empty&at=lonely")
    page.wait_for_selector("#memories .empty")
    assert page.query_selector("#branches .empty") and page.query_selector("#snapshots .empty")
    page.fill("#q", "西湖")
    page.click("#search-form button")
    page.wait_for_selector("#hits .hit")
    assert "No visible memory matches" in page.inner_text("#hits")
