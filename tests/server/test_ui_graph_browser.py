"""The inspector's relations panel in a real browser (Debian's chromium via
Playwright): the edges visible at the anchor are drawn subject —predicate→
object, the hidden ones greyed below them with the gate's reason, and the
visible set is exactly `Store.graph(at).edges()`. Layout is asserted from
element boxes, never from pixels."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_ui_browser import _cli, _history, _serving, page  # noqa: F401 (a fixture)
from test_ui_browser import pytestmark as pytestmark  # skipped where chromium is not installed

from branchmem import Store


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, str, Path]]:
    db = tmp_path / "mem.db"
    _history(db)
    with Store(db) as s:
        add = s.add_edge
        add("用户", "lives in", "成都", sources=["u2"], id="g-cd", namespace="alice")
        add("用户", "lives in", "杭州", sources=["u2b"], id="g-hz", namespace="alice")
        add("用户", "likes", "西湖", sources=["a3r"], id="g-xh", namespace="alice")
        add("Alice", "owns", "auth-service", sources=["u1"], id="g-alice", namespace="alice")
        # On a3: Bob takes over auth-service (owns has one subject per object), so
        # Alice's edge is retracted there and only there.
        add("Bob", "owns", "auth-service", sources=["a3"], id="g-bob", namespace="alice")
    key = _cli("keys", "create", "--db", str(db), "--principal", "alice", "--grant", "alice:read")
    with _serving(db) as base:
        yield base, key.strip().splitlines()[-1], db


def _edges(pg: Any) -> dict[str, str]:
    els = pg.query_selector_all("#edges [data-edge-id]")
    return {e.get_attribute("data-edge-id"): e.get_attribute("data-visible") for e in els}


def _box(pg: Any, selector: str) -> dict[str, float]:
    box = pg.locator(selector).first.bounding_box()
    assert box is not None, selector
    return dict(box)


def _graph_ids(db: Path, at: str) -> set[str]:
    with Store(db) as s:
        return {e.id for e in s.graph(at=at, namespace="alice").edges()}


def test_relations_on_screen(served: tuple[str, str, Path], page: Any) -> None:  # noqa: F811
    base, key, db = served
    page.goto(f"{base}/ui?ns=alice&at=a3r#key={key}")
    page.wait_for_selector('#edges [data-edge-id="g-xh"][data-visible="true"]')
    got = _edges(page)
    assert got == {"g-hz": "true", "g-xh": "true", "g-alice": "true",
                   "g-cd": "false", "g-bob": "false"}  # fmt: skip
    assert {k for k, v in got.items() if v == "true"} == _graph_ids(db, "a3r")
    assert page.inner_text("#edge-count") == "(3 visible, 2 hidden)"
    # Edges are relations, not memory cards.
    assert not page.query_selector_all('#memories [data-memory-id^="g-"]')
    # Drawn subject —predicate→ object, left to right on one line.
    row = '#edges [data-edge-id="g-hz"]'
    assert page.inner_text(f"{row} .subj") == "用户"
    assert page.inner_text(f"{row} .pred") == "—lives in→"
    assert page.inner_text(f"{row} .obj") == "杭州"
    s, p, o = (_box(page, f"{row} {c}") for c in (".subj", ".pred", ".obj"))
    assert s["x"] + s["width"] <= p["x"] + 1 and p["x"] + p["width"] <= o["x"] + 1
    for b in (p, o):
        assert abs((b["y"] + b["height"] / 2) - (s["y"] + s["height"] / 2)) < 4
    # Hidden edges come after every visible one, greyed, with the gate's reason.
    ys = {k: _box(page, f'#edges [data-edge-id="{k}"]')["y"] for k in got}
    assert max(ys[k] for k in ("g-hz", "g-xh", "g-alice")) < min(ys["g-cd"], ys["g-bob"])
    why = page.inner_text('#edges [data-edge-id="g-cd"] .why')
    assert "u2" in why and "not on the path" in why
    grey = page.eval_on_selector(
        '#edges [data-edge-id="g-cd"]', "e => getComputedStyle(e).borderStyle"
    )
    solid = page.eval_on_selector(
        '#edges [data-edge-id="g-hz"]', "e => getComputedStyle(e).borderStyle"
    )
    assert (grey, solid) == ("dashed", "solid")
    # The panel sits below the memory cards, inside the memories column.
    panel, edges, mems = _box(page, "#mem-panel"), _box(page, "#edges"), _box(page, "#memories")
    assert edges["y"] >= mems["y"] + mems["height"] - 1
    assert (
        panel["x"] <= edges["x"] and edges["x"] + edges["width"] <= panel["x"] + panel["width"] + 1
    )

    # Moving the anchor to the first reply: Bob's edge appears, Alice's is retracted there.
    page.click('#tree [data-event-id="a3r"] .vgo[data-go="a3"]')
    page.wait_for_selector('#edges [data-edge-id="g-bob"][data-visible="true"]')
    got = _edges(page)
    assert got == {"g-hz": "true", "g-bob": "true", "g-alice": "false",
                   "g-cd": "false", "g-xh": "false"}  # fmt: skip
    assert {k for k, v in got.items() if v == "true"} == _graph_ids(db, "a3")
    assert "retract" in page.inner_text('#edges [data-edge-id="g-alice"] .why')
    # The retraction that supersedes Alice's edge stays a correction in the memories panel.
    assert "retracts: Alice owns auth-service" in page.inner_text("#memories")


def test_no_relations_says_so(tmp_path: Path, page: Any) -> None:  # noqa: F811
    db = tmp_path / "mem.db"
    _history(db)
    key = _cli("keys", "create", "--db", str(db), "--principal", "alice", "--grant", "alice:read")
    with _serving(db) as base:
        page.goto(f"{base}/ui?ns=alice&at=a3r#key={key.strip().splitlines()[-1]}")
        page.wait_for_selector("#edges .empty")
        assert "No relations" in page.inner_text("#edges")
        assert page.inner_text("#edge-count") == ""
