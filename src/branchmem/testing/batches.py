"""Failures: every batch is all or none, whichever namespaces it spans, and bad
input is refused with the same error as on the in-memory backend, changing nothing.

Hypothesis is imported inside the property check (the ``dev`` extra).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..errors import BranchmemError
from ..store import Store
from .bad_calls import BAD_CALLS, PROBE_IDS, seeded
from .harness import Stores

NAMESPACES = ["A", "B", "C"]


def _base(store: Store) -> None:
    for ns in NAMESPACES[:2]:
        store.add_events(
            [{"id": "root", "namespace": ns}, {"id": "x", "parent": "root", "namespace": ns}]
        )
        store.add_memory("old", sources=["x"], id="mem", namespace=ns)


def _refused(stores: Stores, store: Store, write: Callable[[], object], what: str) -> None:
    """``write`` raises a `BranchmemError` and leaves the store exactly as it was."""
    before = stores.state(store, NAMESPACES)
    try:
        write()
    except BranchmemError:
        pass
    else:
        raise AssertionError(f"{what} was accepted; it should raise a BranchmemError")
    assert stores.state(store, NAMESPACES) == before, f"{what}: refused, but the store changed"


def batches_are_all_or_none(stores: Stores) -> None:
    """A batch with one bad item anywhere, in any namespace, writes nothing at all."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    store = stores.open()
    _base(store)
    bad: list[dict[str, Any]] = [
        {"id": "a1", "namespace": "A"},
        {"id": "x", "namespace": "B", "content": "other"},
    ]
    _refused(stores, store, lambda: store.add_events(bad), "events across namespaces")
    bad = [
        {"content": "new", "sources": ["x"], "namespace": "A"},
        {"content": "changed", "sources": ["x"], "id": "mem", "namespace": "B"},
    ]
    _refused(stores, store, lambda: store.add_memories(bad), "memories across namespaces")
    # A new event beside a stored one re-added with other content: ingest takes
    # both for new, the backend's DuplicateIds must come before it writes any.
    bad = [{"id": "a1", "parent": "root", "namespace": "A"}, {"id": "x", "namespace": "A"}]
    _refused(stores, store, lambda: store.add_events(bad), "a new event beside a changed one")

    good_event = st.builds(
        lambda i, ns, parent: {"id": f"n{i}", "namespace": ns, "parent": parent},
        st.integers(0, 30),
        st.sampled_from(NAMESPACES),
        st.sampled_from([None, "root", "x", "later"]),
    )
    bad_event = st.sampled_from(
        [
            {"id": "x", "namespace": "A", "content": "not what was stored"},  # conflicting re-add
            {"id": "x", "namespace": "B", "parent": "x"},  # a cycle on itself
            {"id": "", "namespace": "C"},  # an invalid id
            {"id": "ok", "namespace": "A", "role": 5},  # an invalid field
            {"id": "root", "namespace": "B", "parent": "x"},  # re-add with another parent
        ]
    )
    good_memory = st.builds(
        lambda i, ns, src: {
            "content": f"fact {i}",
            "sources": [src],
            "namespace": ns,
            "id": f"f{i}",
        },
        st.integers(0, 30),
        st.sampled_from(NAMESPACES),
        st.sampled_from(["root", "x", "ghost"]),
    )
    bad_memory = st.sampled_from(
        [
            {"content": "changed", "sources": ["x"], "id": "mem", "namespace": "A"},
            {"content": "changed", "sources": ["root"], "id": "mem", "namespace": "B"},
            {"content": "x", "sources": [], "namespace": "C"},
            {"content": 7, "sources": ["x"], "namespace": "A"},
            {"content": "x", "sources": ["x"], "namespace": "B", "importance": "high"},
        ]
    )

    def batch(data: Any, good: Any, bad: Any) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = data.draw(
            st.lists(good, max_size=8, unique_by=lambda d: d["id"])
        )
        items.insert(data.draw(st.integers(0, len(items))), data.draw(bad))
        return items

    @settings(max_examples=stores.examples(30), deadline=None, database=None)
    @given(data=st.data())
    def check(data: Any) -> None:
        if data.draw(st.booleans()):
            events = batch(data, good_event, bad_event)
            _refused(stores, store, lambda: store.add_events(events), f"add_events({events})")
        else:
            memories = batch(data, good_memory, bad_memory)
            _refused(
                stores, store, lambda: store.add_memories(memories), f"add_memories({memories})"
            )

    check()


def bad_input_is_refused_alike(stores: Stores) -> None:
    """Each bad call raises the error, with the message, that it raises on the
    in-memory backend; the store is unchanged and still works afterwards."""
    for label, error, call in BAD_CALLS:
        store, reference = stores.open(), Store()
        try:
            seeded(store)
            seeded(reference)
            expected = _raised(call, reference)
            assert isinstance(expected, error), f"{label}: the reference raised {expected!r}"
            before = stores.state(store, ["default"], PROBE_IDS)
            got = _raised(call, store)
            assert (type(got), str(got)) == (type(expected), str(expected)), (
                f"{label}: raised {got!r}; the in-memory backend raises {expected!r}"
            )
            assert isinstance(got, BranchmemError) and isinstance(got, (ValueError, KeyError))
            assert len(str(got)) > 20, f"{label}: the message should say what is wrong"
            assert stores.state(store, ["default"], PROBE_IDS) == before, f"{label} changed it"
            store.add_event("after", parent="e2")
            assert [m.id for m in store.memories(at="after")] == ["m1"], f"{label}: broken after"
        finally:
            reference.close()
        stores.done(store)


def _raised(call: Callable[[Store], Any], store: Store) -> BaseException | None:
    try:
        call(store)
    except Exception as exc:
        return exc
    return None
