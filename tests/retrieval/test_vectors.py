"""Record vectors persisted with the records: embedded once per record and
embedder, read back by other `Store` objects, deleted with the record."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pytest

from branchmem import HashingEmbedder, Store
from branchmem.backends.base import StoredColumns, VectorStore
from branchmem.retrieval.embed import Vector


class Counting:
    """An embedder that counts the passages it embeds."""

    def __init__(self) -> None:
        self.inner = HashingEmbedder(32)
        self.name, self.dim = "counting-32", 32
        self.passages = 0
        self.queries = 0

    def embed_queries(self, texts: Sequence[str]) -> list[Vector]:
        self.queries += len(texts)
        return self.inner.embed_queries(texts)

    def embed_passages(self, texts: Sequence[str]) -> list[Vector]:
        self.passages += len(texts)
        return self.inner.embed_passages(texts)


TEXTS = ["用户对花生过敏", "用户下个月搬去杭州", "预算三千元", "用户喜欢川菜", "用户养了一只猫"]


def fill(store: Store) -> None:
    store.add_events([{"id": "e1"}, {"id": "e2", "parent": "e1"}])
    for i, t in enumerate(TEXTS):
        store.add_memory(t, sources=["e2" if i % 2 else "e1"], id=f"m{i}")


def ranking(store: Store, emb: Counting) -> list[tuple[str, float]]:
    return [
        (h.memory.id, h.score) for h in store.search("花生", at="e2", k=5, embedder=emb, now=2e9)
    ]


def test_each_record_is_embedded_once_across_store_objects(reopen: Callable[[], Store]) -> None:
    emb = Counting()
    first = reopen()
    fill(first)
    before = ranking(first, emb)
    assert emb.passages == len(TEXTS)
    first.close()
    second = reopen()
    assert ranking(second, emb) == before
    assert emb.passages == len(TEXTS), "a new Store object read the vectors, not the embedder"
    assert emb.queries == 2  # one per process-level cache; queries are not stored
    second.add_memory("用户想去成都", sources=["e2"], id="m9")
    ranking(second, emb)
    assert emb.passages == len(TEXTS) + 1  # only the new record
    second.close()


def test_vectors_go_with_purged_records(reopen: Callable[[], Store]) -> None:
    emb = Counting()
    store = reopen()
    fill(store)
    ranking(store, emb)
    b = store._engine.backend
    assert isinstance(b, VectorStore)
    assert set(b.get_vectors("default", emb.name, ["m0", "m1"])) == {"m0", "m1"}
    store.purge(memories=["m0"])
    assert set(b.get_vectors("default", emb.name, ["m0", "m1"])) == {"m1"}
    # the same id written again with other text is embedded again, not served stale
    store.add_memory("完全不同的内容", sources=["e1"], id="m0")
    ranking(store, emb)
    assert emb.passages == len(TEXTS) + 1
    store.purge(whole_namespace=True)
    assert b.get_vectors("default", emb.name, ["m1"]) == {}
    store.close()


def test_a_stored_vector_for_other_text_is_not_used(reopen: Callable[[], Store]) -> None:
    emb = Counting()
    store = reopen()
    fill(store)
    b = store._engine.backend
    assert isinstance(b, VectorStore)
    with b.transaction():
        b.put_vectors("default", emb.name, [("m0", "not the digest", b"\0" * 4 * emb.dim)])
        b.put_vectors("default", emb.name, [("ghost", "x", b"\0" * 4 * emb.dim)])
    assert b.get_vectors("default", emb.name, ["ghost"]) == {}  # no record, no vector
    got = ranking(store, emb)
    assert emb.passages == len(TEXTS)  # m0's stored vector was refused and made again
    other = Store()
    fill(other)
    assert got == ranking(other, Counting())
    store.close()


def test_many_ids_are_read_in_one_pass_with_the_same_answer(
    reopen: Callable[[], Store],
) -> None:
    """Asked for many ids at once, a backend may read the namespace's rows in
    one pass (SQLite does from `WHOLE_MIN` ids): it answers exactly what a
    lookup per id answers, for every id asked (stored or not, of this
    namespace or another, of this embedder or another)."""
    import random
    from array import array

    s = reopen()
    b = s._engine.backend
    assert isinstance(b, VectorStore)
    n = 2600
    s.add_events([{"id": "e1"}])
    s.add_memories([{"content": f"t{i}", "sources": ["e1"], "id": f"m{i}"} for i in range(n)])
    s.add_memories(
        [{"content": "x", "sources": ["e1"], "id": f"m{i}", "namespace": "other"} for i in range(9)]
    )
    rows = [(f"m{i}", f"d{i}", array("f", [i / n, 0.5]).tobytes()) for i in range(0, n, 2)]
    with b.transaction():
        b.put_vectors("default", "emb-a", rows)
        b.put_vectors("default", "emb-b", rows[:5])
        b.put_vectors("other", "emb-a", [("m1", "o", array("f", [0.5, 0.5]).tobytes())])
    one_by_one = {}
    for i in range(n + 50):
        one_by_one.update(b.get_vectors("default", "emb-a", [f"m{i}"]))
    rnd = random.Random(3)
    for size in (n + 50, 2100, 700, 10):
        ids = rnd.sample([f"m{i}" for i in range(n + 50)], size)
        want = {i: one_by_one[i] for i in ids if i in one_by_one}
        assert b.get_vectors("default", "emb-a", ids) == want
        if isinstance(b, StoredColumns):  # the same rows as three lists, each id once
            with b.reading():
                got_ids, digests, blobs = b.vector_columns("default", "emb-a", ids)
            assert len(got_ids) == len(set(got_ids)) == len(want)
            assert all(type(x) is bytes for x in blobs)
            assert dict(zip(got_ids, zip(digests, blobs, strict=True), strict=True)) == want
    assert set(b.get_vectors("default", "emb-b", [f"m{i}" for i in range(n)])) == {
        r[0] for r in rows[:5]
    }
    s.close()


def test_vectors_are_written_in_large_transactions_and_kept_when_embedding_fails(
    reopen: Callable[[], Store],
) -> None:
    """A search embedding many records writes their vectors every `_SAVE`
    records (not one transaction per batch of 64), and at the end: an embedder
    that fails part-way leaves what was written before the failure stored, and
    the next search embeds only the rest."""
    from branchmem.errors import EmbeddingError
    from branchmem.retrieval import cache as cache_mod

    class Failing(Counting):
        fail_after: int | None = None

        def embed_passages(self, texts: Sequence[str]) -> list[Vector]:
            if self.fail_after is not None and self.passages >= self.fail_after:
                raise EmbeddingError("down")
            return super().embed_passages(texts)

    s = reopen()
    n = cache_mod._SAVE + 700
    s.add_events([{"id": "e1"}])
    s.add_memories([{"content": f"记录 {i}", "sources": ["e1"], "id": f"m{i}"} for i in range(n)])
    b = s._engine.backend
    assert isinstance(b, VectorStore)
    emb = Failing()
    emb.fail_after = cache_mod._SAVE + 64  # fails after the first write
    try:
        s.search("记录", at="e1", embedder=emb, cutoff="off")
    except EmbeddingError:
        pass
    else:
        raise AssertionError("the embedder was to fail")
    ids = [f"m{i}" for i in range(n)]
    kept = len(b.get_vectors("default", emb.name, ids))
    assert cache_mod._SAVE <= kept < n
    emb.fail_after = None
    before = emb.passages
    s.close()
    s = reopen()
    s.search("记录", at="e1", embedder=emb, cutoff="off")
    assert emb.passages - before == n - kept  # only those not written before
    b = s._engine.backend
    assert isinstance(b, VectorStore)
    assert len(b.get_vectors("default", emb.name, ids)) == n
    s.close()


def test_a_large_set_read_from_the_store_is_held_once(
    reopen: Callable[[], Store], monkeypatch: pytest.MonkeyPatch
) -> None:
    """From `pending.BULK` records, a new process's first search hands the
    stored vectors it read to the search's state alone (no copy per record in
    the cache); its hits, and those of a later search at another anchor (a
    state of its own, read again), are what a store without that path gives."""
    from branchmem.retrieval import pending
    from branchmem.retrieval.cache import cache_for

    emb = Counting()
    s = reopen()
    s.add_events([{"id": "e1"}, {"id": "e2", "parent": "e1"}, {"id": "e3", "parent": "e1"}])
    texts = [f"记录 {i} 花生" if i % 7 == 0 else f"记录 {i}" for i in range(300)]
    s.add_memories([{"content": t, "sources": [f"e{1 + i % 3}"]} for i, t in enumerate(texts)])

    def hits(store: Store, at: str) -> list[tuple[str, float]]:
        got = store.search("花生", at=at, k=8, embedder=emb, now=2e9, cutoff="off")
        return [(h.memory.id, h.score) for h in got]

    want = {at: hits(s, at) for at in ("e2", "e3")}  # every vector made and stored
    s.close()
    monkeypatch.setattr(pending, "BULK", 50)
    s = reopen()
    assert hits(s, "e2") == want["e2"]
    assert not cache_for(s).vectors.get(emb.name), "the state holds them, not a copy per record"
    assert hits(s, "e3") == want["e3"]
    assert emb.passages == 300  # nothing embedded again
    s.close()
