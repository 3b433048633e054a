"""Each record's keyword tokens stored beside it (`retrieval.terms`): a search
that reads them ranks exactly as one that tokenizes from scratch, on every
backend, across `Store` objects, purges and ids written again with other text;
they are deleted with their record, bytes and all, and never enter a vector
table."""

from __future__ import annotations

import itertools
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from branchmem import HashingEmbedder, Store
from branchmem.backends.base import TermStore
from branchmem.retrieval import terms
from branchmem.retrieval.cache import cache_for
from branchmem.retrieval.tokenize import get_tokenizer
from helpers.scratch_rank import rank_from_scratch

WORDS = ["杭州", "成都", "花生", "过敏", "moving", "moves", "Python", "猫", "budget"]
QUERIES = ["杭州", "花生 过敏", "move", "python budget", "猫 成都"]
EMB = HashingEmbedder(32)
NOW = 2e9
TOKENIZERS = ["bigram", "stem"]


Ranked = list[tuple[str, float, float]]
"""Each hit's id, score and raw keyword score (BM25: it sees every length)."""


def ranked(store: Store, ns: str, query: str, mode: str, tok: str) -> Ranked:
    hits = store.search(
        query, at="e1", k=50, namespace=ns, mode=mode, embedder=EMB, tokenizer=tok, now=NOW,
        cutoff="off",
    )  # fmt: skip
    return [(h.memory.id, h.score, h.parts["keyword"]) for h in hits]


def scratch(store: Store, ns: str, query: str, mode: str, tok: str) -> Ranked:
    cands = store.memories(at="e1", namespace=ns, now=NOW)
    return [
        (s.memory.id, s.score, s.keyword or 0.0)
        for s in rank_from_scratch(cands, query, mode, EMB, NOW, 50, tokenizer=tok)
    ]


step = st.one_of(
    st.tuples(st.just("add"), st.integers(0, 2), st.lists(st.sampled_from(WORDS), max_size=5)),
    st.tuples(st.just("purge"), st.integers(0, 2), st.just([])),
    st.tuples(st.just("search"), st.sampled_from(["a", "b", "fresh"]), st.just([])),
    st.tuples(st.just("search"), st.sampled_from(["a", "b"]), st.just([])),
)


def test_stored_terms_rank_as_tokenized_from_scratch(reopen: Callable[[], Store]) -> None:
    """Two `Store` objects on the same data (one file, one schema, one memory
    backend) write, purge and search in turn; a third, fresh one (an empty
    cache: every record's tokens read from the store) searches too. Ids come
    from a pool of three, so an id purged and written again with other text is
    common. Every search equals the ranking from scratch."""
    a, b = reopen(), reopen()
    spaces = itertools.count()
    seen = {"hits": 0, "again": 0}  # searches that found something; ids written again
    try:

        @settings(
            max_examples=50,
            deadline=None,
            database=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
        )
        @given(steps=st.lists(step, min_size=8, max_size=20), data=st.data())
        def run(steps: list[tuple[str, object, list[str]]], data: st.DataObject) -> None:
            ns = f"n{next(spaces)}"  # a fresh namespace per example, on one store
            a.add_event("e1", namespace=ns)
            alive: set[str] = set()
            written: set[str] = set()
            for op, arg, words in steps:
                writer = a if data.draw(st.booleans()) else b
                if op == "add":
                    rid = f"m{arg}"
                    if rid not in alive:
                        seen["again"] += rid in written
                        written.add(rid)
                        text = " ".join(words) + f" {rid}"
                        writer.add_memory(text, sources=["e1"], id=rid, namespace=ns)
                        alive.add(rid)
                elif op == "purge" and f"m{arg}" in alive:
                    writer.purge(memories=[f"m{arg}"], namespace=ns)
                    alive.discard(f"m{arg}")
                elif op == "search":
                    query = data.draw(st.sampled_from(QUERIES))
                    mode = data.draw(st.sampled_from(["keyword", "hybrid"]))
                    tok = data.draw(st.sampled_from(TOKENIZERS))
                    want = scratch(a, ns, query, mode, tok)
                    first = a if arg == "a" else b  # the other reads what this one stored
                    for searcher in (first, b if first is a else a):
                        got = ranked(searcher, ns, query, mode, tok)
                        assert got == want
                    if arg == "fresh":
                        with reopen() as fresh:
                            assert ranked(fresh, ns, query, mode, tok) == want
                    seen["hits"] += bool(got)

        run()
        assert seen["hits"] > 10 and seen["again"] > 0, seen
    finally:
        a.close()
        b.close()


def test_each_record_is_tokenized_once_across_store_objects(reopen: Callable[[], Store]) -> None:
    calls: list[str] = []
    inner = get_tokenizer("bigram")

    class Counting:
        name, version = "counting", "1"

        def __call__(self, text: str) -> list[str]:
            if text.startswith("用户说"):  # a record's text, not the query
                calls.append(text)
            return inner(text)

    first = reopen()
    first.add_event("e1")
    for i, w in enumerate(WORDS):
        first.add_memory(f"用户说{w}", sources=["e1"], id=f"m{i}")
    want = ranked(first, "default", "杭州", "keyword", Counting())  # type: ignore[arg-type]
    assert len(calls) == len(WORDS)
    first.close()
    with reopen() as second:
        got = ranked(second, "default", "杭州", "keyword", Counting())  # type: ignore[arg-type]
        assert got == want and len(calls) == len(WORDS), "read, not tokenized again"
        b = second._engine.backend
        assert isinstance(b, TermStore)
        key = "terms:counting:1"
        assert set(b.get_terms("default", key, ["m0", "m1"])) == {"m0", "m1"}
        # A stored entry for other text, or one that does not decode, is made again.
        with b.transaction():
            b.put_terms("default", key, [("m0", "not the digest", b"x")])
            b.put_terms("default", key, [("m1", terms.digest("用户说成都"), b"\xff\xfe")])
            b.put_terms("default", key, [("ghost", "x", b"x")])  # no record: skipped
        assert b.get_terms("default", key, ["ghost"]) == {}
    with reopen() as third:
        got = ranked(third, "default", "杭州", "keyword", Counting())  # type: ignore[arg-type]
        assert got == want and len(calls) == len(WORDS) + 2
        third.purge(memories=["m0"])
        b = third._engine.backend
        assert isinstance(b, TermStore)
        assert set(b.get_terms("default", key, ["m0", "m1"])) == {"m1"}
        third.purge(whole_namespace=True)
        assert b.get_terms("default", key, ["m1"]) == {}


def test_a_tokenizer_without_a_version_is_not_stored(reopen: Callable[[], Store]) -> None:
    class Plain:
        name = "plain"

        def __call__(self, text: str) -> list[str]:
            return text.split()

    with reopen() as store:
        store.add_event("e1")
        store.add_memory("blue cat", sources=["e1"], id="m1")
        assert [h.memory.id for h in store.search("cat", at="e1", tokenizer=Plain())] == ["m1"]
        assert terms.store_key(Plain()) is None  # type: ignore[arg-type]
        assert cache_for(store).terms["plain"]  # kept in process only


def test_terms_never_enter_the_vector_tables(reopen: Callable[[], Store]) -> None:
    """Tokens are no embedder's: a search stores them apart, and no vector
    table or `Store.info` entry names them (pgvector included)."""
    with reopen() as store:
        store.add_event("e1")
        store.add_memory("blue cat", sources=["e1"], id="m1")
        store.search("cat", at="e1", embedder=EMB)
        store.search("cat", at="e1", embedder=EMB, tokenizer="stem")
        b = store._engine.backend
        assert isinstance(b, TermStore)
        assert set(b.get_terms("default", "terms:stem:1", ["m1"])) == {"m1"}
        assert "terms" not in repr(store.info()["vectors"])
        assert b.get_vectors("default", "terms:stem:1", ["m1"]) == {}  # type: ignore[attr-defined]


def _bytes(p: Path) -> bytes:
    return b"".join(
        Path(str(p) + s).read_bytes() for s in ("", "-wal", "-journal") if Path(str(p) + s).exists()
    )


def test_purged_tokens_are_in_neither_the_file_nor_the_wal(tmp_path: Path) -> None:
    p = tmp_path / "s.db"
    secret = "zqxsecretword"
    with Store(p) as store:
        store.add_event("e1")
        m = store.add_memory(f"{secret} 花生", sources=["e1"])
        store.add_memory("harmless", sources=["e1"], id="keep")
        store.search("花生", at="e1", tokenizer="stem")
        with sqlite3.connect(p) as db:
            n = db.execute("SELECT count(*) FROM terms").fetchone()[0]
        db.close()
        assert n == 2
        store.purge(memories=[m.id])
        assert secret.encode() not in _bytes(p)
        store.add_event("x1", namespace="t")
        store.add_memory(f"{secret} again", sources=["x1"], namespace="t")
        store.search("again", at="x1", namespace="t")
        store.purge(namespace="t", whole_namespace=True)
        assert secret.encode() not in _bytes(p)


def test_a_read_only_file_still_searches(tmp_path: Path) -> None:
    p = tmp_path / "s.db"
    with Store(p) as store:
        store.add_event("e1")
        store.add_memory("blue cat", sources=["e1"], id="m1")
    with Store(p, readonly=True) as ro:  # nothing stored yet; nothing can be
        assert [h.memory.id for h in ro.search("cat", at="e1")] == ["m1"]
    with sqlite3.connect(p) as db:
        assert db.execute("SELECT count(*) FROM terms").fetchone() == (0,)
    db.close()


def test_stored_tokens_are_checked_one_by_one_even_when_read_together() -> None:
    """Two stored entries that each break a character in half (one ends with
    the first bytes of 杭, the next starts with the rest) are both made again,
    though the two side by side would decode; the sound ones are used."""
    from branchmem.model import Memory

    whole = "杭".encode()
    texts = {"a": "甲", "b": "乙", "c": "丙"}
    rows = {
        "a": (terms.digest("甲"), b"ok" + whole[:2]),
        "b": (terms.digest("乙"), whole[2:] + b"ok"),
        "c": (terms.digest("丙"), "丙".encode()),
    }

    class Fake:
        def get_terms(self, ns: str, key: str, ids: list[str]) -> dict[str, tuple[str, bytes]]:
            return {i: rows[i] for i in ids}

        def put_terms(self, ns: str, key: str, got: list[tuple[str, str, bytes]]) -> None: ...

        def transaction(self) -> Any: ...

    mems = [Memory(id=i, content=t, sources=("e1",)) for i, t in texts.items()]
    table: terms.Table = {}
    rest = terms.load(Fake(), "k", mems, table)  # type: ignore[arg-type]
    assert sorted(m.id for m in rest) == ["a", "b"]
    assert table == {("default", "c"): ("丙", "丙".encode())}
