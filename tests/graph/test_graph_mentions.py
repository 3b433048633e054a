"""An entity exists at an anchor iff a visible edge names it or a visible
record mentions its name: `GraphView.has`, `entities`, `neighbors` (an empty
list for one only mentioned, `UnknownEntity` for one neither) against a naive
reference, on every backend.

Random trees of events get edges between a few names and memories whose
text mentions some of them (a name inside a longer word does not count),
some retracted, some past their ``valid_to`` on the store's clock. The
reference gates records by walking parents and finds mentions by scanning
the text for each name.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from branchmem import Store, UnknownEntity
from branchmem.graph.model import norm
from helpers.pg_helpers import examples
from helpers.reference import Reference, RefRecord

NAMES = ["Alice", "auth-service", "auth", "jwt", "支付服务", "CVE-1"]
WORDS = [*NAMES, "author", "uses", "负责", "AUTH", "jwts", "x"]
NOW = 1000.0


def _wordish(ch: str) -> bool:
    return ch.isascii() and (ch.isalnum() or ch == "_")


def naive_mentions(text: str, name: str) -> bool:
    """Does ``text`` hold ``name`` (both normalised), not inside a longer word?"""
    t, n = norm(text), norm(name)
    i = t.find(n)
    while i >= 0:
        j = i + len(n)
        if not (_wordish(n[0]) and i > 0 and _wordish(t[i - 1])) and not (
            _wordish(n[-1]) and j < len(t) and _wordish(t[j])
        ):
            return True
        i = t.find(n, i + 1)
    return False


STEP = st.one_of(
    st.tuples(st.just("event"), st.integers(-1, 8), st.just(()), st.just(0)),
    st.tuples(
        st.just("edge"),
        st.integers(0, 30),
        st.tuples(st.sampled_from(NAMES), st.sampled_from(NAMES)),
        st.just(0),
    ),
    st.tuples(
        st.just("memory"),
        st.integers(0, 30),
        st.lists(st.sampled_from(WORDS), min_size=1, max_size=4).map(tuple),
        st.sampled_from([0, 1, 2]),  # no bound, still valid, past valid_to
    ),
    st.tuples(st.just("retract"), st.integers(0, 30), st.just(()), st.integers(0, 30)),
)


def _run(store: Store, steps: list[tuple[str, int, tuple[str, ...], int]]) -> int:
    ref = Reference()
    texts: dict[str, str] = {}
    ends: dict[str, tuple[str, str]] = {}
    stale: set[str] = set()  # past their valid_to
    n = 0
    for op, a, words, b in steps:
        events = list(ref.parents)
        if op == "event":
            eid = f"e{len(events)}"
            parent = events[-1 - a % len(events)] if events and a >= 0 else None
            store.add_event(eid, parent=parent, content=eid)
            ref.add_event(eid, (parent,) if parent else ())
            continue
        if not events:
            continue
        src = (events[a % len(events)],)
        n += 1
        if op == "edge":
            s, o = words
            if s == o:
                continue
            store.add_edge(s, "uses", o, sources=list(src), id=f"g{n}")
            ref.add_record(RefRecord(f"g{n}", src))
            ends[f"g{n}"] = (s, o)
        elif op == "memory":
            sep = " " if b != 1 else ""  # run together, the way Chinese text is
            text = sep.join(words)
            valid_to = None if b == 0 else NOW + 100 if b == 1 else NOW - 100
            store.add_memory(text, sources=list(src), id=f"m{n}", valid_to=valid_to)
            ref.add_record(RefRecord(f"m{n}", src))
            texts[f"m{n}"] = text
            if b == 2:
                stale.add(f"m{n}")
        else:
            live = [r.id for r in ref.records if r.target is None]
            if not live:
                continue
            target = live[b % len(live)]
            store.retract(target, sources=list(src), id=f"r{n}")
            ref.add_record(RefRecord(f"r{n}", src, target))
    checked = 0
    every = {norm(x) for e in ends.values() for x in e}  # the names edges name, anywhere
    for anchor in ref.parents:
        shown = ref.memories(anchor)
        linked = {norm(x) for i in shown if i in ends for x in ends[i]}
        said = {
            k
            for k in every
            if any(naive_mentions(texts[i], k) for i in shown if i in texts and i not in stale)
        }
        for _ in range(2):  # the second time from the view kept at the anchor
            g = store.graph(at=anchor)
            assert {norm(e.name) for e in g.entities()} == linked | said, anchor
            for name in NAMES:
                k = norm(name)
                assert g.has(name) == (k in linked | said), (anchor, name)
                if k in linked | said:
                    want = [i for i in shown if i in ends and k in {norm(x) for x in ends[i]}]
                    assert [e.id for e in g.neighbors(name)] == want
                else:
                    with pytest.raises(UnknownEntity):
                        g.neighbors(name)
            checked += 1
    return checked


def test_entities_match_the_reference(open_store: Callable[..., Store], backend_name: str) -> None:
    n = examples(backend_name, 80)
    total = {"views": 0, "said only": 0}

    @settings(
        max_examples=n,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(steps=st.lists(STEP, min_size=4, max_size=24))
    def check(steps: list[tuple[str, int, tuple[str, ...], int]]) -> None:
        store = open_store(clock=lambda: NOW)
        try:
            total["views"] += _run(store, [("event", -1, (), 0), *steps])
        finally:
            store.close()

    check()
    assert total["views"] >= n, total


def test_an_entity_only_mentioned_has_no_neighbours(store: Store) -> None:
    store.add_events([{"id": "e1"}, {"id": "e2", "parent": "e1"}, {"id": "e2b", "parent": "e1"}])
    store.add_edge("Alice", "owns", "auth-service", sources=["e2b"])
    store.add_edge("auth", "part of", "sso", sources=["e2b"])
    assert not store.graph(at="e2").has("Alice")
    store.add_memory("Alice 负责 auth-service 的发布", sources=["e2"])
    g = store.graph(at="e2")
    assert g.has("alice") and g.neighbors("Alice") == [] and g.edges() == []
    assert [e.name for e in g.entities()] == ["Alice", "auth", "auth-service"]
    assert g.paths("Alice", "auth-service") == []
    with pytest.raises(UnknownEntity):
        g.neighbors("sso")
    assert store.graph(at="e1").entities() == []  # the memory is on e2's path only
    store.add_memory("author of the notes", sources=["e1"])  # "auth" inside a word
    assert store.graph(at="e1").entities() == []
    assert [e.name for e in store.graph(at="e2b").entities()] == [
        "Alice", "auth", "auth-service", "sso"
    ]  # fmt: skip
