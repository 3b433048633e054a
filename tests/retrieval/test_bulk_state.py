"""A large search state built whole from what is stored: the vectors as one
block and the tokens as one list, read in one pass each, with no per-record
copy in the cache. Checked against the per-record path on every backend,
with stored entries missing or made from other text."""

from __future__ import annotations

import gc
import random
import threading
from array import array
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest

from branchmem import HashingEmbedder, Store
from branchmem.backends.base import TermStore, VectorStore
from branchmem.backends.sqlite import meta as sqlite_meta
from branchmem.bulk import gc_paused, paused
from branchmem.engine import engine_of
from branchmem.retrieval import cache as cache_mod
from branchmem.retrieval import fastfuse, pending, terms
from branchmem.retrieval.cache import cache_for
from branchmem.retrieval.search import prepare
from branchmem.retrieval.state import VectorIndex
from branchmem.retrieval.tokenize import get_tokenizer
from branchmem.retrieval.vectors import numpy_or_none

EMB = HashingEmbedder(32)
WORDS = ["花生", "过敏", "杭州", "搬家", "coffee", "tuesday", "rust", "猫", "预算", "dentist"]


def fill(s: Store, n: int, seed: int) -> None:
    rnd = random.Random(seed)
    s.add_events([{"id": "e1"}, {"id": "e2", "parent": "e1"}, {"id": "e3", "parent": "e1"}])
    texts = [" ".join(rnd.choice(WORDS) for _ in range(4)) + f" #{i}" for i in range(n)]
    s.add_memories([{"content": t, "sources": [f"e{1 + i % 3}"]} for i, t in enumerate(texts)])


def hits(s: Store, at: str) -> list[tuple[str, float]]:
    got = s.search("花生 coffee", at=at, k=10, embedder=EMB, now=2e9, cutoff="off")
    return [(h.memory.id, h.score) for h in got]


def small_bulk(monkeypatch: pytest.MonkeyPatch, on: bool) -> None:
    """The bulk paths from 50 records (on), or never (off), SQLite's reads in
    one pass likewise; numpy fusion from 50."""
    monkeypatch.setattr(fastfuse, "FAST_MIN", 50)
    for mod in (pending, cache_mod):
        monkeypatch.setattr(mod, "BULK", 50 if on else 10**9)
    monkeypatch.setattr(sqlite_meta, "WHOLE_MIN", 50 if on else 10**9)


def write_reversed(s: Store) -> None:
    """Every stored vector and token row of the records written again, last
    record first: where rows keep the order they were written in (SQLite),
    they no longer follow the records'."""
    backend = engine_of(s).backend
    key = terms.store_key(get_tokenizer())
    assert isinstance(backend, VectorStore) and isinstance(backend, TermStore) and key
    ids = [m.id for m in s.memories(at="e2")] + [m.id for m in s.memories(at="e3")]
    ids = list(dict.fromkeys(ids))[::-1]
    with backend.reading():
        vecs = backend.get_vectors("default", EMB.name, ids)
        toks = backend.get_terms("default", key, ids)
    with backend.transaction():
        for i in ids:
            backend.put_vectors("default", EMB.name, [(i, *vecs[i])])
            backend.put_terms("default", key, [(i, *toks[i])])


@pytest.mark.parametrize("order", ["as written", "reversed"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_first_search_built_whole_ranks_as_the_per_record_path(
    reopen: Callable[[], Store], monkeypatch: pytest.MonkeyPatch, seed: int, order: str
) -> None:
    """Stored rows in the records' order are used as read (at ``e2``, once the
    rows of records hidden there are left out), others are matched by id (at
    ``e3``, whose own records' rows were stored after the rest; and every row
    when they were written again in reverse)."""
    if numpy_or_none() is None:
        pytest.skip("the block path needs numpy")
    s = reopen()
    fill(s, 200, seed)
    prepare(s, at="e2", embedder=EMB)  # every vector and token list stored
    prepare(s, at="e3", embedder=EMB)
    if order == "reversed":
        write_reversed(s)
    s.close()
    small_bulk(monkeypatch, on=False)
    s = reopen()
    want = {at: hits(s, at) for at in ("e2", "e3")}
    s.close()
    small_bulk(monkeypatch, on=True)
    s = reopen()
    assert hits(s, "e2") == want["e2"]
    cache = cache_for(s)
    assert not cache.vectors.get(EMB.name), "the state holds the vectors, not a copy per record"
    assert not any(cache.terms.values()), "the state holds the tokens, not a copy per record"
    assert hits(s, "e3") == want["e3"]
    assert hits(s, "e2") == want["e2"]  # warm
    s.close()


@pytest.mark.parametrize("spoil", ["vector", "tokens", "written since"])
def test_a_stored_entry_made_from_other_text_sends_the_state_the_per_record_way(
    reopen: Callable[[], Store], monkeypatch: pytest.MonkeyPatch, spoil: str
) -> None:
    """One record's stored vector or tokens claim other text, or a record was
    written since they were stored: the block is refused whole, and the
    first search ranks as a first search without the block path does."""
    if numpy_or_none() is None:
        pytest.skip("the block path needs numpy")
    s = reopen()
    fill(s, 120, 9)
    prepare(s, at="e2", embedder=EMB)
    top = hits(s, "e2")[0][0]  # (all stored already: this search writes nothing)
    victim = next(m for m in s.memories(at="e2") if m.id == top)
    backend = engine_of(s).backend
    key = terms.store_key(get_tokenizer())
    assert key is not None
    with backend.transaction():
        if spoil == "vector":
            assert isinstance(backend, VectorStore)
            backend.put_vectors("default", EMB.name, [(victim.id, "0" * 24, bytes(4 * EMB.dim))])
        elif spoil == "tokens":
            assert isinstance(backend, TermStore)
            backend.put_terms("default", key, [(victim.id, "0" * 24, b"nothing")])
    if spoil == "written since":
        s.add_memory("花生 coffee 花生", sources=["e2"], id="late")
    s.close()
    small_bulk(monkeypatch, on=True)
    s = reopen()
    got = hits(s, "e2")
    s.close()
    small_bulk(monkeypatch, on=False)
    s = reopen()
    assert got == hits(s, "e2")  # (the first search above stored what it made again)
    if spoil == "written since":
        assert got[0][0] == "late"
    s.close()


def test_a_block_and_its_rows_give_one_matrix(monkeypatch: pytest.MonkeyPatch) -> None:
    """`VectorIndex.add` of one block equals adding its rows one by one, with
    numpy and without; a block held as read is extended into a new buffer."""
    rnd = random.Random(4)
    rows = [array("f", [rnd.uniform(-1, 1) for _ in range(8)]) for _ in range(100)]
    q = array("f", [rnd.uniform(-1, 1) for _ in range(8)])
    block = b"".join(r.tobytes() for r in rows[:80])
    for np_on in (True, False):
        if np_on and numpy_or_none() is None:
            continue
        if not np_on:
            monkeypatch.setattr("branchmem.retrieval.state.numpy_or_none", lambda: None)
        one, each = VectorIndex(8), VectorIndex(8)
        one.add([block])
        one.add(rows[80:])
        each.add(rows)
        assert one.count == each.count == 100
        assert one.cosines(q) == each.cosines(q)


@contextmanager
def paused_elsewhere() -> Iterator[None]:
    """Another thread holds a pause for the length of the block."""
    inside, release = threading.Barrier(2), threading.Event()

    def hold() -> None:
        with paused():
            inside.wait()
            release.wait()

    t = threading.Thread(target=hold)
    t.start()
    inside.wait()
    try:
        yield
    finally:
        release.set()
        t.join()


def test_collector_pauses_nest_and_overlap() -> None:
    assert gc.isenabled()
    with paused():
        assert not gc.isenabled()
        with paused():
            assert not gc.isenabled()
        assert not gc.isenabled(), "an inner pause does not resume it"
    assert gc.isenabled()
    with gc_paused(10):
        assert gc.isenabled(), "a small batch leaves it alone"
    # Two threads whose pauses overlap: resumed once both end, whichever ends first.
    with paused_elsewhere():
        with paused():
            pass
        assert not gc.isenabled(), "the other thread's pause still runs"
    assert gc.isenabled()
    # A caller that turned it off keeps it off.
    gc.disable()
    try:
        with paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_purge_drops_the_kept_digests(
    reopen: Callable[[], Store], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The digests a large state's first search kept (`RankCache.digests`) go
    with an erasure, as every other entry derived from the records does."""
    if numpy_or_none() is None:
        pytest.skip("the block path needs numpy")
    s = reopen()
    fill(s, 120, 5)
    prepare(s, at="e2", embedder=EMB)
    s.close()
    small_bulk(monkeypatch, on=True)
    s = reopen()
    first = hits(s, "e2")
    cache = cache_for(s)
    assert cache._digested is not None
    s.purge(memories=[first[0][0]])
    assert cache._digested is None
    assert first[0][0] not in [h for h, _ in hits(s, "e2")]
    s.close()


def test_overlapping_pauses_still_collect_now_and_then(monkeypatch: pytest.MonkeyPatch) -> None:
    """While another thread's pause goes on, a pause that ends after
    `MAX_PAUSE_S` runs a collection (a busy server never has none in flight)."""
    from branchmem import bulk

    runs: list[int] = []
    real = gc.collect
    monkeypatch.setattr(gc, "collect", lambda *a: runs.append(1) or real(*a))
    with paused_elsewhere():
        monkeypatch.setattr(bulk, "MAX_PAUSE_S", 3600.0)
        with paused():
            pass
        assert runs == [], "not yet due"
        monkeypatch.setattr(bulk, "MAX_PAUSE_S", 0.0)
        with paused():
            pass
        assert runs == [1]
        assert not gc.isenabled(), "the other pause still runs"
    assert gc.isenabled()


def test_stored_columns_are_used_as_read_only_when_ids_and_digests_agree() -> None:
    """`terms.in_order` of columns: the records' own ids and digests, in order,
    give the bytes as read; another order is matched by id; a row missing or
    stored for other text refuses the whole."""
    ids, digests = ["a", "b", "c"], ["da", "db", "dc"]
    blobs = [b"1", b"2", b"3"]
    same = terms.in_order((list(ids), list(digests), blobs), ids, digests)
    assert same is blobs
    moved = terms.in_order((ids[::-1], digests[::-1], blobs[::-1]), ids, digests)
    assert moved == blobs
    extra = terms.in_order((["x", *ids], ["dx", *digests], [b"x", *blobs]), ids, digests)
    assert extra == blobs
    assert terms.in_order((ids[:2], digests[:2], blobs[:2]), ids, digests) is None
    assert terms.in_order((ids, ["da", "zz", "dc"], blobs), ids, digests) is None
    assert terms.in_order({"a": ("da", b"1"), "b": ("db", b"2")}, ids, digests) is None
