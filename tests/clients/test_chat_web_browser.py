"""The chat page (examples/chat-web) in a real browser: Debian's chromium driven by
Playwright, on the built TypeScript client, against `branchmem serve` (no keys,
loopback) behind the page's own small server. Send, edit a user message,
regenerate a reply, switch versions, and the memories visible at the tip."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi", reason="the server extra is not installed")
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "clients" / "typescript"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
NODE = shutil.which("node")
pytestmark = [
    pytest.mark.skipif(
        CHROMIUM is None, reason="Debian's chromium is not installed (apt-get install -y chromium)"
    ),
    pytest.mark.skipif(
        NODE is None or not (PACKAGE / "node_modules").is_dir(),
        reason="node or clients/typescript/node_modules is absent (npm ci in clients/typescript)",
    ),
]
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]


@pytest.fixture
def chat_url(tmp_path: Path) -> Iterator[str]:
    """The page's server, passing the API through to `branchmem serve` on a fresh store."""
    from helpers.serve_proc import free_port, serving, wait_healthy  # httpx: the server extra

    tsc = [str(NODE), "node_modules/typescript/bin/tsc", "-p", "tsconfig.json"]
    subprocess.run(tsc, cwd=PACKAGE, check=True, timeout=180)  # the page imports dist/
    args = ["--db", str(tmp_path / "mem.db"), "--no-auth", "--embedder", "hashing", "--no-mcp"]
    with serving(args, tmp_path) as [api]:
        port = free_port()
        page_server = [str(NODE), str(ROOT / "examples/chat-web/serve.mjs")]
        with (tmp_path / "page.log").open("wb") as log:
            proc = subprocess.Popen(
                [*page_server, "--api", api, "--port", str(port)], stdout=log, stderr=log
            )
        url = f"http://127.0.0.1:{port}"
        try:
            wait_healthy(proc, url, tmp_path / "page.log", 30)  # it passes /healthz on
            yield url
        finally:
            proc.terminate()
            proc.wait(timeout=15)


@pytest.fixture
def page() -> Iterator[Any]:
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            pg = browser.new_page(viewport={"width": 1200, "height": 800})
            pg.set_default_timeout(120_000)  # a loaded machine; no wait here is a timing test
            yield pg
        finally:
            browser.close()


def _settled(page: Any) -> None:
    page.wait_for_selector('body[data-busy="false"]', state="attached")


def _send(page: Any, text: str) -> None:
    page.fill("#input", text)
    page.click("#composer button")
    page.wait_for_selector(f'#messages .msg[data-role="user"] .text >> text="{text}"')
    _settled(page)


def _texts(page: Any) -> list[str]:
    return [t.strip() for t in page.locator("#messages .msg .text").all_inner_texts()]


def _memories(page: Any) -> dict[str, str]:
    items = page.query_selector_all("#memory-list .memory")
    return {e.inner_text().split("\n")[0]: e.get_attribute("data-visible") for e in items}


def test_send_edit_regenerate_switch(chat_url: str, page: Any, tmp_path: Path) -> None:
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(f"{chat_url}/?ns=demo")
    _settled(page)
    assert _texts(page) == []
    _send(page, "Hello, I am planning a move.")
    _send(page, "I live in Chengdu.")
    assert len(_texts(page)) == 4
    assert _memories(page) == {"The user lives in Chengdu": "true"}

    # Edit the second user message: a new version, the old one's memory hidden at the tip.
    second = page.locator('#messages .msg[data-role="user"]').nth(1)
    second.locator("button.edit").click()
    page.fill("#messages textarea.edit-text", "I live in Hangzhou.")
    page.click("#messages button.save")
    page.wait_for_selector('#messages .msg .text >> text="I live in Hangzhou."')
    _settled(page)
    assert "I live in Chengdu." not in _texts(page)
    edited = page.locator('#messages .msg[data-role="user"]').nth(1)
    assert edited.locator(".versions").inner_text().replace("\n", "") == "‹2/2›"
    assert _memories(page) == {
        "The user lives in Chengdu": "false",
        "The user lives in Hangzhou": "true",
    }
    why = page.inner_text('#memory-list .memory[data-visible="false"] .why')
    assert why.startswith("hidden at 'a-") and "is not on the path" in why

    # Regenerate the last reply twice: ‹ 3/3 ›, then ‹ goes back to 2/3.
    for n in (2, 3):
        page.locator('#messages .msg[data-role="assistant"]').last.locator("button.regen").click()
        page.wait_for_selector(f'#messages .msg[data-role="assistant"] .count >> text="{n}/{n}"')
        _settled(page)
    last = page.locator('#messages .msg[data-role="assistant"]').last
    assert last.locator(".text").inner_text().startswith("Noted (take 3)")
    last.locator("button.prev").click()
    page.wait_for_selector('#messages .msg[data-role="assistant"] .count >> text="2/3"')
    _settled(page)
    reply = page.locator('#messages .msg[data-role="assistant"]').last.locator(".text")
    assert reply.inner_text().startswith("Understood")
    assert page.get_attribute(
        '#messages .msg[data-role="assistant"] >> nth=-1 >> .versions', "aria-label"
    ) == ("version 2 of 3")
    # The side panel sits right of the conversation.
    chat, panel = page.locator("#chat").bounding_box(), page.locator("#memories").bounding_box()
    assert chat is not None and panel is not None and panel["x"] >= chat["x"] + chat["width"]
    page.screenshot(path=str(tmp_path / "chat.png"), full_page=True)
    assert (tmp_path / "chat.png").stat().st_size > 10_000

    # ‹ on the edited message switches back to the first version, and its memory.
    page.locator('#messages .msg[data-role="user"]').nth(1).locator("button.prev").click()
    page.wait_for_selector('#messages .msg .text >> text="I live in Chengdu."')
    _settled(page)
    assert _memories(page) == {
        "The user lives in Chengdu": "true",
        "The user lives in Hangzhou": "false",
    }
    # A reload finds the newest branch again from the store (nothing kept in the page).
    page.reload()
    page.wait_for_selector("#messages .msg")
    _settled(page)
    assert len(_texts(page)) == 4
    assert errors == []
