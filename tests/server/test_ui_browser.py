"""The inspector in a real browser: Debian's chromium driven by Playwright, against
`branchmem serve` started as a real process on a free loopback port."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from branchmem import Store

pytest.importorskip("fastapi", reason="the server extra is not installed")
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="Debian's chromium is not installed (apt-get install -y chromium)"
)
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def _cli(*args: str) -> str:
    out = subprocess.run(
        [sys.executable, "-m", "branchmem", *args],
        check=True,
        capture_output=True,
        text=True,
        timeout=60,
    )
    return out.stdout


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _history(db: Path) -> None:
    """An edit (u2 -> u2b) and a regeneration (a3 -> a3r), with one memory each."""
    with Store(db) as s:
        s.add_events(
            [
                {
                    "namespace": "alice",
                    "id": "u1",
                    "role": "user",
                    "content": "你好，我在准备搬家。",
                },
                {
                    "namespace": "alice",
                    "id": "u2",
                    "parent": "u1",
                    "role": "user",
                    "content": "我下个月搬去成都。",
                },
                {
                    "namespace": "alice",
                    "id": "u2b",
                    "parent": "u1",
                    "role": "user",
                    "content": "我下个月搬去杭州。",
                },
                {
                    "namespace": "alice",
                    "id": "a3",
                    "parent": "u2b",
                    "role": "assistant",
                    "content": "杭州很美。",
                },
                {
                    "namespace": "alice",
                    "id": "a3r",
                    "parent": "u2b",
                    "role": "assistant",
                    "content": "杭州的西湖很有名。",
                },
            ]
        )
        s.add_memory("用户下个月搬去成都", sources=["u2"], id="m-cd", namespace="alice")
        s.add_memory("用户下个月搬去杭州", sources=["u2b"], id="m-hz", namespace="alice")
        s.add_memory("助手说杭州很美", sources=["a3"], id="m-a3", namespace="alice")
        s.add_memory("助手提到西湖", sources=["a3r"], id="m-a3r", namespace="alice")
        s.set_branch("main", "a3r", namespace="alice")
        s.snapshot("main", "before-regen", namespace="alice")


@contextmanager
def _serving(db: Path) -> Iterator[str]:
    """`branchmem serve` on ``db`` as a real process on a free loopback port."""
    port = _free_port()
    log = db.with_suffix(".log")  # a file, not a pipe: a full pipe would stall the server
    command = [sys.executable, "-m", "branchmem", "serve", "--db", str(db)]
    with log.open("wb") as err:
        proc = subprocess.Popen(
            [*command, "--host", "127.0.0.1", "--port", str(port)],
            stdout=subprocess.DEVNULL,
            stderr=err,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60  # generous: CI machines can be loaded
        while True:
            try:
                urllib.request.urlopen(f"{base}/healthz", timeout=1).read()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(log.read_text()) from None
                time.sleep(0.2)
        yield base
    finally:
        proc.terminate()
        proc.wait(timeout=15)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, str]]:
    db = tmp_path / "mem.db"
    _history(db)
    key = _cli("keys", "create", "--db", str(db), "--principal", "alice", "--grant", "alice:write")
    with _serving(db) as base:
        yield base, key.strip().splitlines()[-1]


@pytest.fixture
def page(tmp_path: Path) -> Iterator[Any]:
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 800})
            # Every wait may take a while on a loaded machine; none of them is a timing test.
            page.set_default_timeout(120_000)
            yield page
        finally:
            browser.close()


def _memories(page: Any) -> dict[str, str]:
    els = page.query_selector_all("#memories [data-memory-id]")
    return {e.get_attribute("data-memory-id"): e.get_attribute("data-visible") for e in els}


def test_the_gate_on_screen(served: tuple[str, str], page: Any, tmp_path: Path) -> None:
    base, key = served
    requests: list[Any] = []
    page.on("request", lambda r: requests.append(r))
    page.goto(f"{base}/ui?ns=alice&at=a3r#key={key}")
    page.wait_for_selector('#memories [data-memory-id="m-a3r"][data-visible="true"]')
    assert _memories(page) == {"m-hz": "true", "m-a3r": "true", "m-cd": "false", "m-a3": "false"}
    why = page.inner_text('#memories [data-memory-id="m-cd"] .why')
    assert "u2" in why and "not on the path" in why
    # The path is highlighted, the edit and the regeneration are siblings in the tree.
    on_path = [e.get_attribute("data-event-id") for e in page.query_selector_all("#tree .on-path")]
    assert on_path == ["u1", "u2b", "a3r"]
    assert page.inner_text("#path").count("\n") >= 2
    # The key lives in sessionStorage, never in the address or any request's URL.
    assert key not in page.url
    assert page.evaluate("sessionStorage.getItem('branchmem.key')") == key
    assert requests and all(r.url.startswith(base) for r in requests)
    assert all(key not in r.url for r in requests)
    api_calls = [r for r in requests if "/v1/" in r.url]
    assert api_calls and all(r.headers.get("authorization") == f"Bearer {key}" for r in api_calls)

    # Clicking the abandoned edit moves the anchor: every panel follows, no reload.
    page.evaluate("window.__marker = 1")
    page.click('#tree [data-event-id="u2"]')
    page.wait_for_selector('#memories [data-memory-id="m-cd"][data-visible="true"]')
    assert _memories(page) == {"m-cd": "true", "m-hz": "false", "m-a3": "false", "m-a3r": "false"}
    assert page.evaluate("window.__marker") == 1
    assert "at=u2" in page.url and "ns=alice" in page.url
    assert page.inner_text("#anchor-label") == "u2"

    # Search is gated at the anchor and shows score parts.
    page.fill("#q", "搬去哪个城市")
    page.click("#search-form button")
    page.wait_for_selector("#hits .hit")
    hit_ids = [e.get_attribute("data-memory-id") for e in page.query_selector_all("#hits .hit")]
    assert hit_ids == ["m-cd"]
    assert "keyword" in page.inner_text("#hits")

    page.screenshot(path=str(tmp_path / "inspector.png"))
    _not_blank(tmp_path / "inspector.png")


def test_keyboard_moves_the_anchor(served: tuple[str, str], page: Any) -> None:
    base, key = served
    page.goto(f"{base}/ui?ns=alice&at=u1#key={key}")
    page.wait_for_selector('#tree [data-event-id="u1"].anchor')
    page.focus("#tree")
    page.keyboard.press("ArrowDown")  # u2 (the first child)
    page.keyboard.press("Enter")
    page.wait_for_selector('#tree [data-event-id="u2"].anchor')
    assert "at=u2" in page.url
    page.keyboard.press("ArrowDown")  # u2b
    page.keyboard.press("ArrowLeft")  # u2b has children: collapse it
    page.wait_for_selector('#tree [data-event-id="u2b"][aria-expanded="false"]')
    assert page.query_selector('#tree [data-event-id="a3"]') is None
    page.keyboard.press("ArrowRight")
    page.wait_for_selector('#tree [data-event-id="a3"]')
    page.keyboard.press("Enter")
    page.wait_for_selector('#memories [data-memory-id="m-hz"][data-visible="true"]')
    # Every control has a label a screen reader can read.
    for sel in ["#key", "#ns", "#q"]:
        ident = page.get_attribute(sel, "id")
        assert page.query_selector(f'label[for="{ident}"]') is not None


def test_a_wrong_key_is_refused_and_an_ungranted_namespace_is_not_found(
    served: tuple[str, str], page: Any
) -> None:
    base, key = served
    page.goto(f"{base}/ui?ns=alice#key=bm_not-a-key")
    page.locator("#status", has_text="not accepted").wait_for()
    page.goto(f"{base}/ui?ns=bob#key={key}")
    page.locator("#status", has_text="No namespace").wait_for()
    assert page.query_selector_all("#tree .ev") == []


def test_ten_thousand_events_draw_only_what_is_on_screen(tmp_path: Path, page: Any) -> None:
    db = tmp_path / "big.db"
    with Store(db) as s:
        events: list[dict[str, Any]] = [{"namespace": "big", "id": "n0", "content": "start"}]
        for i in range(1, 10_000):
            # A long conversation with a regeneration every 50 messages.
            parent = f"n{i - 2}" if i % 50 == 0 and i > 1 else f"n{i - 1}"
            events.append(
                {"namespace": "big", "id": f"n{i}", "parent": parent, "content": f"消息 {i}"}
            )
        s.add_events(events)
        s.add_memory("最后的事实", sources=["n9999"], id="m-last", namespace="big")
    key = _cli("keys", "create", "--db", str(db), "--principal", "p", "--grant", "big:read")
    with _serving(db) as base:
        page.goto(f"{base}/ui?ns=big&at=n9999#key={key.strip().splitlines()[-1]}")
        page.wait_for_selector('#memories [data-memory-id="m-last"][data-visible="true"]')
        assert page.inner_text("#tree-count") == "(10000)"
        drawn = len(page.query_selector_all("#tree .ev"))
        assert 0 < drawn < 200  # virtual: rows on screen plus a margin, not 10,000
        assert page.query_selector('#tree [data-event-id="n9999"].anchor') is not None
        # A scroll event between the press and the release (the one setting the
        # anchor's scroll position queues, arriving late on a loaded machine) must
        # not redraw the rows under the pointer and swallow the click.
        box = page.query_selector('#tree [data-event-id="n9990"]').bounding_box()
        page.mouse.move(box["x"] + 5, box["y"] + 5)
        page.mouse.down()
        page.evaluate("document.getElementById('tree').dispatchEvent(new Event('scroll'))")
        page.mouse.up()
        page.wait_for_selector('#memories [data-memory-id="m-last"][data-visible="false"]')
        assert page.query_selector('#tree [data-event-id="n9990"].anchor') is not None


def _not_blank(png: Path) -> None:
    import matplotlib.image as mpimg

    pixels = mpimg.imread(str(png))
    assert pixels.shape[0] > 100 and pixels.shape[1] > 100
    assert float(pixels.std()) > 0.02  # a blank page is one flat colour


def test_the_api_docs_render_with_no_network(
    served: tuple[str, str], page: Any, tmp_path: Path
) -> None:
    """/docs draws every operation from scripts the server itself serves: a
    request for anything elsewhere (a CDN) is refused, as it is offline."""
    base, _ = served
    elsewhere: list[str] = []

    def only_the_server(route: Any) -> None:
        if route.request.url.startswith(base):
            route.continue_()
        else:
            elsewhere.append(route.request.url)
            route.abort()

    page.route("**/*", only_the_server)
    page.goto(f"{base}/docs")
    page.wait_for_selector(".opblock", timeout=60_000)
    spec = json.loads(urllib.request.urlopen(f"{base}/openapi.json", timeout=10).read())
    operations = sum(len(ops) for ops in spec["paths"].values())
    page.wait_for_function(f"document.querySelectorAll('.opblock').length >= {operations}")
    assert "/v1/namespaces/{namespace}/events" in page.inner_text("body")
    assert elsewhere == []
    page.screenshot(path=str(tmp_path / "docs.png"))
    _not_blank(tmp_path / "docs.png")
