"""Scope chains (``memories(at=[...])``) and the long-term memory recipe."""

from __future__ import annotations

import doctest
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from branchmem import InvalidInput, Store, UnknownAnchor
from branchmem.gate import ranges
from helpers.pg_helpers import examples
from helpers.reference import Reference, RefRecord
from helpers.strategies import History, apply_op, histories

DOCS = Path(__file__).resolve().parents[2] / "docs"


@pytest.fixture
def chain(store: Store) -> Store:
    store.add_event("org_root")
    store.create_branch("org/main", at="org_root")
    store.remember("公司禁止外传合同", branch="org/main", id="org_rule")
    store.create_branch("user/main", at="org/main")
    store.remember("用户对花生过敏", branch="user/main", id="allergy")
    store.create_branch("chat", at="user/main")
    store.remember("用户想订周五的餐厅", branch="chat", id="booking")
    store.remember("用户喜欢川菜", branch="user/main", id="cuisine")  # after the fork
    store.remember("合同模板更新", branch="org/main", id="org_new")  # after the fork
    return store


def test_chain_returns_each_record_once_with_the_first_anchor(chain: Store) -> None:
    got = [(m.id, m.via) for m in chain.memories(at=["chat", "user/main", "org/main"])]
    assert got == [
        ("org_rule", "chat"),
        ("allergy", "chat"),
        ("booking", "chat"),
        ("cuisine", "user/main"),
        ("org_new", "org/main"),
    ]


def test_order_of_anchors_is_priority(chain: Store) -> None:
    got = [(m.id, m.via) for m in chain.memories(at=["org/main", "chat"])]
    assert got == [("org_rule", "org/main"), ("org_new", "org/main"),
                   ("allergy", "chat"), ("booking", "chat")]  # fmt: skip


def test_single_anchor_reads_have_no_via(chain: Store) -> None:
    assert {m.via for m in chain.memories(at="chat")} == {None}
    # via does not take part in equality: the same records compare equal
    assert chain.memories(at=["chat"]) == chain.memories(at="chat")


def test_a_retraction_hides_only_where_it_is_visible(chain: Store) -> None:
    chain.add_event("fix", branch="chat", content="其实我不过敏")
    chain.retract("allergy", sources=["fix"])
    assert "allergy" not in [m.id for m in chain.memories(at="chat")]
    got = {m.id: m.via for m in chain.memories(at=["chat", "user/main"])}
    assert got["allergy"] == "user/main"


def test_chain_with_kind_and_retractions(chain: Store) -> None:
    chain.add_event("fix", branch="chat")
    r = chain.retract("allergy", sources=["fix"])
    got = chain.memories(at=["user/main", "chat"], kind="retraction")
    assert [(m.id, m.via) for m in got] == [(r.id, "chat")]
    assert chain.memories(at=["chat", "org/main"], kind="episodic") == []


def test_chain_bad_input(chain: Store) -> None:
    assert chain.memories(at=[]) == []
    with pytest.raises(UnknownAnchor):
        chain.memories(at=["chat", "nope"])
    with pytest.raises(InvalidInput):
        chain.memories(at=["chat", ""])
    with pytest.raises(InvalidInput):
        chain.memories(at=["chat", 3])  # type: ignore[list-item]
    with pytest.raises(InvalidInput):
        chain.memories(at={"chat"})  # type: ignore[arg-type]
    assert [m.via for m in chain.memories(at=["chat", "chat"])] == ["chat"] * 3


def test_chain_matches_the_reference(make_store: Callable[[], Store], backend_name: str) -> None:
    """Every chain (records, and retractions with ``kind``) against the naive
    reference, with multi-source records, retractions and events that wait."""

    @settings(
        max_examples=examples(backend_name, 150),
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    )
    @given(hist=histories(max_events=14, max_ops=14), data=st.data())
    def check(hist: History, data: st.DataObject) -> None:
        store, ref = make_store(), Reference()
        store._engine.via_copies.limit = data.draw(st.sampled_from([2, 200_000]))  # 2: drop often
        for e in hist.arrival:
            store.add_event(e, parent=list(hist.parents[e]) or None)
            ref.add_event(e, hist.parents[e])
        anchors = data.draw(
            st.lists(st.sampled_from(list(hist.arrival)), min_size=1, max_size=4, unique=True)
        )
        for op in hist.ops:  # read after every write: kept copies must never go stale
            apply_op(store, ref, op)
            got = [(m.id, m.via) for m in store.memories(at=anchors)]
            assert got == ref.chain(anchors)
            assert all(m.via is None for m in store.memories(at=anchors[0]))
        assert [(m.id, m.via) for m in store.memories(at=anchors)] == ref.chain(anchors)
        rets = store.memories(at=anchors, kind="retraction")
        assert [(m.target, m.via) for m in rets] == ref.chain(anchors, retractions=True)
        store.close()

    check()


def test_long_term_memory_recipe_doc() -> None:
    result = doctest.testfile(
        str(DOCS / "long-term-memory.md"), module_relative=False, optionflags=doctest.ELLIPSIS
    )
    assert result.attempted >= 10 and result.failed == 0, result


def test_chain_read_can_record_use(chain: Store) -> None:
    before = chain.score("cuisine")
    chain.memories(at=["chat", "user/main"], touch=True)
    assert chain.score("cuisine") > before
    assert chain.audit("default")[-1].op == "touch"


def test_chain_through_hundreds_of_segments(make_store: Callable[[], Store]) -> None:
    """Anchors whose ranges span more segments than one SQL statement takes."""
    store, ref = make_store(), Reference()

    def event(eid: str, parent: str | None) -> None:
        store.add_event(eid, parent=parent)
        ref.add_event(eid, (parent,) if parent else ())

    event("e0", None)
    for i in range(600):  # the side branch first, so each next main event opens a segment
        event(f"f{i}", f"e{i}")
        event(f"e{i + 1}", f"e{i}")
    for i in range(0, 600, 7):
        store.add_memory(f"main {i}", sources=[f"e{i}"], id=f"m{i}")
        store.add_memory(f"side {i}", sources=[f"f{i}"], id=f"s{i}")
        ref.add_record(RefRecord(f"m{i}", (f"e{i}",)))
        ref.add_record(RefRecord(f"s{i}", (f"f{i}",)))
    store.retract("m350", sources=["f400"], id="r1")
    ref.add_record(RefRecord("r1", ("f400",), "m350"))
    assert len(ranges(store._engine, "default", "e600") or {}) > 500  # the point of the test
    for anchors in (["e600", "f599", "f301"], ["f400", "e600"], ["f7", "f14", "e600"]):
        got = [(m.id, m.via) for m in store.memories(at=anchors)]
        assert got == ref.chain(anchors)
    store.close()
