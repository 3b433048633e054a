"""Embedding after the write (`BackgroundEmbedder`) and a search's embedding
budget (``max_embed``), on every backend: vectors land in the backend, a purge
or a shutdown while a record is queued or being embedded writes no vector,
and a search ranks what has no vector yet by keyword and says so."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import pytest

from branchmem import EmbeddingPending, InvalidInput, Store
from branchmem.retrieval.background import BackgroundEmbedder, background_for
from branchmem.retrieval.vectors import digest
from helpers.search_helpers import GatedEmbedder


def _vectors(store: Store, ns: str, emb: str, ids: list[str]) -> dict[str, tuple[str, bytes]]:
    with store._engine.backend.reading():
        return store._engine.backend.get_vectors(ns, emb, ids)  # type: ignore[attr-defined, no-any-return]


def _facts(store: Store, n: int, ns: str = "default", start: int = 0) -> list[str]:
    store.add_event("e1", namespace=ns)
    done = store.add_memories(
        [
            {"content": f"用户喜欢城市{i}", "sources": ["e1"], "namespace": ns, "id": f"m{i}"}
            for i in range(start, start + n)
        ]
    )
    return [m.id for m in done]


def _wait_for(check: Callable[[], bool], seconds: float = 10.0) -> None:
    end = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < end, "timed out"
        time.sleep(0.01)


def test_written_records_get_their_vectors_in_the_backend(store: Store) -> None:
    emb = GatedEmbedder()
    with BackgroundEmbedder(store, emb) as bg:
        ids = _facts(store, 70)
        retraction = store.retract("m0", sources=["e1"])
        assert bg.wait(20)
        stored = _vectors(store, "default", emb.name, [*ids, retraction.id])
        assert set(stored) == set(ids)  # a retraction is never searched: not embedded
        for m in store.memories(at="e1"):
            assert stored[m.id][0] == digest(m.content)
        # Two batches of one namespace (64 at most each), all on the worker.
        assert [n for who, n in emb.calls] == [64, 6]
        assert {who for who, _ in emb.calls} == {"branchmem-embed"}
        # A search finds them stored: it embeds nothing itself.
        emb.calls.clear()
        hits = store.search("城市3", at="e1", embedder=emb, explain=True, k=70, cutoff="off")
        assert emb.calls == []
        assert not any(h.explanation.vector_pending for h in hits if h.explanation)


def test_a_search_embeds_at_most_its_budget(store: Store) -> None:
    emb = GatedEmbedder(everywhere=False)
    _facts(store, 40)
    hits = store.search(
        "城市3", at="e1", embedder=emb, max_embed=5, explain=True, k=40, cutoff="off"
    )
    assert sum(n for _, n in emb.calls) == 5
    pending = [h for h in hits if h.explanation and h.explanation.vector_pending]
    assert len(pending) == 35
    for h in pending:
        assert h.parts["vector"] == 0.0 and h.explanation is not None
        assert h.explanation.vector_rank is None
        assert "not embedded yet, ranked by keyword alone" in h.explanation.scoring
    # The five it embedded are the newest, and they are stored for the next search.
    embedded = [h.memory.id for h in hits if h.explanation and not h.explanation.vector_pending]
    assert sorted(embedded) == [f"m{i}" for i in range(35, 40)]
    assert set(_vectors(store, "default", emb.name, embedded)) == set(embedded)
    # Without a budget a search embeds everything it lacks (the library's default).
    emb.calls.clear()
    hits = store.search("城市3", at="e1", embedder=emb, explain=True, k=40, cutoff="off")
    assert sum(n for _, n in emb.calls) == 35
    assert not any(h.explanation and h.explanation.vector_pending for h in hits)
    with pytest.raises(InvalidInput, match="max_embed"):
        store.search("城市3", at="e1", embedder=emb, max_embed=-1, cutoff="off")


def test_a_vector_search_past_its_budget_raises_embedding_pending(store: Store) -> None:
    emb = GatedEmbedder()
    _facts(store, 10)
    with pytest.raises(EmbeddingPending) as err:
        store.search("城市3", at="e1", embedder=emb, mode="vector", max_embed=3, cutoff="off")
    assert err.value.pending == 7 and err.value.retry_after >= 1
    assert err.value.http_status == 503
    # Each such search still embeds its budget: the fourth one answers.
    for _ in range(2):
        with pytest.raises(EmbeddingPending):
            store.search("城市3", at="e1", embedder=emb, mode="vector", max_embed=3, cutoff="off")
    assert (
        len(store.search("城市3", at="e1", embedder=emb, mode="vector", max_embed=3, cutoff="off"))
        == 10
    )


def test_an_attached_embedder_sets_the_budget_and_takes_what_searches_find(
    store: Store,
) -> None:
    emb = GatedEmbedder()
    _facts(store, 50)  # written before it was attached: nothing queued them
    emb.gate.clear()  # the worker will wait
    with BackgroundEmbedder(store, emb, budget=4) as bg:
        assert bg.pending() == 0
        hits = store.search("城市3", at="e1", embedder=emb, explain=True, k=50, cutoff="off")
        # More than the budget lack a vector: the search embeds none of them...
        assert [n for who, n in emb.calls if who != "branchmem-embed"] == []
        assert sum(1 for h in hits if h.explanation and h.explanation.vector_pending) == 50
        _wait_for(lambda: bg.pending() == 50)  # ...it queued them all
        emb.gate.set()
        assert bg.wait(20)
        hits = store.search("城市3", at="e1", embedder=emb, explain=True, k=50, cutoff="off")
        assert not any(h.explanation and h.explanation.vector_pending for h in hits)
        # A few new ones (the worker busy): within the budget, the search embeds them.
        emb.gate.clear()
        store.add_memories([{"content": f"新的事实{i}", "sources": ["e1"]} for i in range(3)])
        assert emb.entered.wait(10)
        emb.calls.clear()
        hits = store.search("城市3", at="e1", embedder=emb, explain=True, k=60, cutoff="off")
        assert [n for who, n in emb.calls if who != "branchmem-embed"] == [3]
        assert len(hits) == 53 and not any(h.explanation.vector_pending for h in hits)  # type: ignore[union-attr]
        emb.gate.set()
    assert background_for(store) is None  # closed: detached


def test_purge_while_a_record_is_being_embedded_writes_no_vector(store: Store) -> None:
    emb = GatedEmbedder()
    emb.gate.clear()
    with BackgroundEmbedder(store, emb) as bg:
        ids = _facts(store, 3)
        assert emb.entered.wait(10)  # the worker read the texts and is embedding them
        store.purge(memories=["m1"])
        # Written again under the same id, with other text, while the old is embedded.
        store.add_memory("用户搬去了杭州", sources=["e1"], id="m2b")
        store.purge(memories=["m2"])
        store.add_memory("完全不同的内容", sources=["e1"], id="m2")
        emb.gate.set()
        assert bg.wait(20)
        stored = _vectors(store, "default", emb.name, ids)
        assert "m1" not in stored  # purged: no vector, not even after the embedding ended
        assert stored["m2"][0] == digest("完全不同的内容")  # only the new text's vector
        assert stored["m0"][0] == digest("用户喜欢城市0")


def test_purge_drops_queued_ids(store: Store) -> None:
    emb = GatedEmbedder()
    emb.gate.clear()
    with BackgroundEmbedder(store, emb) as bg:
        _facts(store, 70, ns="a")  # 64 in the batch being embedded, 6 queued
        assert emb.entered.wait(10)
        assert bg.pending("a") == 6
        store.purge(memories=["m66"], namespace="a")
        assert bg.pending("a") == 5
        store.purge(whole_namespace=True, namespace="a")
        assert bg.pending("a") == 0
        emb.gate.set()
        assert bg.wait(20)
        assert _vectors(store, "a", emb.name, [f"m{i}" for i in range(70)]) == {}


def test_close_while_embedding_drops_the_queue_and_writes_nothing(store: Store) -> None:
    emb = GatedEmbedder()
    emb.gate.clear()
    bg = BackgroundEmbedder(store, emb)
    ids = _facts(store, 70)
    assert emb.entered.wait(10)
    assert bg.close(timeout=0.2) is False  # the worker is stuck in the embedder
    assert bg.pending() == 64  # the batch in the embedder; the 6 queued are gone
    assert bg.submit("default", ["m0"]) == 0  # closed: takes nothing more
    emb.gate.set()
    bg._thread.join(10)  # type: ignore[union-attr]
    assert not bg._thread.is_alive()  # type: ignore[union-attr]
    assert _vectors(store, "default", emb.name, ids) == {}
    store.add_memory("关闭之后", sources=["e1"], id="late")  # no longer queued anywhere
    assert background_for(store) is None and bg.pending() == 0
    # The records are all there; a search ranks them (embedding them itself).
    assert len(store.search("城市", at="e1", embedder=emb, k=100, cutoff="off")) == 71


def test_namespaces_take_turns(store: Store) -> None:
    emb = GatedEmbedder()
    emb.gate.clear()
    with BackgroundEmbedder(store, emb) as bg:
        _facts(store, 64 * 3, ns="big")
        assert emb.entered.wait(10)
        _facts(store, 2, ns="small", start=1000)
        emb.gate.set()
        _wait_for(lambda: bg.pending("small") == 0)
        assert bg.wait(20)
    order = emb.passages
    first_small = min(order.index(t) for t in ("用户喜欢城市1000", "用户喜欢城市1001"))
    assert first_small == 64  # right after the batch in progress, before big's second


def test_a_search_of_one_namespace_does_not_wait_for_anothers_embedding(
    make_store: Callable[[], Store],
) -> None:
    store = make_store()
    slow = GatedEmbedder(everywhere=True, name="slow-32")
    slow.gate.clear()
    _facts(store, 5, ns="a")
    _facts(store, 5, ns="b", start=100)
    stuck = threading.Thread(
        target=lambda: store.search("城市", at="e1", namespace="a", embedder=slow, cutoff="off")
    )
    stuck.start()
    assert slow.entered.wait(10)
    done: list[int] = []
    other = threading.Thread(
        target=lambda: done.append(
            len(store.search("城市", at="e1", namespace="b", embedder="hashing", cutoff="off"))
        )
    )
    other.start()
    other.join(5)
    alive = other.is_alive()
    slow.gate.set()
    stuck.join(10)
    other.join(10)
    assert not alive and done == [5]  # before: it waited for namespace a's embedding


def test_the_numpy_path_ranks_records_without_a_vector_alike(
    open_store: Callable[..., Store], monkeypatch: pytest.MonkeyPatch
) -> None:
    from branchmem.retrieval import fastfuse

    def hits(fast: bool) -> list[tuple[str, float, bool]]:
        monkeypatch.setattr(fastfuse, "FAST_MIN", 1 if fast else 10**9)
        store = open_store(clock=lambda: 1000.0)
        _facts(store, 30)
        emb = GatedEmbedder()
        found = store.search(
            "城市1", at="e1", embedder=emb, max_embed=7, explain=True, k=30, cutoff="off"
        )
        return [
            (h.memory.id, round(h.score, 12), bool(h.explanation and h.explanation.vector_pending))
            for h in found
        ]

    plain, fast = hits(False), hits(True)
    assert plain == fast
    assert sum(p for _, _, p in plain) == 23


def test_written_records_are_told_once_committed(store: Store) -> None:
    from branchmem.backends.base import CommitHooks

    b = store._engine.backend
    assert isinstance(b, CommitHooks)
    told: list[str] = []
    with b.transaction():
        with b.transaction():
            b.after_commit(lambda: told.append("inner"))
        assert told == []  # the outer transaction is still open
    assert told == ["inner"]
    with pytest.raises(RuntimeError), b.transaction():
        b.after_commit(lambda: told.append("rolled back"))
        raise RuntimeError("no")
    b.after_commit(lambda: told.append("now"))  # outside a transaction: at once
    assert told == ["inner", "now"]
    seen: list[tuple[str, list[str]]] = []
    store._engine.on_records = lambda ns, mems: seen.append((ns, [m.id for m in mems]))
    store.add_event("e1")
    with b.transaction():
        store.add_memory("a", sources=["e1"], id="r1")
        assert seen == []
    assert seen == [("default", ["r1"])]
