"""children, siblings, versions and diff on every backend, against a naive
reference computed from the drawn history alone."""

from __future__ import annotations

import pathlib
import sqlite3
from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from branchmem import InvalidInput, Store, UnknownEvent
from pg_helpers import examples
from reference import Reference
from strategies import History, apply_op, histories


def _pages(read: Callable[..., object], limit: int) -> list[str]:
    """Every page of a paged read, joined; checks each page's size."""
    out: list[str] = []
    cursor = None
    while True:
        page = read(limit=limit, cursor=cursor)
        ids = [e.id for e in page.events]  # type: ignore[attr-defined]
        assert len(ids) <= limit
        out += ids
        cursor = page.cursor  # type: ignore[attr-defined]
        if cursor is None:
            return out
        assert len(ids) == limit, "a page before the last is full"


def _fork_ok(ref: Reference, a: str, b: str, got: str | None) -> bool:
    common = ref.ancestors(a) & ref.ancestors(b)
    if not common:
        return got is None
    if got not in common:
        return False
    # No other common ancestor lies below it: it is one of the nearest.
    return not any(c != got and got in ref.ancestors(c) for c in common)


def check_tree(store: Store, ref: Reference, hist: History, arrived: list[str], limit: int) -> None:
    order = {e: i for i, e in enumerate(arrived)}
    par = {e: hist.parents[e] for e in arrived}
    assert _pages(lambda **kw: store.children(None, **kw), limit) == [
        e for e in arrived if not par[e]
    ]
    for x in arrived:
        kids = [e for e in arrived if x in par[e]]
        assert _pages(lambda x=x, **kw: store.children(x, **kw), limit) == kids, f"children({x})"
        sib = [e for e in arrived if set(par[e]) == set(par[x])]
        assert _pages(lambda x=x, **kw: store.siblings(x, **kw), limit) == sib, f"siblings({x})"
        v = store.versions(x)
        i = sib.index(x)
        assert (v.position, v.count) == (i + 1, len(sib))
        assert v.previous == (sib[i - 1] if i else None)
        assert v.next == (sib[i + 1] if i + 1 < len(sib) else None)
    assert sorted(order) == sorted(arrived)


def check_diff(store: Store, ref: Reference, a: str, b: str) -> None:
    d = store.diff(a, b)
    at_a, at_b = ref.memories(a), ref.memories(b)
    assert [m.id for m in d.only_a] == [m for m in at_a if m not in at_b]
    assert [m.id for m in d.only_b] == [m for m in at_b if m not in at_a]
    assert d.same == len(set(at_a) & set(at_b))
    assert _fork_ok(ref, a, b, d.fork_point), (a, b, d.fork_point)


def test_tree_reads_match_reference(make_store: Callable[[], Store], backend_name: str) -> None:
    @settings(
        max_examples=examples(backend_name, 60),
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow],
    )
    @given(histories(max_events=14, max_ops=8), st.integers(1, 4), st.data())
    def run(hist: History, limit: int, data: st.DataObject) -> None:
        store, ref = make_store(), Reference()
        try:
            ops = list(hist.ops)
            arrived: list[str] = []
            batch = data.draw(st.integers(1, 4), label="batch")
            pending: list[str] = []

            def flush(upto: int) -> None:
                while ops and ops[0].after <= upto:
                    apply_op(store, ref, ops.pop(0))

            flush(0)
            for i, eid in enumerate(hist.arrival, 1):
                pending.append(eid)
                if len(pending) < batch and i < len(hist.arrival):
                    continue
                store.add_events(
                    [{"id": e, "parent": list(hist.parents[e]) or None} for e in pending]
                )
                for e in pending:
                    ref.add_event(e, hist.parents[e])
                arrived += pending
                pending = []
                flush(i)
            flush(len(hist.arrival))
            check_tree(store, ref, hist, arrived, limit)
            for _ in range(4):
                a = data.draw(st.sampled_from(arrived), label="a")
                b = data.draw(st.sampled_from(arrived), label="b")
                check_diff(store, ref, a, b)
        finally:
            store.close()

    run()


def test_versions_of_an_edit(store: Store) -> None:
    store.add_events(
        [
            {"id": "u1", "content": "我下个月搬去成都"},
            {"id": "a1", "parent": "u1", "role": "assistant", "content": "好的"},
            {"id": "u1b", "content": "我下个月搬去杭州"},
        ]
    )
    store.add_events([{"id": f"a1-{i}", "parent": "u1", "role": "assistant"} for i in range(5)])
    v = store.versions("a1-2")
    assert (str(v), v.previous, v.next) == ("4/6", "a1-1", "a1-3")
    assert [e.id for e in store.siblings("u1").events] == ["u1", "u1b"]
    assert store.versions("u1b").previous == "u1"
    page = store.children("u1", limit=4)
    assert [e.id for e in page.events] == ["a1", "a1-0", "a1-1", "a1-2"]
    rest = store.children("u1", limit=4, cursor=page.cursor)
    assert [e.id for e in rest.events] == ["a1-3", "a1-4"] and rest.cursor is None
    assert store.children("a1").events == () and store.children("a1").cursor is None


def test_tree_reads_refuse_bad_input(store: Store) -> None:
    store.add_event("e1", parent=None)
    with pytest.raises(UnknownEvent):
        store.children("nope")
    with pytest.raises(UnknownEvent):
        store.siblings("nope")
    with pytest.raises(UnknownEvent):
        store.versions("nope")
    with pytest.raises(InvalidInput, match="cursor"):
        store.children("e1", cursor="x; drop")
    with pytest.raises(InvalidInput, match="limit"):
        store.children("e1", limit=0)
    with pytest.raises(InvalidInput):
        store.diff(None, "e1")  # type: ignore[arg-type]


def test_diff_of_an_edit_with_a_scope_chain(store: Store) -> None:
    store.add_events(
        [
            {"id": "main"},
            {"id": "u1", "parent": "main"},
            {"id": "u1b", "parent": "main"},
        ]
    )
    base = store.add_memory("用户喜欢火锅", sources=["main"])
    cd = store.add_memory("用户下个月搬去成都", sources=["u1"])
    hz = store.add_memory("用户下个月搬去杭州", sources=["u1b"])
    d = store.diff("u1", "u1b")
    assert d.fork_point == "main" and d.same == 1
    assert [m.id for m in d.only_a] == [cd.id] and [m.id for m in d.only_b] == [hz.id]
    assert d.to_dict()["only_b"][0]["content"] == "用户下个月搬去杭州"
    chain = store.diff(["u1", "u1b"], "u1b")
    assert [m.id for m in chain.only_a] == [cd.id] and chain.only_b == ()
    assert chain.a == ("u1", "u1b") and base.id not in {m.id for m in chain.only_a}
    store.retract(cd.id, sources=["u1"])
    assert store.diff("u1", "u1b").only_a == ()


def test_a_version_5_sqlite_store_gets_the_tree_index(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "old.db"
    with Store(path) as s:
        s.add_events([{"id": "r"}, {"id": "a", "parent": "r"}, {"id": "b", "parent": "r"}])
    db = sqlite3.connect(path)
    db.executescript(
        "DROP INDEX events_parents; DROP INDEX events_merges; "
        "DELETE FROM schema_version WHERE version = 6; "
        "UPDATE store_info SET value = '5' WHERE key = 'schema';"
    )
    db.close()
    with Store(path) as s:
        assert [e.id for e in s.children("r").events] == ["a", "b"]
        assert str(s.versions("b")) == "2/2"
    db = sqlite3.connect(path)
    names = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='index'")}
    assert {"events_parents", "events_merges"} <= names
    db.close()


def test_the_chat_example_prints_what_it_says(capsys: pytest.CaptureFixture[str]) -> None:
    import runpy

    path = pathlib.Path(__file__).parent.parent / "examples" / "chat_versions.py"
    runpy.run_path(str(path), run_name="__main__")
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "version 2 of 2; previous: u2"
    assert out[3] == "at u2b: ['用户下个月搬去杭州']"
    assert out[4] == "switching back loses: ['用户下个月搬去杭州']"
    assert out[5] == "and brings back: ['用户下个月搬去成都'] fork point: u1"
