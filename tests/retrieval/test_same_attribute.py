"""Newer beats older, by meaning (`retrieval.recency_order.same_attribute`):
the same entity, near-duplicate vectors, different values."""

from __future__ import annotations

import functools
import itertools
import math

from hypothesis import given, settings
from hypothesis import strategies as st

from branchmem import HashingEmbedder, Store
from branchmem.graph.entities import entities
from branchmem.model import Memory
from branchmem.retrieval.recency_order import near_by, order, relation, same_attribute


def _mem(i: str, text: str, seq: int, key: str | None = None) -> Memory:
    return Memory(i, text, ("e1",), key=key, seq=seq)


def _near(old: Memory, new: Memory, cos: float = 0.9) -> bool:
    return same_attribute(old, new, cos, entities(old.content), entities(new.content))


def test_a_new_price_of_the_same_plan_is_the_same_attribute() -> None:
    old = _mem("a", "The Pro plan costs $20/month", 1)
    new = _mem("b", "The Pro plan now costs $25/month", 2)
    assert _near(old, new)
    assert relation(old, new, near=True) == "fold" and relation(new, old, near=True) is None
    assert not _near(old, new, cos=0.5)  # far apart in meaning
    assert not _near(old, _mem("c", "The Pro plan costs $20/month, billed yearly", 2))  # same value


def test_two_entities_prices_do_not_fold() -> None:
    pro = _mem("a", "Acme Pro costs $20/month", 1)
    team = _mem("b", "Acme Team costs $25/month", 2)
    assert entities(pro.content) != entities(team.content)
    assert not same_attribute(pro, team, 0.95, frozenset({"pro"}), frozenset({"team"}))


def test_without_numbers_a_stated_change_makes_the_difference() -> None:
    old = _mem("a", "Alice likes tea", 1)
    assert _near(old, _mem("b", "Alice now likes coffee", 2))
    assert not _near(old, _mem("c", "Alice likes coffee", 2))  # both may hold


def test_without_a_common_entity_nothing_is_the_same_attribute() -> None:
    # Close vectors alone are not enough: an embedder may put unrelated notices close.
    old = _mem("a", "Daily active users 18,240", 1)
    assert not _near(old, _mem("b", "The coffee machine on floor 4 is fixed", 2), cos=0.95)


def test_unrelated_keys_are_never_folded_by_meaning() -> None:
    old = _mem("a", "Retention is 30 days", 1, key="logs.retention")
    new = _mem("b", "Retention is 90 days", 2, key="backup.retention")  # near=True given
    assert relation(old, new, near=True) is None
    assert relation(old, _mem("c", "Retention is 90 days", 2), near=True) == "fold"


def test_near_by_reads_vectors_and_skips_records_without_one() -> None:
    mems = [_mem("a", "The Pro plan costs $20/month", 1), _mem("b", "The Pro plan costs $25", 2)]
    names = [entities(m.content) for m in mems]
    assert near_by(mems, [[1.0, 0.0], [0.8, 0.6]], names)(0, 1)
    assert not near_by(mems, [[1.0, 0.0], [0.0, 1.0]], names)(0, 1)
    assert not near_by(mems, [[1.0, 0.0], None], names)(0, 1)
    got, folded = order(mems, lambda m: m, "what does Pro cost", near_by(mems, [[1.0]] * 2, names))
    assert [m.id for m in got] == ["b"] and folded == {0: "b"}


def _plan_store(second: str) -> Store:
    store = Store()
    store.add_events([{"id": "e1"}, {"id": "e2", "parent": "e1"}])
    store.add_memory("The Pro plan costs $20/month", sources=["e1"])
    store.add_memory(second, sources=["e2"])
    return store


def test_search_keeps_the_newer_price_unless_the_past_is_asked() -> None:
    emb = HashingEmbedder()
    store = _plan_store("The Pro plan costs $25/month")
    hits = store.search("How much is the Pro plan?", at="e2", k=2, embedder=emb)
    assert [h.memory.content for h in hits] == ["The Pro plan costs $25/month"]
    past = store.search("How much did the Pro plan cost before?", at="e2", k=2, embedder=emb)
    assert len(past) == 2
    kw = store.search("How much is the Pro plan?", at="e2", k=2, mode="keyword")
    assert len(kw) == 2  # no vectors: the meaning rule does not apply
    other = _plan_store("The Team plan costs $25/month")
    assert len(other.search("plan costs", at="e2", k=2, embedder=emb, cutoff="ratio")) == 2


def test_two_libraries_of_one_service_are_not_one_attribute() -> None:
    a = _mem("a", "payment-gateway depends on fastjson 1.2.68", 1)
    b = _mem("b", "payment-gateway depends on log4j-core 2.14.1", 2)
    assert not _near(a, b, cos=0.96)  # one service, two dependencies: both hold
    upgraded = _mem("c", "payment-gateway now depends on log4j-core 2.17.1", 3)
    assert _near(b, upgraded)  # the same dependency, a new version
    advisory = _mem("d", "log4j-core before 2.17.1 has CVE-2021-44832; payment-gateway", 3)
    assert not _near(b, advisory)


_TEXTS = [
    "The Pro plan costs $20/month",
    "The Pro plan now costs $25/month",
    "Acme Team costs $25/month",
    "Alice now likes coffee",
    "Alice likes tea",
    "MatrixOne listens on port 6001",
    "MatrixOne now listens on port 6002",
    "log4j 2.14.1 is in use",
]
_KEYS = [None, None, "plan.price", "plan.price.pro", "user.drink"]


@st.composite
def _ranked(draw: st.DrawFn) -> tuple[list[Memory], list[list[float] | None]]:
    """Records with texts that share entities and values, and 2-d vectors
    (some near each other, some missing)."""
    n = draw(st.integers(2, 7))
    mems, vecs = [], []
    for i in range(n):
        text = draw(st.sampled_from(_TEXTS))
        key, seq = draw(st.sampled_from(_KEYS)), draw(st.integers(1, 4))
        at = float(draw(st.integers(0, 3)))
        mems.append(Memory(f"m{i}", text, ("e1",), key=key, seq=seq, created_at=at))
        angle = draw(st.sampled_from([0.0, 0.1, 0.5, 1.2, None]))
        vecs.append(None if angle is None else [math.cos(angle), math.sin(angle)])
    return mems, vecs


def _near_at(a: Memory, b: Memory, cos: float, names: list[frozenset[str]], i: int, j: int) -> bool:
    return same_attribute(a, b, cos, names[i], names[j])


@settings(max_examples=200, deadline=None)
@given(_ranked())
def test_near_by_answers_as_same_attribute_with_every_cosine(
    drawn: tuple[list[Memory], list[list[float] | None]],
) -> None:
    """The fast form (subjects first, each pair's cosine once) against the
    plain one: `same_attribute` with the cosine of every ordered pair."""
    mems, vecs = drawn
    names = [entities(m.content) for m in mems]
    near = near_by(mems, vecs, names)
    for i, j in itertools.permutations(range(len(mems)), 2):
        a, b = vecs[i], vecs[j]
        cos = sum(x * y for x, y in zip(a, b, strict=True)) if a and b else 0.0
        want = a is not None and b is not None and _near_at(mems[i], mems[j], cos, names, i, j)
        assert near(i, j) == want, (mems[i], mems[j])


@settings(max_examples=200, deadline=None)
@given(_ranked())
def test_relation_asks_its_nearness_only_where_it_matters(
    drawn: tuple[list[Memory], list[list[float] | None]],
) -> None:
    """Told by a function, `relation` answers as told the answer at once."""
    mems, vecs = drawn
    near = near_by(mems, vecs, [entities(m.content) for m in mems])
    for i, j in itertools.permutations(range(len(mems)), 2):
        told = near(i, j)
        assert relation(mems[i], mems[j], functools.partial(near, i, j)) == relation(
            mems[i], mems[j], told
        )
