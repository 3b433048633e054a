"""Hypothesis strategies: random trees and DAGs, memories, arrival orders;
and `apply_op`, which writes one drawn record to a store and the reference alike.

Importing this module needs Hypothesis (``pip install 'branchmem[dev]'``).
"""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import strategies as st

from branchmem import Store

from .reference import Reference, RefRecord


@dataclass(frozen=True)
class Op:
    """A record write, done after ``after`` events have arrived."""

    after: int
    kind: str  # "add", "retract" or "supersede"
    id: str
    sources: tuple[str, ...]
    target: str | None = None
    extra_id: str | None = None  # the retraction id of a supersede


@dataclass(frozen=True)
class History:
    parents: dict[str, tuple[str, ...]]  # event id -> parents (generation order is topological)
    arrival: tuple[str, ...]  # the order events are delivered in
    ops: tuple[Op, ...]

    def ancestors(self, e: str) -> set[str]:
        out, stack = set(), [e]
        while stack:
            x = stack.pop()
            if x not in out:
                out.add(x)
                stack.extend(self.parents[x])
        return out


@st.composite
def histories(draw: st.DrawFn, max_events: int = 18, max_ops: int = 12) -> History:
    n = draw(st.integers(1, max_events))
    ids = [f"e{i}" for i in range(n)]
    parents: dict[str, tuple[str, ...]] = {}
    for i in range(n):
        roll = draw(st.integers(0, 19))
        if i == 0 or roll == 0:
            p: tuple[str, ...] = ()  # a root: some stores hold several trees
        elif i >= 2 and roll <= 2:
            a, b = draw(st.lists(st.integers(0, i - 1), min_size=2, max_size=2, unique=True))
            p = (ids[a], ids[b])  # a merge
        elif roll <= 12:
            p = (ids[i - 1],)  # chat-like: extend the latest message
        else:
            p = (ids[draw(st.integers(0, i - 1))],)  # fork from an older node
        parents[ids[i]] = p
    order_kind = draw(st.sampled_from(["random", "in_order", "reversed", "nearly"]))
    if order_kind == "in_order":
        arrival = list(ids)
    elif order_kind == "reversed":
        arrival = list(reversed(ids))
    elif order_kind == "nearly":
        arrival = list(ids)
        for _ in range(draw(st.integers(1, 3))):
            i = draw(st.integers(0, n - 1))
            j = draw(st.integers(0, n - 1))
            arrival[i], arrival[j] = arrival[j], arrival[i]
    else:
        arrival = list(draw(st.permutations(ids)))
    hist = History(parents, tuple(arrival), ())
    ghosts = ["ghost0", "ghost1"]  # sources that never arrive
    ops: list[Op] = []
    adds: list[str] = []
    for k in range(draw(st.integers(0, max_ops))):
        after = draw(st.integers(0, n))
        what = draw(st.sampled_from(["add", "add", "add", "retract", "supersede"]))
        mode = draw(st.integers(0, 9))
        if mode <= 5:  # sources on one chain: an event and some of its ancestors
            tip = draw(st.sampled_from(ids))
            anc = sorted(hist.ancestors(tip))
            rest = draw(st.lists(st.sampled_from(anc), max_size=3, unique=True))
            sources = tuple(dict.fromkeys([tip, *rest]))
        elif mode <= 8:  # anywhere, often across branches
            sources = tuple(
                draw(st.lists(st.sampled_from(ids), min_size=1, max_size=4, unique=True))
            )
        else:  # one source never arrives: the record must stay hidden
            sources = (draw(st.sampled_from(ids)), draw(st.sampled_from(ghosts)))
        if what != "add" and adds:
            target = draw(st.sampled_from(adds))
            ops.append(Op(after, what, f"m{k}", sources, target, f"r{k}"))
            if what == "supersede":
                adds.append(f"m{k}")
        else:
            ops.append(Op(after, "add", f"m{k}", sources))
            adds.append(f"m{k}")
    # Ops keep their generated order among equal `after`, so targets exist first.
    ordered = sorted(enumerate(ops), key=lambda x: (x[1].after, x[0]))
    # A retract/supersede must come after its target's add in the write order.
    written: set[str] = set()
    final: list[Op] = []
    for _, op in ordered:
        if op.target is not None and op.target not in written:
            op = Op(op.after, "add", op.id, op.sources)
        final.append(op)
        written.add(op.id)
    return History(parents, tuple(arrival), tuple(final))


def apply_op(store: Store, ref: Reference, op: Op) -> None:
    if op.kind == "add":
        store.add_memory(f"fact {op.id}", sources=list(op.sources), id=op.id)
        ref.add_record(RefRecord(op.id, op.sources))
    elif op.kind == "retract":
        assert op.target is not None and op.extra_id is not None
        store.retract(op.target, sources=list(op.sources), id=op.extra_id)
        ref.add_record(RefRecord(op.extra_id, op.sources, op.target))
    else:
        assert op.target is not None and op.extra_id is not None
        # supersede writes the retraction first, then the new record
        r = store.supersede(op.target, f"fact {op.id}", sources=list(op.sources), id=op.id)
        ret = [m for m in store.memories(at=None)]  # at=None never sees anything
        assert ret == []
        ref.add_record(RefRecord(f"__ret_{op.id}", op.sources, op.target))
        ref.add_record(RefRecord(r.id, op.sources))
