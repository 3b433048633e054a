"""Random sequences of branch operations, checked after every step against a naive reference.

Operations: create, remember, retract on a branch, merge (append, overwrite,
keep_both), snapshot, rollback (allowed or not), resolve (open or closed), a
rollback-and-forward round trip, and bad input. After each step every
branch's head, memories and open conflicts must equal the reference's; bad
input must leave the store unchanged. At the end, ``as_of`` at every past
step must give the answers the store gave at that step.
"""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from branchmem import (
    ConflictClosed,
    InvalidInput,
    NotAnAncestor,
    Store,
    UnknownBranch,
)
from helpers.branch_reference import BranchReference
from helpers.branch_state import state
from helpers.pg_helpers import examples

NAMES = ["main", "a", "b", "u_1/chat"]
KEYS = ["k1", "k1", "k1", "k2", None]
OPS = [
    "remember", "remember", "remember", "remember", "merge", "merge", "resolve", "resolve",
    "create", "retract", "snapshot", "rollback", "roundtrip", "bad",
]  # fmt: skip


class Run:
    def __init__(self, store: Store, clock: list[float], data: st.DataObject) -> None:
        self.s, self.clock, self.data = store, clock, data
        # Choices through one seeded Random: uniform, where drawing each choice
        # from Hypothesis would lean towards the first item and rarely collide.
        self.rnd = random.Random(data.draw(st.integers(0, 2**32 - 1)))
        self.ref = BranchReference()
        self.n = 0
        self.answers: list[tuple[float, dict[str, list[str]]]] = []

    def pick(self, items: list[str]) -> str:
        return self.rnd.choice(items)

    def fresh(self, prefix: str) -> str:
        self.n += 1
        return f"{prefix}{self.n}"

    def check(self) -> None:
        s, ref = self.s, self.ref
        for b, h in ref.heads.items():
            assert s.branch_head(b) == h, b
            assert [m.id for m in s.memories(at=b)] == ref.memories(h), b
            assert sorted(c.id for c in s.conflicts(at=b)) == sorted(ref.conflicts(h)), b
        self.answers.append((self.clock[0], {b: ref.memories(h) for b, h in ref.heads.items()}))

    # operations -------------------------------------------------------------
    def create(self) -> None:
        free = [n for n in NAMES if n not in self.ref.heads]
        if not free:
            return
        name = self.pick(free)
        at = self.pick(sorted(self.ref.heads) + sorted(self.ref.ref.parents))
        b = self.s.create_branch(name, at=at)
        head = self.ref.heads.get(at, at)
        assert (b.head, b.parent) == (head, at if at in self.ref.heads else None)
        self.ref.move(name, head)

    def remember(self) -> None:
        b = self.pick(sorted(self.ref.heads))
        key = self.rnd.choice(KEYS)
        eid, mid = self.fresh("ev"), self.fresh("m")
        content = self.pick([f"value of {mid}"] * 3 + ["x"])  # mostly new, sometimes equal
        self.s.remember(content, branch=b, key=key, id=mid, event_id=eid)
        self.ref.add_event(eid, (self.ref.heads[b],))
        self.ref.add_memory(mid, eid, key, content)
        self.ref.move(b, eid)

    def retract(self) -> None:
        b = self.pick(sorted(self.ref.heads))
        visible = self.ref.memories(self.ref.heads[b])
        if not visible:
            return
        target = self.pick(visible)
        eid, rid = self.fresh("ev"), self.fresh("r")
        self.s.add_event(eid, branch=b)
        self.s.retract(target, sources=[eid], id=rid)
        self.ref.add_event(eid, (self.ref.heads[b],))
        self.ref.move(b, eid)
        self.ref.add_retraction(target, eid, rid)

    def merge(self) -> None:
        if len(self.ref.heads) < 2:
            return
        into = self.pick(sorted(self.ref.heads))
        others = sorted(n for n in self.ref.heads if n != into)
        # Mostly sources with something new, so that merges do something.
        news = [
            n for n in others if not self.ref.is_ancestor(self.ref.heads[n], self.ref.heads[into])
        ]
        src = self.pick(news if news and self.rnd.random() < 0.8 else others)
        strategy = self.pick(["keep_both", "keep_both", "overwrite", "append"])
        mg = self.fresh("mg")
        ref = self.ref
        sh, ih = ref.heads[src], ref.heads[into]
        r = self.s.merge(src, into, strategy=strategy, event_id=mg)
        if ref.is_ancestor(sh, ih):
            assert r.noop and r.head == ih
            return
        target = set(ref.memories(ih))
        if ref.is_ancestor(ih, sh):
            after = ref.memories(sh)
            if strategy == "append" or not ref.collisions(after, target):
                assert r.fast_forward and r.event is None
                assert r.added == len(set(after) - target)
                ref.move(into, sh)
                return
        assert r.event == mg and not r.fast_forward and not r.noop
        ref.add_event(mg, (ih, sh))
        after = ref.memories(mg)
        cols = ref.collisions(after, target) if strategy != "append" else []
        if strategy == "overwrite":
            for _, losers, _ in cols:
                for loser in losers:
                    ref.add_retraction(loser, mg)
            assert r.overwritten == sum(len(x[1]) for x in cols)
        elif strategy == "keep_both":
            assert len(r.conflict_ids) == len(cols)
            by_id = {c.id: c for c in self.s.conflicts(at=mg)}
            for cid, (key, losers, incoming) in zip(r.conflict_ids, cols, strict=True):
                c = by_id[cid]
                assert (c.key, c.members) == (key, tuple(losers + incoming))
                ref.add_conflict(cid, mg, c.members)
        ref.move(into, mg)
        assert r.added == len(set(ref.memories(mg)) - target)
        if r.conflicts and self.rnd.random() < 0.5:
            self.resolve()

    def snapshot(self) -> None:
        b = self.pick(sorted(self.ref.heads))
        name = self.fresh("snap")
        assert self.s.snapshot(b, name).event == self.ref.heads[b]
        self.ref.snaps[name] = self.ref.heads[b]

    def rollback(self) -> None:
        b = self.pick(sorted(self.ref.heads))
        to = self.pick(sorted(self.ref.snaps) + sorted(self.ref.ref.parents))
        target = self.ref.snaps.get(to, to)
        head = self.ref.heads[b]
        allowed = target in self.ref.held[b] or self.ref.is_ancestor(target, head)
        if allowed:
            self.s.rollback(b, to)
            self.ref.move(b, target)
        else:
            before = state(self.s)
            with pytest.raises(NotAnAncestor):
                self.s.rollback(b, to)
            assert state(self.s) == before

    def resolve(self) -> None:
        with_open = [b for b, h in self.ref.heads.items() if self.ref.conflicts(h)]
        b = self.pick(sorted(with_open or self.ref.heads))
        head = self.ref.heads[b]
        open_here = self.ref.conflicts(head)
        if open_here:
            cid = self.pick(open_here)
            keep = self.pick(list(self.ref.members[cid]))
            ev = self.s.resolve(cid, keep, branch=b)
            self.ref.add_event(ev.id, (head,))
            for m in self.ref.members[cid]:
                if m != keep:
                    self.ref.add_retraction(m, ev.id)
            self.ref.add_retraction(cid, ev.id)
            self.ref.move(b, ev.id)
        elif self.ref.members:
            cid = self.pick(sorted(self.ref.members))
            before = state(self.s)
            with pytest.raises(ConflictClosed):
                self.s.resolve(cid, self.ref.members[cid][0], branch=b)
            assert state(self.s) == before

    def roundtrip(self) -> None:
        b = self.pick(sorted(self.ref.heads))
        head = self.ref.heads[b]
        before = [m.id for m in self.s.memories(at=b)]
        back = self.pick(sorted(self.ref.ref.ancestors(head)))
        self.s.rollback(b, back)
        self.ref.move(b, back)
        assert [m.id for m in self.s.memories(at=b)] == self.ref.memories(back)
        self.s.rollback(b, head)
        self.ref.move(b, head)
        assert [m.id for m in self.s.memories(at=b)] == before

    def bad(self) -> None:
        b = self.pick(sorted(self.ref.heads))
        before = state(self.s)
        with pytest.raises(InvalidInput):
            self.s.merge(b, b)
        with pytest.raises(UnknownBranch):
            self.s.remember("x", branch="no_such_branch")
        with pytest.raises(UnknownBranch):
            self.s.rollback("no_such_branch", "root")
        assert state(self.s) == before


@pytest.fixture
def clocked(open_store: Callable[..., Store]) -> tuple[list[float], object]:
    clock = [0.0]
    return clock, lambda: open_store(clock=lambda: clock[0])


def test_branch_operations_match_reference(
    clocked: tuple[list[float], object], backend_name: str
) -> None:
    clock, make = clocked

    @settings(
        # SQLite runs the same operations more slowly; fewer examples keep the suite quick.
        max_examples=examples(backend_name, 60 if backend_name == "memory" else 25),
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    )
    @given(data=st.data())
    def check(data: st.DataObject) -> None:
        clock[0] = 0.0
        store = make()  # type: ignore[operator]
        run = Run(store, clock, data)
        try:
            store.add_event("root")
            run.ref.add_event("root", ())
            store.create_branch("main", at="root")
            run.ref.move("main", "root")
            run.remember()  # a value every branch forked below holds, and may collide with
            for name in NAMES[1:3]:
                store.create_branch(name, at="main")
                run.ref.move(name, run.ref.heads["main"])
            run.check()
            for _ in range(run.rnd.randint(8, 24)):
                clock[0] += 1.0
                getattr(run, run.pick(OPS))()
                run.check()
            for t, answers in run.answers:
                for b, expected in answers.items():
                    got = [m.id for m in store.memories(at=b, as_of=t)]
                    assert got == expected, (t, b)
        finally:
            store.close()

    check()
