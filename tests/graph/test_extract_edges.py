"""Edges proposed by extraction: rule patterns in Chinese and English, the
LLM reply's ``edges`` list, and the writer (gated, written once)."""

from __future__ import annotations

import pytest

from branchmem import Store
from branchmem.extract import RuleExtractor
from branchmem.extract.edges import triples
from branchmem.extract.llm import parse_reply


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("Alice 负责 payment-service", [("Alice", "owns", "payment-service")]),
        ("Bob 属于支付组", [("Bob", "member of", "支付组")]),
        ("payment-service 依赖 libfoo 1.2", [("payment-service", "depends on", "libfoo 1.2")]),
        (
            "auth-service 使用 jsonwebtoken v8.5.1",
            [("auth-service", "uses", "jsonwebtoken v8.5.1")],
        ),
        ("数据中心位于杭州", [("数据中心", "located in", "杭州")]),
        ("redis 是一个缓存", [("redis", "is a", "缓存")]),
        ("我喜欢咖啡", [("用户", "likes", "咖啡")]),
        ("libfoo 1.2 受 CVE-2024-0001 影响", [("libfoo 1.2", "affected by", "CVE-2024-0001")]),
        ("Carol owns the billing API", [("Carol", "owns", "the billing API")]),
        ("Dan is a member of Team Pay", [("Dan", "member of", "Team Pay")]),
        ("billing depends on postgres 16", [("billing", "depends on", "postgres 16")]),
        ("The cluster is located in Frankfurt", [("The cluster", "located in", "Frankfurt")]),
        ("libjwt has CVE-2022-1234", [("libjwt", "affected by", "CVE-2022-1234")]),
        ("谁负责 payment-service？", []),
        ("Alice 不再负责 payment-service", []),
        ("he owns it", []),
        ("Does billing use redis?", []),
    ],
)
def test_rule_triples(text: str, want: list[tuple[str, str, str]]) -> None:
    assert triples(text) == want


def test_extracted_edges_are_gated_and_written_once(store: Store) -> None:
    store.add_events(
        [
            {"id": "e1", "content": "Alice 负责 payment-service。"},
            {"id": "e2", "parent": "e1", "content": "payment-service 依赖 libfoo。"},
            {"id": "e2b", "parent": "e1", "content": "payment-service 依赖 libbar。"},
        ]
    )
    ex = RuleExtractor(edges=True)
    got = store.extract("e2", extractor=ex)
    assert sorted(m.content for m in got if m.kind == "edge") == [
        "Alice owns payment-service",
        "payment-service depends on libfoo",
    ]
    assert store.extract("e2", extractor=ex) == []  # the same proposals: nothing new
    store.extract("e2b", extractor=ex)
    assert [
        e.object for e in store.graph(at="e2b").neighbors("payment-service", direction="out")
    ] == ["libbar"]
    assert store.memories(at="e2") == []  # edges only: no plain memory
    assert RuleExtractor().propose(store.path("e2"), []) == []  # off by default


def test_llm_reply_edges() -> None:
    reply = (
        '{"memories": [], "edges": [{"subject": "Alice", "predicate": "owns", '
        '"object": "auth-service", "sources": ["e1"]}]}'
    )
    (p,) = parse_reply(reply)
    assert p.op == "edge" and p.triple == ("Alice", "owns", "auth-service")
    assert p.sources == ("e1",)
