"""`Event` and `Memory` keep no per-object dict (slots), and stay plain frozen
dataclasses to users: equality, pickling, copying and `dataclasses.replace`.
The in-memory store keeps one copy of each id string."""

from __future__ import annotations

import copy
import pickle
from dataclasses import FrozenInstanceError, replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from branchmem import Event, Memory, Store
from branchmem.backends.base import RecordRow
from branchmem.backends.memory_rows import compact_ids, stored_event, stored_record
from branchmem.model import make_event, make_memory, memory_with

TEXT = st.text(max_size=8)
META = st.none() | st.dictionaries(st.text(max_size=3), st.integers(), max_size=2)


@settings(max_examples=100, deadline=None)
@given(eid=TEXT, parents=st.lists(TEXT, max_size=2), content=TEXT, meta=META, at=st.floats(0, 1e9))
def test_events_round_trip(
    eid: str, parents: list[str], content: str, meta: dict[str, int] | None, at: float
) -> None:
    e = Event(eid, parents=tuple(parents), content=content, meta=meta, created_at=at)
    fast = make_event(eid, tuple(parents), "user", content, "default", meta, at)
    assert fast == e and repr(fast) == repr(e)
    for other in (pickle.loads(pickle.dumps(e)), copy.copy(e), copy.deepcopy(e)):
        assert other == e and other.created_at == e.created_at
    assert replace(e, content=content + "x").content == content + "x"
    assert Event.from_dict(e.to_dict()) == e


@settings(max_examples=100, deadline=None)
@given(mid=TEXT, content=TEXT, sources=st.lists(TEXT, min_size=1, max_size=3), meta=META)
def test_memories_round_trip(
    mid: str, content: str, sources: list[str], meta: dict[str, int] | None
) -> None:
    m = Memory(mid, content, tuple(sources), meta=meta, seq=3, valid_to=5.0)
    fast = make_memory(
        mid, content, tuple(sources), "semantic", None, 0.5, "default", meta, None, 0.0, 3,
        None, None, 5.0,
    )  # fmt: skip
    assert fast == m and repr(fast) == repr(m)
    for other in (pickle.loads(pickle.dumps(m)), copy.copy(m), copy.deepcopy(m)):
        assert other == m and other.seq == m.seq
    changed = memory_with(m, via="chat", seq=9)
    assert changed == replace(m, via="chat", seq=9)
    assert (changed.via, changed.seq, m.via, m.seq) == ("chat", 9, None, 3)
    assert Memory.from_dict(m.to_dict()) == m


def test_no_instance_dict_and_still_frozen() -> None:
    e, m = Event("e1"), Memory("m1", "x", ("e1",))
    assert not hasattr(e, "__dict__") and not hasattr(m, "__dict__")
    with pytest.raises(FrozenInstanceError):
        e.content = "y"  # type: ignore[misc]
    with pytest.raises(FrozenInstanceError):
        m.content = "y"  # type: ignore[misc]


def test_the_memory_store_keeps_one_copy_of_each_id() -> None:
    s = Store()
    s.add_events([{"id": "e1"}, {"id": "e2", "parent": "e1"}])
    s.add_events([{"id": "e3", "parent": "".join(["e", "2"])}])  # an equal, separate string
    s.add_memory("fact", sources=["".join(["e", "3"]), "".join(["e", "1"])], id="m1")
    e1, e2, e3 = (s.get_event(i) for i in ("e1", "e2", "e3"))
    assert e2.parents[0] is e1.id and e3.parents[0] is e2.id
    (m,) = s.memories(at="e3")
    assert m.sources == ("e3", "e1") and m.sources[0] is e3.id and m.sources[1] is e1.id


POS = st.none() | st.tuples(st.integers(0, 10**6), st.integers(0, 10**9))
TIME = st.none() | st.floats(0, 1e9)


@settings(max_examples=200, deadline=None)
@given(
    ev=st.builds(
        Event,
        id=TEXT,
        parents=st.lists(TEXT, max_size=3).map(tuple),
        role=st.sampled_from(["user", "tool"]),
        content=TEXT,
        namespace=st.just("ns"),
        meta=META,
        created_at=st.floats(0, 1e9),
    ),
    first=POS,
    then=POS,
)
def test_stored_events_read_back_as_given(
    ev: Event, first: tuple[int, int] | None, then: tuple[int, int] | None
) -> None:
    # The memory store keeps an event in a few slots (a lone parent without a
    # tuple, no namespace) and builds the Event on read: the same one, every field.
    row = stored_event(ev, compact_ids(ev.parents, {}), first)
    got = row.event("ns")
    assert got == ev and repr(got) == repr(ev) and got.created_at == ev.created_at
    assert row.pos == first and not hasattr(row, "__dict__")
    if then is not None:
        row.seg, row.seq = then
        assert row.pos == then
    row.erase()
    assert row.event("ns") == replace(ev, content="", meta=None)


@settings(max_examples=200, deadline=None)
@given(
    mem=st.builds(
        Memory,
        id=TEXT,
        content=TEXT,
        sources=st.lists(TEXT, min_size=1, max_size=3).map(tuple),
        kind=st.sampled_from(["semantic", "episodic", "retraction"]),
        key=st.none() | TEXT,
        importance=st.sampled_from([0.5, 0.0, 1.0, 0.25]),
        namespace=st.just("ns"),
        meta=META,
        target=st.none() | TEXT,
        created_at=st.floats(0, 1e9),
        seq=st.integers(1, 10**9),
        expires_at=TIME,
        valid_from=TIME,
        valid_to=TIME,
    ),
    pos=POS,
    extra=st.lists(st.tuples(st.integers(0, 99), st.integers(0, 99))),
)
def test_stored_records_read_back_as_given(
    mem: Memory, pos: tuple[int, int] | None, extra: list[tuple[int, int]]
) -> None:
    # The rare fields share one slot; the Memory is built once, then shared.
    row = stored_record(mem, compact_ids(mem.sources, {}))
    assert row.memory is None and not hasattr(row, "__dict__")
    assert (row.rare is None) == (mem == replace(mem, key=None, importance=0.5, meta=None,
        target=None, expires_at=None, valid_from=None, valid_to=None))  # fmt: skip
    row.pos, row.extra = pos, tuple(extra)
    got = row.warm("ns")
    assert got == mem and repr(got) == repr(mem)
    assert (got.created_at, got.seq, got.via) == (mem.created_at, mem.seq, None)
    assert row.warm("ns") is got and row.build("ns") is not got
    assert isinstance(row, RecordRow) and row.pos == pos and row.extra == tuple(extra)
    assert row.target == mem.target and row.expires_at == mem.expires_at
    assert row.timed == ((mem.expires_at, mem.valid_from, mem.valid_to) != (None, None, None))


def test_to_dict_hands_out_a_copy_of_meta(store: Store) -> None:
    store.add_event("e1", meta={"tags": ["a"]})
    store.add_memory("fact", sources=["e1"], meta={"tags": ["b"]}, id="m1")
    store.get_event("e1").to_dict()["meta"]["tags"].append("x")
    store.get_memory("m1").to_dict()["meta"]["tags"].append("y")
    assert store.get_event("e1").meta == {"tags": ["a"]}
    assert store.get_memory("m1").meta == {"tags": ["b"]}


def test_changing_a_read_events_meta_leaves_the_stored_event_alone(store: Store) -> None:
    store.add_event("e1", meta={"tags": ["a"]})
    store.add_event("e2", parent="e1")
    store.get_event("e1").meta["tags"].append("x")
    store.path("e2")[0].meta["new"] = 1
    assert store.get_event("e1").meta == {"tags": ["a"]}
    assert store.path("e2")[0].meta == {"tags": ["a"]}
