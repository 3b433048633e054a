"""The main scenarios, run against `Store` and against `RemoteStore` over the
HTTP API: the same code, the same results, the same exception classes."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from branchmem import (
    BranchConflict,
    BranchExists,
    ConflictingEvent,
    InvalidInput,
    NotAnAncestor,
    Store,
    UnknownAnchor,
    UnknownBranch,
    UnknownMemory,
)
from branchmem.client import RemoteStore
from branchmem.server.errors import Forbidden, UnknownNamespace
from helpers.server_fixtures import make_served


@contextmanager
def opened(kind: str, grants: list[str] | None = None) -> Iterator[Any]:
    """An embedded `Store`, or a `RemoteStore` served to a key with ``grants``
    (default: the owner's, admin of the default namespace)."""
    if kind == "embedded":
        with Store() as s:
            yield s
        return
    served = make_served()
    key = served.key["owner"] if grants is None else served.keys.create("test", grants)[1]
    yield RemoteStore("http://testserver", api_key=key, http_client=served.client)
    served.store.close()


@pytest.fixture(params=["embedded", "remote"])
def any_store(request: pytest.FixtureRequest) -> Iterator[Any]:
    with opened(request.param) as s:
        yield s


def test_the_edit_scenario(any_store: Any) -> None:
    s = any_store
    s.add_event("e1", parent=None, role="user", content="你好，我在准备搬家。")
    s.add_event("e2", parent="e1", role="user", content="我下个月搬去成都。")
    fact = s.add_memory("用户下个月搬去成都", sources=["e2"], key="user.move.city", id="f-cd")
    s.add_event("e2b", parent="e1", role="user", content="我下个月搬去杭州。")
    assert s.memories(at="e2b") == []
    assert s.memories(at="e2") == [fact]
    assert s.memories(at=None) == []
    assert (
        str(s.explain("f-cd", at="e2b"))
        == "hidden at 'e2b': source 'e2' is not on the path to 'e2b'"
    )
    assert s.visible("f-cd", at="e2") and not s.visible("f-cd", at="e2b")
    assert [e.id for e in s.path("e2b")] == ["e1", "e2b"]
    assert s.get_event("e2").content == "我下个月搬去成都。"
    assert s.get_memory("f-cd") == fact
    [m] = s.memories(at=["e2b", "e2"])
    assert (m.id, m.via) == ("f-cd", "e2")


def test_corrections_are_gated(any_store: Any) -> None:
    s = any_store
    s.add_events([{"id": "e1"}, {"id": "e2", "parent": "e1"}, {"id": "e3", "parent": "e1"}])
    m = s.add_memory("用户对花生过敏", sources=["e1"], key="allergy")
    s.retract(m.id, sources=["e2"])
    assert s.memories(at="e2") == [] and s.memories(at="e3") == [m]
    new = s.supersede(m.id, "用户对坚果过敏", sources=["e3"])
    assert [x.content for x in s.memories(at="e3")] == [new.content]
    [a, b] = s.add_memories(
        [{"content": "a", "sources": ["e1"]}, {"content": "b", "sources": ["e1"]}]
    )
    assert {a.id, b.id} <= {x.id for x in s.memories(at="e2")}


def test_branches_merge_snapshots(any_store: Any) -> None:
    s = any_store
    s.add_event("e1")
    s.create_branch("user/main", at="e1")
    s.create_branch("chat", at="user/main")
    s.remember("预算3000", branch="user/main", key="budget")
    s.snapshot("user/main", "v1")
    b = s.remember("预算4000", branch="chat", key="budget")
    r = s.merge("chat", "user/main", strategy="keep_both")
    [c] = s.conflicts(at="user/main")
    assert r.conflict_ids == (c.id,) and c.key == "budget"
    s.resolve(c.id, keep=b.id, branch="user/main")
    assert [m.content for m in s.memories(at="user/main")] == ["预算4000"]
    assert s.conflicts(at="user/main") == []
    s.rollback("user/main", "v1")
    assert [m.content for m in s.memories(at="user/main")] == ["预算3000"]
    assert [x.name for x in s.snapshots()] == ["v1"]
    assert [x.name for x in s.branches()] == ["chat", "user/main"]
    assert [h.why for h in s.history("user/main")][-1] == "rollback"
    ev = s.add_event("e9", branch="chat", content="分支上的消息")
    assert s.branch_head("chat") == ev.id
    s.set_branch("chat", "e1")
    assert s.branch_head("chat") == "e1"
    s.delete_branch("chat")
    assert [x.name for x in s.branches()] == ["user/main"]


def test_search_purge_audit(any_store: Any) -> None:
    s = any_store
    s.add_events([{"id": "e1", "content": "我对花生过敏。"}, {"id": "e2", "parent": "e1"}])
    m = s.add_memory("用户对花生过敏", sources=["e1"])
    s.add_memory("用户喜欢川菜", sources=["e2"])
    # the served store's embedder is the server's (`branchmem serve --embedder`)
    opts = {"embedder": "hashing"} if isinstance(s, Store) else {}
    [hit] = s.search("花生", at="e2", k=2, **opts)  # the unrelated one is cut
    assert hit.memory == m and hit.via == "e2" and set(hit.parts) >= {"keyword", "vector"}
    s.touch([m.id], now=100.0)
    assert s.score(m.id, now=100.0) > 0
    old = s.add_memory("过期的事实", sources=["e1"], expires_at=50.0)
    assert s.archive_expired(now=100.0) == [old.id]
    assert s.restore(old.id) == old
    s.create_branch("tmp/a", at="e1")
    assert s.prune_branches("tmp", 0) == ["tmp/a"]
    assert s.purge(memories=[m.id]) == [m.id]
    assert [a.op for a in s.audit()][-1] == "purge"


@pytest.mark.parametrize(
    ("action", "error"),
    [
        (lambda s: s.memories(at="nope"), UnknownAnchor),
        (lambda s: s.get_memory("nope"), UnknownMemory),
        (lambda s: s.branch_head("nope"), UnknownBranch),
        (lambda s: s.add_event("e1", parent="e0"), ConflictingEvent),
        (lambda s: s.create_branch("main", at="e1"), BranchExists),
        (lambda s: s.add_event("x", branch="main", expected_head="nope"), BranchConflict),
        (lambda s: s.add_memory("x", sources=[], kind="semantic"), InvalidInput),
        (lambda s: s.add_memory("x", sources=["e1"], kind="nope"), InvalidInput),
        (lambda s: s.rollback("main", "e2"), NotAnAncestor),
    ],
)
def test_the_same_exceptions(any_store: Any, action: Any, error: type[Exception]) -> None:
    s = any_store
    s.add_events([{"id": "e1"}, {"id": "e2", "parent": "e1"}])
    s.create_branch("main", at="e1")
    with pytest.raises(error) as info:
        action(s)
    assert type(info.value) is error or error is InvalidInput
    assert str(info.value)


def test_remote_only_errors() -> None:
    served = make_served()
    reader = RemoteStore(
        "http://testserver",
        api_key=served.key["reader"],
        namespace="alice",
        http_client=served.client,
    )
    with pytest.raises(Forbidden):
        reader.add_event("e1")
    with pytest.raises(UnknownNamespace) as info:
        reader.memories(at="e1", namespace="bob")
    assert isinstance(info.value, KeyError)
    assert info.value.namespace == "bob"  # type: ignore[attr-defined]
    owner = RemoteStore("http://testserver", api_key=served.key["owner"], http_client=served.client)
    with pytest.raises(InvalidInput, match="chosen by the server"):
        owner.search("x", at="e1", embedder="openai:m@http://127.0.0.1:1")


def test_remote_store_has_every_public_method_of_store() -> None:
    # the redactor is the served store's (branchmem serve --redact), not the client's;
    # so is its file's write-ahead log (the server's writes and close truncate it)
    # graph() is a view over the engine's index; a client asks graph_neighbors() instead;
    # info() describes the served store's storage (its backend, pgvector), an operator's matter
    served = {"redactor", "checkpoint", "erasure_pending", "graph", "info"}
    public = {n for n in dir(Store) if not n.startswith("_")} - served
    assert public <= {n for n in dir(RemoteStore) if not n.startswith("_")}


def test_extract_and_context(any_store: Any) -> None:
    s = any_store
    s.add_event("e1", content="你好")
    s.add_event("e2", parent="e1", content="我在阿里巴巴上班。")
    s.add_event("e2b", parent="e1", content="我在腾讯上班。")
    written = s.extract("e2")
    assert written and all(m.sources == ("e2",) for m in written)
    assert s.extract("e2") == []  # idempotent
    ctx = s.context("e2", query="我在哪里工作？")
    assert [m["content"] for m in ctx.messages] == ["你好", "我在阿里巴巴上班。"]
    assert {m.id for m in ctx.memories} == {m.id for m in written}
    assert "阿里巴巴" in ctx.text() and "腾讯" not in ctx.text()
    assert s.context("e2b").memories == []


def test_import_export(any_store: Any) -> None:
    from pathlib import Path

    data = Path(__file__).parents[1] / "data" / "importers" / "chatgpt.json"
    report = any_store.import_export(data)
    assert [c.added for c in report.conversations] == [5, 5, 1]  # no hidden empty system turn
    assert any_store.branch_head("conv/6630a1b2-0000-4000-8000-000000000001") == "a2b"
    assert [c.added for c in any_store.import_export(data).conversations] == [0, 0, 0]


@pytest.fixture(params=["embedded", "remote"])
def two_namespaces(request: pytest.FixtureRequest) -> Iterator[Any]:
    """A store, embedded or served to a key that may write alice and bob."""
    with opened(request.param, ["alice:write", "bob:write"]) as s:
        yield s


def test_batches_across_namespaces_keep_their_order(two_namespaces: Any) -> None:
    # One request per namespace; the answers come back in the order given.
    s = two_namespaces
    done = s.add_events(
        [
            {"id": "a1", "namespace": "alice"},
            {"id": "b1", "namespace": "bob"},
            {"id": "a2", "parent": "a1", "namespace": "alice"},
        ]
    )
    assert [(e.id, e.namespace, e.parents) for e in done] == [
        ("a1", "alice", ()),
        ("b1", "bob", ()),
        ("a2", "alice", ("a1",)),
    ]
    mems = s.add_memories(
        [
            {"content": "B", "sources": ["b1"], "namespace": "bob", "id": "mb"},
            {"content": "A", "sources": ["a2"], "namespace": "alice", "id": "ma"},
            {"content": "B2", "sources": ["b1"], "namespace": "bob", "id": "mb2"},
        ]
    )
    assert [(m.id, m.namespace) for m in mems] == [("mb", "bob"), ("ma", "alice"), ("mb2", "bob")]
    assert [m.id for m in s.memories(at="b1", namespace="bob")] == ["mb", "mb2"]
    assert [m.id for m in s.memories(at="a2", namespace="alice")] == ["ma"]


def test_what_context_and_extract_use_works_the_same_remotely(any_store: Any) -> None:
    """`StoreAPI` (path with ``last``, memories, search) on either store: the
    layers built on it give one answer."""
    from branchmem.context import build_context

    s = any_store
    s.add_events([{"id": "e1", "content": "你好"}, {"id": "e2", "parent": "e1", "content": "我"}])
    s.add_event("e3", parent="e2", content="我对花生过敏。")
    s.add_memory("用户对花生过敏", sources=["e3"], id="peanut")
    assert [e.id for e in s.path("e3", last=2)] == ["e2", "e3"]
    assert s.path("e3", last=0) == [] and len(s.path("e3")) == 3
    with pytest.raises(InvalidInput):
        s.path("e3", last=-1)
    ctx = build_context(s, "e3", query="花生", window=1, k=3, mode="keyword")
    assert [m["content"] for m in ctx.messages] == ["我对花生过敏。"]
    assert [m.id for m in ctx.memories] == ["peanut"]


def test_search_keywords_are_listed(any_store: Any) -> None:
    """Both stores name their search keywords: another is Python's `TypeError`."""
    s = any_store
    s.add_event("e1", content="我对花生过敏。")
    s.add_memory("用户对花生过敏", sources=["e1"], id="peanut")
    with pytest.raises(TypeError, match="colour"):
        s.search("花生", at="e1", colour="red")
    with pytest.raises(TypeError, match="colour"):
        s.context("e1", query="花生", colour="red")
    hits = s.search("花生", at="e1", mode="keyword", kind=["semantic"], explain=True)
    assert [h.memory.id for h in hits] == ["peanut"] and hits[0].explanation is not None
    if isinstance(s, RemoteStore):
        with pytest.raises(InvalidInput, match="scope_weights"):
            s.search("花生", at="e1", scope_weights=[1.0])
        with pytest.raises(InvalidInput, match="server's"):
            s.context("e1", query="花生", mode="keyword")


@pytest.mark.parametrize(
    "bad",
    [
        lambda s: s.memories(at=5),
        lambda s: s.search("hello", at=5),
        lambda s: s.search("hello", at="e1", k="3"),
        lambda s: s.search("hello", at="e1", k=True),
        lambda s: s.children("e1", limit="2"),
        lambda s: s.context(at=5),
        lambda s: s.get_event(5),
        lambda s: s.versions(5),
        lambda s: s.memories(at="e1", namespace=5),
    ],
    ids=[
        "at-int",
        "search-at-int",
        "k-str",
        "k-bool",
        "limit-str",
        "context-at-int",
        "get-event-int",
        "versions-int",
        "namespace-int",
    ],
)
def test_bad_arguments_raise_what_the_store_raises(any_store: Any, bad: Any) -> None:
    any_store.add_event("e1", content="hello")
    any_store.add_memory("hello", sources=["e1"])
    with pytest.raises(InvalidInput) as got:
        bad(any_store)
    assert type(got.value) is InvalidInput and "request does not fit" not in str(got.value)


def test_unknown_parents_and_sources_warn_alike(any_store: Any) -> None:
    from branchmem import UnknownParents, UnknownSources

    s = any_store
    s.add_event("r1")
    with pytest.warns(UnknownParents, match="'gone'") as got:
        s.add_event("r2", parent="gone")
    assert got[0].filename == __file__
    with pytest.warns(UnknownSources, match="'gone2'") as got:
        s.add_memories([{"content": "f", "sources": ["r1", "gone2"]}])
    w = got[0].message
    assert isinstance(w, UnknownSources) and w.unknown == ("gone2",)
