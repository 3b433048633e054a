"""One limit per kind of input, the same at every door (`branchmem.validate`):
parents per event, sources per record, bytes of content per event or record,
and no NUL in content, meta (keys and values) or edge attributes. Each is an
`InvalidInput` that names the limit, before anything is written."""

from __future__ import annotations

from typing import Any

import pytest

from branchmem import InvalidInput, Store
from branchmem.validate import MAX_CONTENT_BYTES, MAX_PARENTS, MAX_SOURCES


def _refused(store: Store, match: str, fn: Any, *a: Any, **kw: Any) -> None:
    before = store.audit()
    with pytest.raises(InvalidInput, match=match):
        fn(*a, **kw)
    assert store.audit() == before  # nothing written


def test_parents_per_event() -> None:
    store = Store()
    many = [f"p{i}" for i in range(MAX_PARENTS + 1)]
    _refused(store, r"65 parents; the limit is 64 .*MAX_PARENTS", store.add_event, "e", parent=many)
    batch = [{"id": f"e{i}", "parents": many} for i in range(3)]
    _refused(store, "MAX_PARENTS", store.add_events, batch)
    assert store.add_event("ok", parent=many[:MAX_PARENTS]).parents == tuple(many[:MAX_PARENTS])


def test_sources_per_record() -> None:
    store = Store()
    store.add_event("e1")
    many = [f"s{i}" for i in range(MAX_SOURCES + 1)]
    _refused(
        store, r"257 events; the limit is 256 .*MAX_SOURCES", store.add_memory, "x", sources=many
    )
    _refused(store, "MAX_SOURCES", store.add_memories, [{"content": "x", "sources": many}])
    _refused(store, "MAX_SOURCES", store.add_edge, "a", "likes", "b", sources=many)
    assert len(store.add_memory("x", sources=many[:MAX_SOURCES]).sources) == MAX_SOURCES


def test_content_bytes_per_event_and_record() -> None:
    store = Store()
    over = "a" * (MAX_CONTENT_BYTES + 1)
    wide = "字" * (MAX_CONTENT_BYTES // 3 + 1)  # fewer characters than the limit, more bytes
    for text in (over, wide):
        _refused(store, "MAX_CONTENT_BYTES", store.add_event, "e", content=text)
        _refused(store, "MAX_CONTENT_BYTES", store.add_events, [{"id": "e", "content": text}])
        batch = [{"id": f"e{i}", "content": "short"} for i in range(3)]
        _refused(
            store, "MAX_CONTENT_BYTES", store.add_events, [*batch, {"id": "x", "content": text}]
        )
    store.add_event("e1", content="a" * MAX_CONTENT_BYTES)  # at the limit: stored
    m = store.add_memory("fact", sources=["e1"])
    _refused(store, "MAX_CONTENT_BYTES", store.add_memory, over, sources=["e1"])
    _refused(store, "MAX_CONTENT_BYTES", store.supersede, m.id, wide, sources=["e1"])
    store.create_branch("main", at="e1")
    _refused(store, "MAX_CONTENT_BYTES", store.remember, over, branch="main")


@pytest.mark.parametrize(
    "meta",
    [{"k\x00": 1}, {"k": "v\x00"}, {"k": [{"deep": ["x\x00y"]}]}],
    ids=["key", "value", "nested"],
)
def test_nul_in_meta_is_refused_like_nul_in_content(meta: dict[str, Any]) -> None:
    store = Store()
    store.add_event("e1")
    _refused(store, r"NUL character", store.add_event, "e2", parent="e1", meta=meta)
    _refused(store, r"NUL character", store.add_events, [{"id": "e2", "meta": meta}])
    _refused(store, r"NUL character", store.add_memory, "x", sources=["e1"], meta=meta)
    _refused(store, r"NUL character", store.add_edge, "a", "likes", "b", sources=["e1"], attrs=meta)
    with pytest.raises(InvalidInput, match="NUL character"):
        store.add_event("e3", content="a\x00b")  # the same words as content


def test_a_backslash_u0000_written_out_is_no_nul() -> None:
    store = Store()
    e = store.add_event("e1", meta={"path": "C:\\u0000"})
    assert store.get_event("e1").meta == e.meta == {"path": "C:\\u0000"}
