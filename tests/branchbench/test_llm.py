"""The answer path against a small local OpenAI-compatible server started by the test."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from branchbench.cli import main
from branchbench.llm import (
    CONFLICT_SENTENCE,
    ChatClient,
    LLMConfig,
    LLMError,
    build_messages,
    config_from,
)
from branchbench.report import load_run, summarize
from branchbench.systems import SYSTEMS


class FakeModel:
    """Records every request; answers with the user message, or with queued failures first."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.failures: list[int] = []
        self.lock = threading.Lock()

    def handler(self) -> type[BaseHTTPRequestHandler]:
        model = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with model.lock:
                    model.requests.append(
                        {"path": self.path, "auth": self.headers.get("Authorization"), "body": body}
                    )
                    status = model.failures.pop(0) if model.failures else 200
                if status != 200:
                    self.send_response(status)
                    self.end_headers()
                    self.wfile.write(b'{"error": "try later"}')
                    return
                # Deterministic: the answer repeats what the model was shown.
                answer = body["messages"][-1]["content"]
                data = json.dumps(
                    {"choices": [{"message": {"role": "assistant", "content": answer}}]}
                ).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        return Handler


@pytest.fixture
def fake() -> Iterator[tuple[FakeModel, str]]:
    model = FakeModel()
    server = ThreadingHTTPServer(("127.0.0.1", 0), model.handler())
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield model, f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def test_answer_run_and_report_recompute(
    fake: tuple[FakeModel, str], small_split: Path, tmp_path: Path
) -> None:
    model, base = fake
    out = tmp_path / "answers"
    code = main(
        [
            "run",
            "--scenarios",
            str(small_split),
            "--out",
            str(out),
            "--no-chart",
            "--base-url",
            base,
            "--model",
            "test-model",
            "--api-key",
            "sk-test",
            "--runs",
            "2",
            "--prompt",
            "conflict",
        ]
    )
    assert code == 0
    n_contexts = 5 * len(SYSTEMS)
    assert len(model.requests) == 2 * n_contexts
    first = model.requests[0]
    assert first["path"] == "/v1/chat/completions"
    assert first["auth"] == "Bearer sk-test"
    body = first["body"]
    assert body["model"] == "test-model" and body["temperature"] == 0
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert body["messages"][0]["content"].endswith(CONFLICT_SENTENCE)
    # The same system prompt for every system and question.
    assert len({r["body"]["messages"][0]["content"] for r in model.requests}) == 1

    answers = (out / "answers.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(answers) == 2 * n_contexts
    assert {json.loads(a)["run"] for a in answers} == {1, 2}
    saved = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summarize(load_run(out)) == saved
    assert "sk-test" not in (out / "run.json").read_text(encoding="utf-8")

    for name, s in saved["systems"].items():
        # The fake model repeats its context, so the answer leaks exactly when the context does.
        assert s["answer"]["leak_rate"] == s["context"]["leak_rate"], name
        assert s["answer"]["counts"]["leak"][1] == 2 * s["context"]["counts"]["leak"][1]
    assert saved["systems"]["branchmem"]["answer"]["leak_rate"] == 0.0
    assert saved["systems"]["full_history"]["answer"]["leak_rate"] == 1.0

    assert main(["report", str(out), "--no-chart"]) == 0
    # An edited answer no longer matches the run's own summary.json: report says so.
    path = out / "answers.jsonl"
    path.write_text(path.read_text(encoding="utf-8").replace("杭州", "成都"), encoding="utf-8")
    assert main(["report", str(out), "--no-chart"]) == 1
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "## Answer metrics" in report and "test-model" in report


def test_retry_then_success(fake: tuple[FakeModel, str]) -> None:
    model, base = fake
    model.failures = [503, 429]
    slept: list[float] = []
    client = ChatClient(LLMConfig(base, "m", backoff_s=0.5), sleep=slept.append)
    assert client.complete([{"role": "user", "content": "你好"}]) == "你好"
    assert slept == [0.5, 1.0]
    assert model.requests[0]["auth"] is None


def test_retries_are_bounded(fake: tuple[FakeModel, str]) -> None:
    model, base = fake
    model.failures = [500] * 10
    client = ChatClient(LLMConfig(base, "m", max_attempts=3), sleep=lambda s: None)
    with pytest.raises(LLMError, match=r"HTTP 500.*gave up after 3 attempts"):
        client.complete([{"role": "user", "content": "x"}])
    assert len(model.requests) == 3


def test_auth_failure_is_not_retried(fake: tuple[FakeModel, str]) -> None:
    model, base = fake
    model.failures = [401]
    client = ChatClient(LLMConfig(base, "m"), sleep=lambda s: None)
    with pytest.raises(LLMError, match=r"HTTP 401.*--api-key"):
        client.complete([{"role": "user", "content": "x"}])
    assert len(model.requests) == 1


def test_unreachable_endpoint_fails_the_run_clearly(
    small_split: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("branchbench.llm.time.sleep", lambda s: None)
    code = main(
        [
            "run",
            "--scenarios",
            str(small_split),
            "--out",
            str(tmp_path / "x"),
            "--no-chart",
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--model",
            "m",
        ]
    )
    assert code == 1
    assert "cannot reach http://127.0.0.1:9/v1/chat/completions" in capsys.readouterr().err


def test_config_from_options_and_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("BRANCHBENCH_BASE_URL", "BRANCHBENCH_MODEL", "BRANCHBENCH_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    assert config_from(None, None, None) is None
    with pytest.raises(LLMError, match="--model"):
        config_from("http://x/v1", None, None)
    monkeypatch.setenv("BRANCHBENCH_BASE_URL", "http://env/v1/")
    monkeypatch.setenv("BRANCHBENCH_MODEL", "env-model")
    cfg = config_from(None, None, None)
    assert cfg is not None and cfg.url == "http://env/v1/chat/completions"
    assert cfg.model == "env-model" and cfg.api_key is None
    other = config_from(None, "cli-model", "k")
    assert other is not None and other.model == "cli-model" and other.api_key == "k"


def test_prompts_differ_only_by_the_conflict_sentence() -> None:
    neutral = build_messages("相关记忆：\n- x", "问题？", "neutral")
    conflict = build_messages("相关记忆：\n- x", "问题？", "conflict")
    assert conflict[0]["content"] == neutral[0]["content"] + CONFLICT_SENTENCE
    assert neutral[1] == conflict[1]
    assert neutral[1]["content"].endswith("用户的问题：问题？")
