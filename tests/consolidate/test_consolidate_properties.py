"""The gate of a consolidation, as a property on every backend: over random
trees (forks, merges, events arriving out of order, sources that never
arrive), a record written by `consolidate` at a random anchor is visible at
an event iff every one of its inputs is visible there in a twin store that
was never consolidated, before and after more retractions and supersedes
of those inputs."""

from __future__ import annotations

from collections.abc import Callable

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from branchmem import Store
from branchmem.consolidate.writer import what
from helpers.pg_helpers import examples
from helpers.strategies import History, Op, histories

TEXTS = ("用户对花生过敏", "用户对花生过敏。", "用户住在成都", "用户喜欢跑步")


def write(store: Store, op: Op) -> None:
    if op.kind == "add":
        text = TEXTS[int(op.id[1:]) % len(TEXTS)]
        store.add_memories([{"content": text, "sources": list(op.sources), "id": op.id}])
    elif op.kind == "retract":
        assert op.target is not None
        store.retract(op.target, sources=list(op.sources), id=op.extra_id)
    else:
        assert op.target is not None
        store.supersede(op.target, f"fact {op.id}", sources=list(op.sources), id=op.id)


def check_gate(done: Store, twin: Store, events: list[str]) -> int:
    consolidated = [m for m in done.records() if what(m) is not None]
    for m in consolidated:
        inputs = (m.meta or {})["consolidated_from"]
        for e in events:
            want = all(twin.visible(x, at=e) for x in inputs)
            assert done.visible(m.id, at=e) == want, (m.id, inputs, e)
    return len(consolidated)


def test_a_consolidation_is_visible_iff_all_its_inputs_are(
    make_store: Callable[[], Store], backend_name: str
) -> None:
    @settings(
        max_examples=examples(backend_name, 30),
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow],
    )
    @given(hist=histories(max_events=10, max_ops=10), data=st.data())
    def check(hist: History, data: st.DataObject) -> None:
        done, twin = make_store(), make_store()
        for s in (done, twin):
            s.add_events([{"id": e, "parent": list(hist.parents[e])} for e in hist.arrival])
        split = data.draw(st.integers(0, len(hist.ops)))
        for op in hist.ops[:split]:
            for s in (done, twin):
                write(s, op)
        events = list(hist.parents)
        at = data.draw(st.sampled_from(events))
        done.consolidate(at=at)
        assert done.consolidate(at=at).written == 0  # idempotent
        check_gate(done, twin, events)
        for op in hist.ops[split:]:  # retractions and supersedes of the inputs, later
            for s in (done, twin):
                write(s, op)
        check_gate(done, twin, events)

    check()
