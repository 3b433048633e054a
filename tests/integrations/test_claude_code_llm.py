"""The hook extracts with a configured OpenAI-compatible model instead of the
rules, its key from the environment (never on a command line)."""

from __future__ import annotations

import io
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from branchmem import Store
from branchmem.cli import main as cli
from helpers.agent_transcripts import rewind_and_compaction


@pytest.fixture
def model() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    seen: list[dict[str, Any]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            seen.append({"auth": self.headers.get("Authorization"), **body})
            reply = {"memories": [{"op": "add", "content": "User codes at Globex",
                                   "key": "user.employer", "target": None,
                                   "sources": ["u2"]}]}  # fmt: skip
            data = json.dumps({"choices": [{"message": {"content": json.dumps(reply)}}]})
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data.encode())

        def log_message(self, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/v1", seen
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_the_hook_extracts_with_the_configured_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, model: tuple[str, list[dict[str, Any]]]
) -> None:
    url, seen = model
    monkeypatch.setenv("BRANCHMEM_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("BRANCHMEM_LLM_API_KEY", "k-9")
    path = tmp_path / "s1.jsonl"
    rewind_and_compaction(path)
    hook_input = {"session_id": "s1", "transcript_path": str(path), "hook_event_name": "Stop"}
    monkeypatch.setattr("sys.stdin", io.StringIO(json.dumps(hook_input)))
    db = str(tmp_path / "m.db")
    args = ["claude-code", "hook", "--db", db, "--namespace", "x", "--wait"]
    assert cli([*args, "--llm-base-url", url, "--llm-model", "m1"]) == 0
    assert [(r["auth"], r["model"]) for r in seen] == [("Bearer k-9", "m1")]
    with Store(db) as store:
        assert [m.content for m in store.memories(at="conv/s1", namespace="x")] == [
            "User codes at Globex"
        ]


def test_branchmem_extract_takes_the_key_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, model: tuple[str, list[dict[str, Any]]]
) -> None:
    url, seen = model
    monkeypatch.setenv("BRANCHMEM_LLM_API_KEY", "k-7")
    db = str(tmp_path / "m.db")
    with Store(db) as store:
        store.add_event("u2", content="I work at Globex.")
    args = ["extract", "--db", db, "--at", "u2", "--llm-base-url", url, "--llm-model", "m"]
    assert cli(args) == 0
    assert seen[0]["auth"] == "Bearer k-7"
