"""children, siblings, versions and diff by example, on every backend. The
property against a naive reference is the backend contract's
``tree_reads_match_reference`` (`branchmem.testing.tree_checks`), run on every
backend by tests/backends/test_backend_contract.py."""

from __future__ import annotations

import pathlib
import sqlite3

import pytest

from branchmem import InvalidInput, Store, UnknownEvent


def test_versions_of_an_edit(store: Store) -> None:
    store.add_events(
        [
            {"id": "u1", "content": "我下个月搬去成都"},
            {"id": "a1", "parent": "u1", "role": "assistant", "content": "好的"},
            {"id": "u1b", "content": "我下个月搬去杭州", "meta": {"version_of": "u1"}},
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


def test_separate_conversations_are_not_versions_of_each_other(store: Store) -> None:
    store.add_event("c1-m1", content="first chat")
    store.add_event("c2-m1", content="second chat")
    store.add_event("c2-m1b", content="second chat, edited", meta={"version_of": "c2-m1"})
    store.add_event("c3-m1", content="third chat")
    assert (str(store.versions("c1-m1")), str(store.versions("c3-m1"))) == ("1/1", "1/1")
    v = store.versions("c2-m1b")
    assert (str(v), v.previous, v.next) == ("2/2", "c2-m1", None)
    assert store.versions("c2-m1").next == "c2-m1b"
    assert [e.id for e in store.siblings("c2-m1")] == ["c2-m1", "c2-m1b"]
    assert [e.id for e in store.siblings("c1-m1")] == ["c1-m1"]
    page = store.siblings("c2-m1b", limit=1)
    assert [e.id for e in page] == ["c2-m1"]
    assert [e.id for e in store.siblings("c2-m1b", cursor=page.cursor)] == ["c2-m1b"]
    assert len(store.children(None)) == 4


def test_a_page_iterates_over_its_events(store: Store) -> None:
    store.add_events([{"id": "q"}, {"id": "r1", "parent": "q"}, {"id": "r2", "parent": "q"}])
    page = store.children("q")
    assert [e.id for e in page] == ["r1", "r2"] and len(page) == 2
    assert [e.id for e in store.siblings("r2")] == ["r1", "r2"]


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
        "DELETE FROM schema_version WHERE version > 5; "
        "INSERT INTO schema_version VALUES (5, 0); "
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

    path = pathlib.Path(__file__).parents[2] / "examples" / "chat_versions.py"
    runpy.run_path(str(path), run_name="__main__")
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "version 2 of 2; previous: u2"
    assert out[3] == "at u2b: ['用户下个月搬去杭州']"
    assert out[4] == "switching back loses: ['用户下个月搬去杭州']"
    assert out[5] == "and brings back: ['用户下个月搬去成都'] fork point: u1"
