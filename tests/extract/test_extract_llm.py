"""LLMExtractor against a scripted local server standing in for the model."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from branchmem import Store
from branchmem.errors import ExtractionError, InvalidInput
from branchmem.extract import LLMExtractor, extract
from branchmem.extract.llm import parse_reply


class Script:
    """Replies handed out in order; each is (status, content or raw body, delay)."""

    def __init__(self) -> None:
        self.replies: list[tuple[int, Any, float]] = []
        self.requests: list[dict[str, Any]] = []

    def reply(self, content: Any, *, status: int = 200, delay: float = 0.0) -> None:
        self.replies.append((status, content, delay))


@pytest.fixture
def server() -> Iterator[tuple[str, Script]]:
    script = Script()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            script.requests.append(
                {"path": self.path, "auth": self.headers.get("Authorization"), **json.loads(body)}
            )
            status, content, delay = script.replies.pop(0)
            time.sleep(delay)
            if status == 200 and not isinstance(content, bytes):
                text = content if isinstance(content, str) else json.dumps(content)
                payload = json.dumps({"choices": [{"message": {"content": text}}]}).encode()
            else:
                payload = content if isinstance(content, bytes) else b'{"error": "boom"}'
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
            except OSError:
                pass  # the client gave up (the timeout test)

        def log_message(self, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/v1", script
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.fixture
def convo(store: Store) -> Store:
    store.add_events(
        [
            {"id": "e1", "content": "我在腾讯做产品经理。"},
            {"id": "e2", "parent": "e1", "role": "assistant", "content": "好的。"},
            {"id": "e3", "parent": "e2", "content": "我换工作了，现在在阿里巴巴上班。"},
            {"id": "x3", "parent": "e2", "content": "我喜欢爬山。"},
        ]
    )
    store.add_memory("用户在腾讯工作", sources=["e1"], key="user.employer", id="m-tencent")
    return store


def facts(items: list[dict[str, Any]]) -> dict[str, Any]:
    return {"memories": items}


def test_well_formed_reply_is_written_through_the_gate(
    server: tuple[str, Script], convo: Store
) -> None:
    url, script = server
    script.reply(
        facts(
            [
                {
                    "op": "update",
                    "content": "用户在阿里巴巴工作",
                    "key": "user.employer",
                    "target": "m-tencent",
                    "sources": ["e3"],
                },
                {
                    "op": "add",
                    "content": "用户是产品经理",
                    "key": "user.job",
                    "target": None,
                    "sources": ["e1"],
                },
            ]
        )
    )
    llm = LLMExtractor(base_url=url, model="m", api_key="k-1")
    written = convo.extract(at="e3", extractor=llm)
    assert [m.content for m in written] == ["用户在阿里巴巴工作", "用户是产品经理"]
    assert sorted(m.content for m in convo.memories(at="e3")) == [
        "用户在阿里巴巴工作",
        "用户是产品经理",
    ]
    assert [m.content for m in convo.memories(at="x3")] == ["用户在腾讯工作", "用户是产品经理"]
    req = script.requests[0]
    assert req["path"] == "/v1/chat/completions" and req["auth"] == "Bearer k-1"
    assert req["model"] == "m" and req["temperature"] == 0
    assert req["max_tokens"] == 1024  # every reply is capped
    prompt = req["messages"][1]["content"]
    assert (
        "e3 | user | 我换工作了" in prompt
        and "m-tencent | user.employer | 用户在腾讯工作" in prompt
    )
    assert "x3" not in prompt  # only the window's path is shown
    assert "长期记忆" in req["messages"][0]["content"]  # auto language: Chinese


def test_malformed_then_good_retries_once(server: tuple[str, Script], convo: Store) -> None:
    url, script = server
    script.reply("Sure! Here are the memories: ...")
    script.reply(
        "```json\n"
        + json.dumps(facts([{"op": "add", "content": "c", "sources": ["e3"]}]))
        + "\n```"
    )
    written = convo.extract(at="e3", extractor=LLMExtractor(url, "m"))
    assert [m.content for m in written] == ["c"]
    assert len(script.requests) == 2
    assert script.requests[1]["messages"][-2]["content"] == "Sure! Here are the memories: ..."


@pytest.mark.parametrize(
    "bad",
    [
        "not json at all " * 30,
        {"facts": []},
        {"memories": [{"op": "add", "content": 3, "sources": ["e3"]}]},
        {"memories": [{"op": "upsert", "content": "x", "sources": ["e3"]}]},
        {"memories": [{"op": "add", "content": "x", "sources": "e3"}]},
        {"memories": ["x"]},
    ],
)
def test_malformed_twice_is_an_error_and_writes_nothing(
    server: tuple[str, Script], convo: Store, bad: Any
) -> None:
    url, script = server
    script.reply(bad)
    script.reply(bad)
    with pytest.raises(ExtractionError, match="replied twice") as info:
        convo.extract(at="e3", extractor=LLMExtractor(url, "m"))
    sent = bad if isinstance(bad, str) else json.dumps(bad)
    assert info.value.reply == sent[:200]
    assert [m.id for m in convo.memories(at="e3")] == ["m-tencent"]


def test_off_path_sources_and_unknown_targets_are_dropped(
    server: tuple[str, Script], convo: Store
) -> None:
    url, script = server
    script.reply(
        facts(
            [
                {"op": "add", "content": "用户喜欢爬山", "sources": ["x3"]},
                {"op": "add", "content": "invented", "sources": ["e99"]},
                {"op": "delete", "content": "", "target": "m-nowhere", "sources": ["e3"]},
                {"op": "update", "content": "x", "target": None, "sources": ["e3"]},
                {"op": "add", "content": "用户在阿里巴巴工作", "sources": ["e3"]},
            ]
        )
    )
    done = extract(convo, "e3", extractor=LLMExtractor(url, "m"))
    assert [m.content for m in done.written] == ["用户在阿里巴巴工作"]
    reasons = [d.reason for d in done.dropped]
    assert len(reasons) == 4
    assert (
        "not events read on the path" in reasons[0] and "not events read on the path" in reasons[1]
    )
    assert "not a memory visible" in reasons[2] and "needs target" in reasons[3]
    assert not any("爬山" in m.content for m in convo.memories(at="x3"))


def test_slow_reply_times_out(server: tuple[str, Script], convo: Store) -> None:
    url, script = server
    script.reply(facts([]), delay=1.5)
    with pytest.raises(ExtractionError, match=r"did not answer within 0\.3s"):
        convo.extract(at="e3", extractor=LLMExtractor(url, "m", timeout=0.3))
    assert [m.id for m in convo.memories(at="e3")] == ["m-tencent"]


@pytest.mark.parametrize("status", [401, 404, 500])
def test_http_error_is_clear(server: tuple[str, Script], convo: Store, status: int) -> None:
    url, script = server
    script.reply(b'{"error": "no such model"}', status=status)
    with pytest.raises(ExtractionError, match=f"HTTP {status}") as info:
        convo.extract(at="e3", extractor=LLMExtractor(url, "m"))
    assert "no such model" in info.value.reply
    assert [m.id for m in convo.memories(at="e3")] == ["m-tencent"]


def test_not_a_chat_completion_and_unreachable(server: tuple[str, Script], convo: Store) -> None:
    url, script = server
    script.reply(b'{"data": []}')
    with pytest.raises(ExtractionError, match="chat completions shape"):
        convo.extract(at="e3", extractor=LLMExtractor(url, "m"))
    dead = LLMExtractor("http://127.0.0.1:9/v1", "m", timeout=2)
    with pytest.raises(ExtractionError, match=r"could not reach|did not answer"):
        convo.extract(at="e3", extractor=dead)


def test_no_user_message_in_the_window_makes_no_call(
    server: tuple[str, Script], convo: Store
) -> None:
    url, script = server
    assert convo.extract(at="e2", extractor=LLMExtractor(url, "m"), window=1) == []
    assert script.requests == []


def test_bad_settings() -> None:
    with pytest.raises(InvalidInput, match="base_url"):
        LLMExtractor("localhost:8000", "m")
    with pytest.raises(InvalidInput, match="model"):
        LLMExtractor("http://h/v1", "")
    with pytest.raises(InvalidInput, match="timeout"):
        LLMExtractor("http://h/v1", "m", timeout=0)
    with pytest.raises(InvalidInput, match="language"):
        LLMExtractor("http://h/v1", "m", language="fr")
    for bad in (0, 8, 1.5, True, "512"):
        with pytest.raises(InvalidInput, match="max_tokens"):
            LLMExtractor("http://h/v1", "m", max_tokens=bad)  # type: ignore[arg-type]


def test_parse_reply_accepts_the_documented_shape() -> None:
    got = parse_reply(
        '{"memories": [{"op": "delete", "content": "", "key": null, "target": "m1", '
        '"sources": ["e2"]}]}'
    )
    assert got[0].op == "delete" and got[0].target == "m1" and got[0].sources == ("e2",)
