"""The tree reads against a naive reference: on random trees and DAGs
delivered in random batches, `Store.children`, `Store.siblings` (every page,
any page size), `Store.versions` and `Store.diff` agree with what the drawn
history alone says (arrival order; the fork point is a nearest common
ancestor).

Hypothesis is imported inside the check (the ``dev`` extra).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..store import Store
from .gate_checks import _fresh
from .harness import Stores
from .reference import Reference


def _pages(read: Callable[..., Any], limit: int) -> list[str]:
    """Every page of a paged read, joined; each page but the last full."""
    out: list[str] = []
    cursor = None
    while True:
        page = read(limit=limit, cursor=cursor)
        ids = [e.id for e in page.events]
        assert len(ids) <= limit, f"a page of {len(ids)} events, asked for {limit}"
        out += ids
        cursor = page.cursor
        if cursor is None:
            return out
        assert len(ids) == limit, "a page before the last is not full"


def _fork_ok(ref: Reference, a: str, b: str, got: str | None) -> bool:
    common = ref.ancestors(a) & ref.ancestors(b)
    if not common:
        return got is None
    if got not in common:
        return False
    return not any(c != got and got in ref.ancestors(c) for c in common)


def check_tree(
    store: Store,
    ref: Reference,
    parents: dict[str, tuple[str, ...]],
    arrived: list[str],
    limit: int,
) -> None:
    """children, siblings and versions of every arrived event against ``parents``."""
    roots = [e for e in arrived if not parents[e]]
    assert _pages(lambda **kw: store.children(None, **kw), limit) == roots, "children(None)"
    for x in arrived:
        kids = [e for e in arrived if x in parents[e]]
        got = _pages(lambda x=x, **kw: store.children(x, **kw), limit)
        assert got == kids, f"children({x!r})"
        # roots drawn here carry no meta["version_of"]: each is its own conversation
        sib = [e for e in arrived if set(parents[e]) == set(parents[x])] if parents[x] else [x]
        got = _pages(lambda x=x, **kw: store.siblings(x, **kw), limit)
        assert got == sib, f"siblings({x!r})"
        v = store.versions(x)
        i = sib.index(x)
        assert (v.position, v.count) == (i + 1, len(sib)), f"versions({x!r})"
        assert v.previous == (sib[i - 1] if i else None), f"versions({x!r}).previous"
        assert v.next == (sib[i + 1] if i + 1 < len(sib) else None), f"versions({x!r}).next"


def check_diff(store: Store, ref: Reference, a: str, b: str) -> None:
    d = store.diff(a, b)
    at_a, at_b = ref.memories(a), ref.memories(b)
    assert [m.id for m in d.only_a] == [m for m in at_a if m not in at_b], f"diff({a!r}, {b!r})"
    assert [m.id for m in d.only_b] == [m for m in at_b if m not in at_a], f"diff({a!r}, {b!r})"
    assert d.same == len(set(at_a) & set(at_b))
    assert _fork_ok(ref, a, b, d.fork_point), f"diff({a!r}, {b!r}).fork_point {d.fork_point!r}"


def tree_reads_match_reference(stores: Stores) -> None:
    """children, siblings, versions and diff agree with the drawn history."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    from .strategies import History, apply_op, histories

    make = _fresh(stores)

    @settings(
        max_examples=stores.examples(60),
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow],
    )
    @given(histories(max_events=14, max_ops=8), st.integers(1, 4), st.data())
    def check(hist: History, limit: int, data: st.DataObject) -> None:
        store, ref = make(), Reference()
        ops = list(hist.ops)
        batch = data.draw(st.integers(1, 4), label="batch")
        arrived: list[str] = []
        pending: list[str] = []

        def flush(upto: int) -> None:
            while ops and ops[0].after <= upto:
                apply_op(store, ref, ops.pop(0))

        flush(0)
        for i, eid in enumerate(hist.arrival, 1):
            pending.append(eid)
            if len(pending) < batch and i < len(hist.arrival):
                continue
            store.add_events([{"id": e, "parent": list(hist.parents[e]) or None} for e in pending])
            for e in pending:
                ref.add_event(e, hist.parents[e])
            arrived += pending
            pending = []
            flush(i)
        flush(len(hist.arrival))
        check_tree(store, ref, hist.parents, arrived, limit)
        for _ in range(4):
            a = data.draw(st.sampled_from(arrived), label="a")
            b = data.draw(st.sampled_from(arrived), label="b")
            check_diff(store, ref, a, b)

    check()
