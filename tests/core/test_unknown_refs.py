"""A write naming parents or sources that are not in the tree is accepted (they
may come later; until then what waits stays hidden) and says so with a warning
(`UnknownParents`, `UnknownSources`); `explain` keeps saying which source waits."""

from __future__ import annotations

import threading
import warnings

import pytest

from branchmem import (
    BranchmemWarning,
    Store,
    UnknownParents,
    UnknownSources,
    caught_warnings,
)


def test_an_event_under_an_unknown_parent_warns(store: Store) -> None:
    store.add_event("e1")
    with pytest.warns(UnknownParents, match="'e2'") as got:
        store.add_event("e3", parent="e2", content="hi")
    (w,) = [x.message for x in got if isinstance(x.message, BranchmemWarning)]
    assert isinstance(w, UnknownParents)
    assert (w.namespace, w.ids, w.unknown) == ("default", ("e3",), ("e2",))
    assert got[0].filename == __file__  # attributed to the caller, not to branchmem
    assert store.get_event("e3").content == "hi"  # accepted all the same


def test_a_batch_names_only_the_parents_outside_it(store: Store) -> None:
    with pytest.warns(UnknownParents) as got:
        store.add_events([{"id": "x2", "parent": "x1"}, {"id": "x3", "parent": "x2"}])
    (w,) = [x.message for x in got]
    assert isinstance(w, UnknownParents)
    assert (w.ids, w.unknown) == (("x2", "x3"), ("x1",))


def test_a_memory_with_an_unknown_source_warns_and_explain_says_which(store: Store) -> None:
    store.add_event("e1")
    with pytest.warns(UnknownSources, match="'nowhere'") as got:
        m = store.add_memory("a fact", sources=["e1", "nowhere"])
    (w,) = [x.message for x in got]
    assert isinstance(w, UnknownSources)
    assert (w.ids, w.unknown) == ((m.id,), ("nowhere",))
    assert store.memories(at="e1") == []
    assert "source 'nowhere' has not arrived" in store.explain(m.id, at="e1").reason


def test_retract_and_supersede_warn_too(store: Store) -> None:
    store.add_event("e1")
    m = store.add_memory("a fact", sources=["e1"])
    with pytest.warns(UnknownSources, match="'later'"):
        store.retract(m.id, sources=["later"])
    with pytest.warns(UnknownSources, match="'later2'"):
        store.supersede(m.id, "another", sources=["later2"])


def test_known_parents_and_sources_say_nothing(store: Store) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", BranchmemWarning)
        store.add_events([{"id": "b", "parent": "a"}, {"id": "a"}])  # a parent later in the batch
        store.add_event("c", parent="b")
        store.add_memory("fact", sources=["a", "c"])


def test_an_error_filter_raises_after_the_write_is_stored(store: Store) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnknownSources)
        with pytest.raises(UnknownSources):
            store.add_memory("kept", sources=["x"], id="m1")
    assert store.get_memory("m1").content == "kept"


def test_caught_warnings_collects_per_thread_instead_of_warning() -> None:
    store = Store()
    seen: dict[str, list[tuple[str, ...]]] = {}

    def write(name: str) -> None:
        with caught_warnings() as caught:
            store.add_memory(name, sources=[f"missing-{name}"])
        seen[name] = [w.unknown for w in caught]

    with warnings.catch_warnings():
        warnings.simplefilter("error", BranchmemWarning)  # nothing reaches `warnings`
        threads = [threading.Thread(target=write, args=(n,)) for n in ("a", "b", "c")]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert seen == {n: [(f"missing-{n}",)] for n in ("a", "b", "c")}


def test_the_json_shape() -> None:
    store = Store()
    with caught_warnings() as caught:
        store.add_event("c", parent="p", namespace="alice")
    assert caught[0].to_dict() == {
        "warning": "UnknownParents",
        "message": str(caught[0]),
        "namespace": "alice",
        "ids": ["c"],
        "unknown": ["p"],
    }


def test_a_streamed_batch_warns_alike(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    from branchmem.ops import stream

    monkeypatch.setattr(stream, "STREAM_FROM", 2)  # a large batch's path, at small size
    batch = [{"id": "s1", "parent": "gone"}] + [
        {"id": f"s{i}", "parent": f"s{i - 1}"} for i in (2, 3)
    ]
    with pytest.warns(UnknownParents) as got:
        store.add_events(batch)
    (w,) = [x.message for x in got]
    assert isinstance(w, UnknownParents)
    assert (w.ids, w.unknown) == (("s1", "s2", "s3"), ("gone",))
