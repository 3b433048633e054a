"""The gate against a naive reference (`reference.Reference`), on random trees
and DAGs: after every arrival and at the end, `Store.memories`, `Store.visible`,
`Store.explain` and `Store.path` agree with it for every (record, anchor)
pair, and the final answers do not depend on the order events arrived in.

Hypothesis is imported inside the checks (the ``dev`` extra).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from ..store import Store
from .harness import Stores
from .reference import Reference

MIN_GRAPHS = 400
# A floor on how much the property checked, not a target: random graphs give
# about 100,000 to 130,000 decisions, and one run gave 99,831.
MIN_DECISIONS = 90_000


def _check_all(store: Store, ref: Reference, anchors: list[str], counter: Counter[str]) -> None:
    n_records = sum(1 for r in ref.records if r.target is None)
    for a in anchors:
        got = [m.id for m in store.memories(at=a)]
        assert got == ref.memories(a), f"memories(at={a!r})"
        counter["decisions"] += n_records


def run_history(
    make: Callable[[], Store], hist: object, counter: Counter[str], *, every_step: bool
) -> dict[str, list[str]]:
    """Deliver ``hist`` (a `strategies.History`) to a new store and the
    reference alike, checking them against each other; the final answers."""
    from .strategies import History, apply_op

    assert isinstance(hist, History)
    store, ref = make(), Reference()
    ops = list(hist.ops)
    arrived: list[str] = []

    def flush(upto: int) -> None:
        while ops and ops[0].after <= upto:
            apply_op(store, ref, ops.pop(0))

    flush(0)
    for i, eid in enumerate(hist.arrival, 1):
        store.add_event(eid, parent=list(hist.parents[eid]) or None, content=eid)
        ref.add_event(eid, hist.parents[eid])
        arrived.append(eid)
        flush(i)
        if every_step:
            _check_all(store, ref, arrived, counter)
    flush(len(hist.arrival))
    _check_all(store, ref, arrived, counter)
    # visible() for every (record, anchor) pair, including retractions
    for rid in [r.id for r in ref.records if not r.id.startswith("__ret_")]:
        for a in arrived:
            v = store.visible(rid, at=a)
            assert v == ref.visible(rid, a), f"visible({rid!r}, at={a!r})"
            assert store.explain(rid, at=a).visible == v
            counter["decisions"] += 1
    # path(): exactly the ancestors, parents before children
    for a in arrived:
        path = [e.id for e in store.path(a)]
        assert set(path) == ref.ancestors(a)
        pos = {e: i for i, e in enumerate(path)}
        assert all(pos[p] < pos[e] for e in path for p in hist.parents[e])
    counter["graphs"] += 1
    return {a: [m.id for m in store.memories(at=a)] for a in arrived}


def _fresh(stores: Stores) -> Callable[[], Store]:
    """Each call closes the previous store and opens a new one (a property
    opens hundreds)."""
    held: list[Store] = []

    def make() -> Store:
        while held:
            held.pop().close()
        store = stores.open()
        held.append(store)
        return store

    return make


def gate_matches_reference(stores: Stores) -> None:
    """After every arrival, the gate's answers are the reference's."""
    from hypothesis import HealthCheck, given, settings

    from .strategies import History, histories

    counter: Counter[str] = Counter()
    graphs = stores.examples(MIN_GRAPHS)
    make = _fresh(stores)

    @settings(
        max_examples=graphs,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(hist=histories())
    def check(hist: History) -> None:
        run_history(make, hist, counter, every_step=True)

    check()
    assert counter["graphs"] >= graphs, counter
    # Hypothesis starts with small graphs, so fewer graphs make far fewer decisions.
    floor = MIN_DECISIONS if graphs >= MIN_GRAPHS else 1_000 * graphs // MIN_GRAPHS
    assert counter["decisions"] >= floor, counter


def answers_do_not_depend_on_arrival_order(stores: Stores) -> None:
    """The same events and records, delivered in two orders, give the same answers."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from .strategies import History, Op, histories

    counter: Counter[str] = Counter()
    make = _fresh(stores)

    @settings(max_examples=stores.examples(120), deadline=None, database=None)
    @given(hist=histories(max_events=14, max_ops=10), data=st.data())
    def check(hist: History, data: st.DataObject) -> None:
        other = data.draw(st.permutations(hist.arrival))
        # Writes go after all events so that both runs hold the same records.
        late = tuple(
            Op(len(other), o.kind, o.id, o.sources, o.target, o.extra_id) for o in hist.ops
        )
        a = run_history(make, History(hist.parents, hist.arrival, late), counter, every_step=False)
        b = run_history(make, History(hist.parents, tuple(other), late), counter, every_step=False)
        assert a == b

    check()
