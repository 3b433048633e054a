"""`Store.search`: gating, Chinese keywords, determinism, scope chains, filters, explain."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from pathlib import Path

import pytest

from branchmem import HashingEmbedder, InvalidInput, Store, UnknownAnchor, Weights

EMB = HashingEmbedder(128)


@pytest.fixture
def moving(store: Store) -> Store:
    """e1 - e2 (成都)  and  e1 - e2b (杭州) - e3 (花生), plus facts on each."""
    store.add_events(
        [
            {"id": "e1", "content": "你好，我在准备搬家。"},
            {"id": "e2", "parent": "e1", "content": "我下个月搬去成都。"},
            {"id": "e2b", "parent": "e1", "content": "我下个月搬去杭州。"},
            {"id": "e3", "parent": "e2b", "content": "对了，我对花生过敏。"},
        ]
    )
    store.add_memory("用户在准备搬家", sources=["e1"], id="prep", kind="episodic")
    store.add_memory("用户下个月搬去成都", sources=["e2"], id="cd", key="move.city")
    store.add_memory("用户下个月搬去杭州", sources=["e2b"], id="hz", key="move.city")
    store.add_memory(
        "用户对花生过敏", sources=["e3"], id="peanut", key="allergy", meta={"src": "chat"}
    )
    return store


def ids(hits: list) -> list[str]:  # type: ignore[type-arg]
    return [h.memory.id for h in hits]


def test_keyword_search_finds_two_character_chinese_words(moving: Store) -> None:
    assert ids(moving.search("杭州", at="e3", mode="keyword")) == ["hz"]
    assert ids(moving.search("花生", at="e3", mode="keyword")) == ["peanut"]
    assert ids(moving.search("我对花生过敏吗？", at="e3", mode="keyword"))[0] == "peanut"


def test_the_gate_decides_what_the_ranker_sees(moving: Store) -> None:
    assert ids(moving.search("成都", at="e3", mode="keyword")) == []
    assert "cd" not in ids(moving.search("成都", at="e3", k=10, embedder=EMB))
    assert ids(moving.search("成都", at="e2", mode="keyword")) == ["cd"]


def test_full_width_and_mixed_queries(store: Store) -> None:
    store.add_event("e1")
    store.add_memory("项目用 Python 3.12 和 FastAPI", sources=["e1"], id="py")
    store.add_memory("用户喜欢喝咖啡", sources=["e1"], id="coffee")
    assert ids(store.search("ｐｙｔｈｏｎ？", at="e1", mode="keyword")) == ["py"]
    assert set(ids(store.search("fastapi，咖啡！", at="e1", mode="keyword"))) == {"py", "coffee"}
    assert ids(store.search("用Python", at="e1", mode="keyword")) == ["py"]


def test_hits_carry_parts_and_via(moving: Store) -> None:
    [h] = moving.search("花生", at="e3", k=1, embedder=EMB, now=0.0)
    assert h.via == "e3"
    assert set(h.parts) == {"keyword", "vector", "importance", "recency"}
    assert h.parts["keyword"] > 0 and 0 < h.parts["vector"] <= 1
    assert h.parts["importance"] == 0.5
    assert h.explanation is None
    assert 0 < h.score <= 1


def test_same_query_same_hits_same_order(make_store: Callable[[], Store]) -> None:
    def build() -> Store:
        s = make_store()
        s.add_event("e1")
        for i in range(30):
            # Many exact ties: identical texts in groups of three.
            s.add_memory(f"用户提到杭州第{i // 3}次", sources=["e1"], id=f"m{i:02d}")
        return s

    def run(s: Store) -> list[tuple[str, float]]:
        return [
            (h.memory.id, h.score) for h in s.search("杭州", at="e1", k=30, embedder=EMB, now=1e9)
        ]

    store = build()
    first = run(store)
    assert first == run(store)
    assert [i for i, _ in first] == [i for i, _ in run(build())]
    # equal scores keep the write order
    by_score: dict[float, list[str]] = {}
    for mid, score in first:
        by_score.setdefault(score, []).append(mid)
    assert any(len(v) > 1 for v in by_score.values())
    assert all(v == sorted(v) for v in by_score.values())


def test_scope_chain_ranks_all_hits_by_score(store: Store) -> None:
    store.add_events(
        [
            {"id": "root"},
            {"id": "main", "parent": "root"},
            {"id": "conv", "parent": "root"},
        ]
    )
    store.add_memory("杭州 共享的事实", sources=["root"], id="shared")
    store.add_memory("杭州 杭州 主分支的事实", sources=["main"], id="main1")
    store.add_memory("主分支的另一件事", sources=["main"], id="main2")
    store.add_memory("对话里的事", sources=["conv"], id="conv1")
    hits = store.search("杭州", at=["conv", "main"], k=10, mode="keyword", cutoff="off")
    # The best match comes first whichever anchor sees it; via is the first that does.
    assert [(h.memory.id, h.via) for h in hits] == [("main1", "main"), ("shared", "conv")]
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    # a scope weight can still prefer the conversation
    pref = store.search(
        "杭州", at=["conv", "main"], k=10, mode="keyword", scope_weights=[1, 0.1], cutoff="off"
    )
    assert [h.memory.id for h in pref] == ["shared", "main1"]
    assert pref[1].score == pytest.approx(hits[0].score * 0.1)
    # a repeated anchor is read once
    assert len(store.search("杭州", at=["conv", "conv"], k=10, mode="keyword")) == 1


def test_scope_chain_puts_the_exact_match_first(store: Store) -> None:
    # The conversation's memory used to fill the results first, the match last.
    store.add_events(
        [{"id": "root"}, {"id": "u", "parent": "root"}, {"id": "chat", "parent": "root"}]
    )
    store.add_memory("用户对花生过敏", sources=["u"], id="allergy")
    store.add_memory("用户今天想吃火锅", sources=["chat"], id="hotpot")
    hits = store.search("花生过敏", at=["chat", "u"], k=2, embedder="hashing", cutoff="off")
    assert [(h.memory.id, h.via) for h in hits] == [("allergy", "u"), ("hotpot", "chat")]
    # the cut-off (on by default) drops the unrelated one
    cut = store.search("花生过敏", at=["chat", "u"], k=2, embedder="hashing")
    assert [h.memory.id for h in cut] == ["allergy"] and [h.memory.id for h in cut.cut] == [
        "hotpot"
    ]


@pytest.mark.parametrize("bad", [[1.0], [1.0, 0.0], [1.0, -1], "ab", [1.0, True]])
def test_scope_weights_must_fit_the_chain(store: Store, bad: object) -> None:
    store.add_events([{"id": "e1"}, {"id": "e2"}])
    with pytest.raises(InvalidInput, match="scope"):
        store.search("x", at=["e1", "e2"], scope_weights=bad, embedder="hashing")


def test_filters_apply_after_the_gate(moving: Store) -> None:
    q = "用户"
    assert ids(moving.search(q, at="e3", kind="episodic", embedder=EMB)) == ["prep"]
    assert set(ids(moving.search(q, at="e3", kind=["episodic", "semantic"], embedder=EMB))) == {
        "prep",
        "hz",
        "peanut",
    }
    assert ids(moving.search(q, at="e3", key_prefix="move.", embedder=EMB)) == ["hz"]
    assert ids(moving.search(q, at="e2", key_prefix="move.", embedder=EMB)) == ["cd"]
    assert ids(moving.search(q, at="e3", meta={"src": "chat"}, embedder=EMB)) == ["peanut"]
    assert ids(moving.search(q, at="e3", meta={"src": "mail"}, embedder=EMB)) == []
    # a filter never widens: the Chengdu fact stays hidden on the Hangzhou branch
    assert ids(moving.search("成都", at="e3", key_prefix="move.", embedder=EMB)) == ["hz"]
    with pytest.raises(InvalidInput, match=r"unknown kind .fact.; choose from episodic"):
        moving.search(q, at="e3", kind="fact")


def test_as_of_keeps_what_existed_then() -> None:
    t = [100.0]
    store = Store(clock=lambda: t[0])
    store.add_event("e1")
    store.add_memory("杭州 旧", sources=["e1"], id="old")
    t[0] = 200.0
    store.add_memory("杭州 新", sources=["e1"], id="new")
    assert ids(store.search("杭州", at="e1", as_of=150.0, mode="keyword")) == ["old"]
    assert set(ids(store.search("杭州", at="e1", as_of=200.0, mode="keyword"))) == {"old", "new"}


def test_importance_and_recency_order_equal_matches() -> None:
    t = [0.0]
    store = Store(clock=lambda: t[0])
    store.add_event("e1")
    store.add_memory("杭州", sources=["e1"], id="a", importance=0.1)
    store.add_memory("杭州", sources=["e1"], id="b", importance=0.9)
    assert ids(store.search("杭州", at="e1", embedder=EMB, now=0.0)) == ["b", "a"]
    neutral = Weights(importance=0.0, recency=0.0)
    assert ids(store.search("杭州", at="e1", embedder=EMB, weights=neutral)) == ["a", "b"]
    t[0] = 30 * 86400.0
    store.add_memory("杭州", sources=["e1"], id="c", importance=0.1)
    recent = Weights(importance=0.0, recency=1.0)
    hits = store.search("杭州", at="e1", embedder=EMB, weights=recent, now=t[0])
    assert ids(hits)[0] == "c"
    assert hits[0].parts["recency"] == 1.0 and hits[1].parts["recency"] == 0.5


def test_retracted_records_are_not_found(moving: Store) -> None:
    moving.add_event("e4", parent="e3", content="其实我不对花生过敏了")
    moving.retract("peanut", sources=["e4"])
    assert ids(moving.search("花生", at="e4", mode="keyword")) == []
    assert ids(moving.search("花生", at="e3", mode="keyword")) == ["peanut"]


def test_explain_says_why_visible_and_how_scored(moving: Store) -> None:
    [h] = moving.search("花生", at="e3", k=1, explain=True, embedder=EMB)
    assert h.explanation is not None
    assert h.explanation.visibility.visible
    assert "every source ('e3') is on the path" in h.explanation.visibility.reason
    assert "keyword rank 1" in h.explanation.scoring
    assert "vector rank 1" in h.explanation.scoring
    assert h.to_dict()["explanation"]["keyword_rank"] == 1
    [v] = moving.search("花生", at="e3", k=1, mode="vector", explain=True, embedder=EMB)
    assert v.explanation is not None and "keyword not used" in v.explanation.scoring


def test_namespaces_are_isolated(store: Store) -> None:
    store.add_event("e1", namespace="alice")
    store.add_event("e1", namespace="bob")
    store.add_memory("alice 杭州", sources=["e1"], namespace="alice", id="a")
    store.add_memory("bob 杭州", sources=["e1"], namespace="bob", id="b")
    assert ids(store.search("杭州", at="e1", namespace="alice", embedder=EMB)) == ["a"]
    assert ids(store.search("杭州", at="e1", namespace="bob", embedder=EMB)) == ["b"]
    with pytest.raises(UnknownAnchor):
        store.search("杭州", at="e1", embedder=EMB)


def test_no_anchor_no_memories_and_bad_input(moving: Store) -> None:
    assert moving.search("杭州", at=None) == []
    assert moving.search("杭州", at=[]) == []
    with pytest.raises(UnknownAnchor):
        moving.search("杭州", at="nowhere", embedder=EMB)
    for bad in ({"k": 0}, {"k": True}, {"mode": "fuzzy"}, {"at": [""]}, {"at": 5}):
        kwargs = {"at": "e3", **bad}
        with pytest.raises(InvalidInput):
            moving.search("杭州", embedder=EMB, **kwargs)
    for blank in ("  ", "", "\x00", "\x00 \x00", "\t\n"):
        with pytest.raises(InvalidInput, match="non-empty string"):
            moving.search(blank, at="e3")
        with pytest.raises(InvalidInput, match="non-empty string"):
            moving.context(at="e3", query=blank)
    with pytest.raises(InvalidInput, match="between 0 and 1"):
        Weights(importance=2.0)
    with pytest.raises(InvalidInput, match="both 0"):
        moving.search("杭州", at="e3", embedder=EMB, weights=Weights(keyword=0, vector=0))
    given = {"keyword": 1.0, "vector": 0.5}
    with pytest.raises(InvalidInput, match=r"such as Weights\(.*Weights\(\*\*d\)\); got dict"):
        moving.search("杭州", at="e3", embedder=EMB, weights=given)  # type: ignore[arg-type]
    ranked = moving.search("杭州", at="e3", embedder=EMB, weights=Weights(**given))
    assert ranked  # what the message says to write is taken


@pytest.mark.parametrize(
    "times",
    [
        {"now": 10**400},
        {"as_of": 10**400},
        {"now": float("inf")},
        {"as_of": float("-inf")},
        {"now": float("nan")},
        {"now": True},
        {"as_of": "2024-01-01"},
    ],
)
def test_search_checks_times_as_memories_does(moving: Store, times: dict[str, object]) -> None:
    """One check of ``now`` and ``as_of`` for reads and searches: the same error,
    warm or cold (a kept candidate set must not let a bad time through)."""
    with pytest.raises(InvalidInput) as read:
        moving.memories(at="e3", **times)  # type: ignore[arg-type]
    for _ in range(2):  # cold, then with the gate's answer kept from a good search
        with pytest.raises(InvalidInput) as found:
            moving.search("杭州", at="e3", embedder=EMB, **times)  # type: ignore[arg-type]
        assert str(found.value) == str(read.value)
        moving.search("杭州", at="e3", embedder=EMB)


def test_unknown_keywords_are_python_type_errors(moving: Store) -> None:
    """`search` and `context` list their keywords: another one is refused by
    Python itself, before anything is read."""
    with pytest.raises(TypeError, match="colour"):
        moving.search("杭州", at="e3", colour="red")  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="colour"):
        moving.context(at="e3", query="杭州", colour="red")  # type: ignore[call-arg]
    hits = moving.context(at="e3", query="杭州", embedder=EMB, kind="semantic", k=1)
    assert [m.id for m in hits.memories] == ["hz"]


def test_one_ranking_never_mixes_embedders(moving: Store) -> None:
    a, b = HashingEmbedder(64), HashingEmbedder(256)
    ha = moving.search("花生", at="e3", mode="vector", embedder=a)
    hb = moving.search("花生", at="e3", mode="vector", embedder=b)
    again = moving.search("花生", at="e3", mode="vector", embedder=a)
    assert [h.parts["vector"] for h in ha] == [h.parts["vector"] for h in again]
    assert [h.parts["vector"] for h in ha] != [h.parts["vector"] for h in hb]


def test_caches_never_serve_a_purged_record(store: Store) -> None:
    from branchmem.retrieval.cache import cache_for

    store.add_event("e1")
    store.add_memory("用户住在杭州", sources=["e1"], id="home")
    assert ids(store.search("杭州", at="e1", embedder=EMB)) == ["home"]
    cache = cache_for(store)
    store.purge(memories=["home"])
    # purge dropped what was derived from the erased content (terms and vectors)
    assert cache.forget("default", ["home"]) == 0
    assert store.search("杭州", at="e1", embedder=EMB) == []
    # the id written again with other content is ranked on its new content
    store.add_memory("用户住在成都", sources=["e1"], id="home")
    assert ids(store.search("成都", at="e1", mode="keyword")) == ["home"]
    assert ids(store.search("杭州", at="e1", mode="keyword")) == []
    # a second purge drops the new content's cached terms too
    store.purge(memories=["home"])
    assert cache.forget("default", ["home"]) == 0


@pytest.mark.skipif(importlib.util.find_spec("jieba") is None, reason="jieba not installed")
def test_jieba_tokenizer_in_a_search(moving: Store) -> None:
    assert ids(moving.search("花生过敏", at="e3", mode="keyword", tokenizer="jieba")) == ["peanut"]
    assert ids(moving.search("成都", at="e3", mode="keyword", tokenizer="jieba")) == []


def test_prepare_embeds_ahead_so_search_does_not(moving: Store) -> None:
    from branchmem.retrieval import prepare

    calls: list[int] = []

    class Counting(HashingEmbedder):
        def embed_passages(self, texts):  # type: ignore[no-untyped-def]
            calls.append(len(texts))
            return super().embed_passages(texts)

    emb = Counting(32)
    emb.name = "counting-32"
    assert prepare(moving, at=["e3", "e2"], embedder=emb) == 4
    assert calls == [4]
    moving.search("杭州", at="e3", embedder=emb)
    moving.search("成都", at="e2", embedder=emb)
    assert calls == [4]  # every vector came from the cache


def test_cli_shows_embedding_progress(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from branchmem.cli import main

    db = tmp_path / "s.db"
    with Store(db) as store:
        store.add_events(
            [{"id": "e0"}] + [{"id": f"e{i}", "parent": f"e{i - 1}"} for i in range(1, 150)]
        )
        store.add_memories(
            [{"content": f"用户说了第{i}件事", "sources": [f"e{i}"]} for i in range(150)]
        )
    args = ["--db", str(db), "--at", "e149", "--embedder", "hashing-64", "--progress"]
    assert main(["prepare", *args]) == 0
    out, err = capsys.readouterr()
    assert out == "150 visible records ready to search (vectors computed or already stored)\n"
    assert err.startswith("\rembedding [") and err.endswith("] 150/150\n")
    assert "] 0/150\r" in err  # drawn at the start, redrawn at most ten times a second
    # the vectors are stored with the records: a search in a new process embeds
    # only the query, so no bar; a new record shows a bar of one
    assert main(["search", "第7件事", *args]) == 0
    assert capsys.readouterr().err == ""
    with Store(db) as store:
        store.add_memory("用户说了新的事", sources=["e149"])
    assert main(["search", "新的事", *args, "--json"]) == 0
    assert capsys.readouterr().err.endswith("] 1/1\n")
    assert main(["search", "新的事", *args[:-1], "--no-progress"]) == 0
    assert capsys.readouterr().err == ""
