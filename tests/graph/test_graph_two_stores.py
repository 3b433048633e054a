"""Two `Store` objects on one store (one SQLite file, one PostgreSQL schema,
one memory backend): one writes, retracts and purges edges, the other's graph
views follow, from the views it keeps (`graph/memo.py`) and the edge index it
keeps (`graph/index.py`), which after an erasure is rebuilt from what it held
instead of read again whole.

The property test checks both stores against a naive reference (the gate's,
with purges applied by hand) after every step, with each view asked twice
(the second from the kept view), and counts the reader's whole reads of the
edge index: one, and one more per namespace it purged itself.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from branchmem import Store, UnknownEntity
from branchmem.model import EDGE
from helpers.pg_helpers import PG_URL, SKIP_REASON
from helpers.reference import Reference, RefRecord
from helpers.store_pairs import store_pairs

NAMES = ["Alice", "auth-service", "jwt", "CVE-1"]
PAIRS = [
    "memory",
    "sqlite",
    pytest.param("postgres", marks=pytest.mark.skipif(not PG_URL, reason=SKIP_REASON)),
]


class Spy:
    """Counts a backend's whole reads of edges and the ids it reads by id."""

    def __init__(self, b: Any) -> None:
        self.whole = 0
        self.by_id: list[list[str]] = []
        kinds, get = b.records_of_kind, b.get_records

        def records_of_kind(ns: str, kind: str) -> Any:
            self.whole += kind == EDGE
            return kinds(ns, kind)

        def get_records(ns: str, ids: Any) -> Any:
            ids = list(ids)
            self.by_id.append(ids)
            return get(ns, ids)

        b.records_of_kind = records_of_kind
        b.get_records = get_records


@pytest.fixture
def open_pair(tmp_path: Path) -> Iterator[Callable[[str], tuple[Store, Store]]]:
    """A factory: two stores on one fresh store of the named kind."""
    with store_pairs(tmp_path, "bmt_g2") as factory:
        yield factory


def _nb(s: Store, at: str, name: str) -> list[str]:
    return [e.id for e in s.graph(at=at).neighbors(name)]


@pytest.mark.parametrize("kind", PAIRS)
def test_the_other_store_follows_writes_and_purges(
    open_pair: Callable[[str], tuple[Store, Store]], kind: str
) -> None:
    w, r = open_pair(kind)
    w.add_events([{"id": "e1"}, {"id": "e2", "parent": "e1"}, {"id": "e2b", "parent": "e1"}])
    w.add_edge("Alice", "owns", "auth-service", sources=["e1"], id="g1")
    w.add_edge("auth-service", "uses", "jwt", sources=["e2"], id="g2")
    assert _nb(r, "e2", "auth-service") == ["g1", "g2"]
    spy = Spy(r._engine.backend)
    assert _nb(r, "e2", "auth-service") == ["g1", "g2"]  # nothing moved: nothing read
    assert spy.by_id == [] and spy.whole == 0
    w.add_edge("Bob", "uses", "auth-service", sources=["e1"], id="g3")
    assert _nb(r, "e2", "auth-service") == ["g1", "g2", "g3"]
    held = r.graph(at="e2")
    w.purge(memories=["g2"])
    assert _nb(r, "e2", "auth-service") == ["g1", "g3"]
    assert [e.id for e in held.neighbors("auth-service")] == ["g1", "g2", "g3"]  # as made
    # The top number is given again to a new record of the same id: the
    # rebuilt index must not keep the old one.
    w.purge(memories=["g3"])
    w.add_edge("Carol", "uses", "auth-service", sources=["e2"], id="g3")
    assert _nb(r, "e2", "auth-service") == ["g1", "g3"]
    assert [e.subject for e in r.graph(at="e2").neighbors("auth-service")] == ["Alice", "Carol"]
    with pytest.raises(UnknownEntity):
        r.graph(at="e2").neighbors("Bob")
    w.purge(events=["e1"])  # g1 goes with its source
    assert _nb(r, "e2", "auth-service") == ["g3"]
    if kind != "memory":  # (there both stores read through the one backend)
        assert spy.whole == 0  # never read again whole: the erasures rebuilt what it held
        assert spy.by_id == [["g3"]]  # read by id: the one stored again, only


def _purged(ref: Reference, gone: set[str]) -> None:
    """Drop ``gone`` from ``ref`` and, in turn, every retraction of what goes."""
    while gone:
        ref.records = [r for r in ref.records if r.id not in gone]
        gone = {
            r.id
            for r in ref.records
            if r.target is not None and r.target not in {x.id for x in ref.records}
        }


EVENT = st.tuples(st.just("event"), st.integers(0, 1), st.integers(-1, 6), st.just(0))
EDGE_STEP = st.tuples(st.just("edge"), st.integers(0, 1), st.integers(0, 30), st.integers(0, 30))
STEP = st.one_of(
    EVENT,
    EVENT,
    EDGE_STEP,
    EDGE_STEP,
    EDGE_STEP,
    EDGE_STEP,
    st.tuples(st.just("retract"), st.integers(0, 1), st.integers(0, 30), st.integers(0, 30)),
    st.tuples(st.just("purge_edge"), st.integers(0, 1), st.integers(0, 30), st.just(0)),
    st.tuples(st.just("purge_event"), st.integers(0, 1), st.integers(0, 30), st.just(0)),
    st.tuples(st.just("swap"), st.integers(0, 1), st.integers(0, 30), st.integers(0, 30)),
    st.tuples(st.just("readd"), st.integers(0, 1), st.integers(0, 30), st.integers(0, 30)),
    st.tuples(st.just("purge_ns"), st.integers(0, 1), st.integers(0, 3), st.just(0)),
)


def _check(s: Store, ref: Reference, triples: dict[str, tuple[str, str, str]]) -> None:
    for a in list(ref.parents):
        anc = ref.ancestors(a)
        want = ref.memories(a)
        adj: dict[str, list[str]] = {}
        for eid in want:
            sub, _, obj = triples[eid]
            adj.setdefault(sub.casefold(), []).append(eid)
            if obj.casefold() != sub.casefold():
                adj.setdefault(obj.casefold(), []).append(eid)
        for _ in range(2):  # the second time from the view kept at the anchor
            g = s.graph(at=a)
            got = g.edges()
            assert [e.id for e in got] == want, a
            assert all(set(e.sources) <= anc for e in got)
            assert [(e.subject, e.predicate, e.object) for e in got] == [triples[i] for i in want]
            for name in NAMES:
                if name.casefold() in adj:
                    assert [e.id for e in g.neighbors(name)] == adj[name.casefold()], (a, name)
                else:
                    with pytest.raises(UnknownEntity):
                        g.neighbors(name)


def _run(
    stores: tuple[Store, Store], steps: list[tuple[str, int, int, int]], c: Counter[str]
) -> None:
    spies = [Spy(s._engine.backend) for s in stores]
    own_ns_purges = [0, 0]
    ref = Reference()
    triples: dict[str, tuple[str, str, str]] = {}
    made: list[str] = []  # every edge id ever added in this namespace's life
    gen = n = 0
    for op, who, a, b in steps:
        s = stores[who]
        events = list(ref.parents)
        stored = [r.id for r in ref.records if r.target is None]
        if op == "event":
            eid = f"v{gen}e{len(events)}"
            parent = events[-1 - a % len(events)] if events and a >= 0 else None
            s.add_event(eid, parent=parent, content=eid)
            ref.add_event(eid, (parent,) if parent else ())
        elif op in ("edge", "readd") and events:
            gone = [i for i in made if i not in stored]
            if op == "readd" and not gone:
                continue  # nothing to do it to
            eid = gone[a % len(gone)] if op == "readd" else f"x{n}"
            n += 1
            srcs = tuple(dict.fromkeys([events[a % len(events)], events[b % len(events)]]))
            i = (a + n) % len(NAMES)
            sub, obj = NAMES[i], NAMES[(i + 1 + b % (len(NAMES) - 1)) % len(NAMES)]
            pred = "uses" if b % 2 else "depends on"
            s.add_edge(sub, pred, obj, sources=list(srcs), id=eid)
            ref.add_record(RefRecord(eid, srcs))
            triples[eid] = (sub, pred, obj)
            if op == "edge":
                made.append(eid)
        elif op == "retract" and events and stored:
            target = stored[a % len(stored)]
            rid = f"r{n}"
            n += 1
            src = (events[b % len(events)],)
            s.retract(target, sources=list(src), id=rid)
            ref.add_record(RefRecord(rid, src, target))
        elif op == "purge_edge" and stored:
            eid = stored[a % len(stored)]
            s.purge(memories=[eid])
            _purged(ref, {eid})
        elif op == "swap" and stored:
            # Purged and written again under its id before anyone reads: the
            # top number may be given again.
            eid = stored[a % len(stored)]
            s.purge(memories=[eid])
            _purged(ref, {eid})
            sub, pred, obj = triples[eid]
            src = (events[b % len(events)],)
            s.add_edge(obj, pred, sub, sources=list(src), id=eid)
            ref.add_record(RefRecord(eid, src))
            triples[eid] = (obj, pred, sub)
        elif op == "purge_event" and events:
            eid = events[a % len(events)]
            s.purge(events=[eid])
            _purged(ref, {r.id for r in ref.records if eid in r.sources})
        elif op == "purge_ns" and events and a == 0:  # (rarer than the rest)
            s.purge(whole_namespace=True)
            own_ns_purges[who] += 1
            ref, triples, made = Reference(), {}, []
            gen += 1
        else:
            continue  # nothing to do it to: a step not taken
        c[op] += 1
        for other in stores:
            _check(other, ref, triples)
            c["views"] += len(ref.parents)
    if stores[0]._engine.backend is not stores[1]._engine.backend:  # each its own count
        for spy, own in zip(spies, own_ns_purges, strict=True):
            assert spy.whole <= 1 + own, (spy.whole, own)


@pytest.mark.parametrize("kind", PAIRS)
def test_two_stores_match_the_reference(
    open_pair: Callable[[str], tuple[Store, Store]], kind: str
) -> None:
    c: Counter[str] = Counter()

    @settings(
        max_examples=60 if kind != "postgres" else 25,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    )
    @given(steps=st.lists(STEP, min_size=8, max_size=30))
    def check(steps: list[tuple[str, int, int, int]]) -> None:
        pair = open_pair(kind)
        try:
            _run(pair, [("event", 0, -1, 0), *steps], c)
        finally:
            for s in pair:
                s.close()

    check()
    # Every kind of step was taken, and views checked after each.
    assert all(
        c[op] > 0 for op in ("edge", "retract", "purge_edge", "purge_event", "readd", "swap")
    ), c
    assert c["views"] >= 200, c
