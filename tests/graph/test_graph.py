"""The relation graph on every backend: edges as gated records, entities and
aliases, single-valued predicates, bounded paths, and bad input."""

from __future__ import annotations

import pytest

from branchmem import ConflictingRecord, InvalidInput, Redactor, Store, UnknownEntity, UnknownMemory
from branchmem.graph import MAX_HOPS


def chat(store: Store) -> None:
    """e1 - e2 - e3 (main) and e1 - e2b (an edit of e2, abandoned)."""
    store.add_events(
        [
            {"id": "e1", "content": "我们有个 auth-service"},
            {"id": "e2", "parent": "e1", "content": "Alice 负责 payment-service"},
            {"id": "e2b", "parent": "e1", "content": "Bob 负责 payment-service"},
            {"id": "e3", "parent": "e2", "content": "payment-service 依赖 libfoo"},
        ]
    )


def test_edges_are_gated_like_records(store: Store) -> None:
    chat(store)
    a = store.add_edge("Alice", "owns", "payment-service", sources=["e2"])
    store.add_edge("Bob", "owns", "payment-service", sources=["e2b"])
    store.add_edge("payment-service", "depends on", "libfoo", sources=["e3"])
    g = store.graph(at="e3")
    assert [(e.subject, e.object) for e in g.neighbors("payment-service")] == [
        ("Alice", "payment-service"),
        ("payment-service", "libfoo"),
    ]
    assert [e.subject for e in store.graph(at="e2b").neighbors("payment-service")] == ["Bob"]
    with pytest.raises(UnknownEntity):
        store.graph(at="e2b").neighbors("Alice")  # only named on the other branch
    assert store.graph(at="e1").edges() == []
    assert store.graph(at=None).edges() == []  # no anchor, nothing visible
    # Retracting an edge hides it only where the retraction is visible.
    store.add_event("e4", parent="e3", content="其实 Alice 不负责了")
    store.retract(a.id, sources=["e4"])
    assert [e.subject for e in store.graph(at="e4").neighbors("payment-service")] == [
        "payment-service"
    ]
    assert "Alice" in [e.subject for e in store.graph(at="e3").neighbors("payment-service")]
    # A scope chain sees what any of its anchors sees, each edge once.
    both = store.graph(at=["e2b", "e3"])
    assert sorted(e.subject for e in both.neighbors("payment-service")) == [
        "Alice",
        "Bob",
        "payment-service",
    ]


def test_edges_stay_out_of_plain_reads_and_search(store: Store) -> None:
    chat(store)
    store.add_edge("Alice", "owns", "payment-service", sources=["e2"])
    assert store.memories(at="e2") == []
    assert [m.kind for m in store.memories(at="e2", kind="edge")] == ["edge"]
    assert store.search("payment-service", at="e2", embedder="hashing") == []


def test_single_valued_predicate_supersedes_on_its_path(store: Store) -> None:
    chat(store)
    store.add_edge("Alice", "located in", "Beijing", sources=["e1"])
    store.add_edge("Alice", "located in", "Shanghai", sources=["e2"])
    assert [e.object for e in store.graph(at="e3").neighbors("Alice")] == ["Shanghai"]
    assert [e.object for e in store.graph(at="e2b").neighbors("Alice")] == ["Beijing"]
    # Not single-valued: both stay; single=True makes it so.
    store.add_edge("Alice", "uses", "vim", sources=["e1"])
    store.add_edge("Alice", "uses", "emacs", sources=["e2"])
    assert {e.object for e in store.graph(at="e2").neighbors("Alice", predicate="uses")} == {
        "vim",
        "emacs",
    }
    store.add_edge("Alice", "uses", "nano", sources=["e3"], single=True)
    assert [e.object for e in store.graph(at="e3").neighbors("Alice", predicate="uses")] == ["nano"]


def test_replaces_and_supersede(store: Store) -> None:
    chat(store)
    old = store.add_edge("Alice", "owns", "payment-service", sources=["e2"])
    store.add_edge("Carol", "owns", "payment-service", sources=["e3"], replaces=[old.id])
    assert [e.subject for e in store.graph(at="e3").neighbors("payment-service")] == ["Carol"]
    assert [e.subject for e in store.graph(at="e2").neighbors("payment-service")] == ["Alice"]
    with pytest.raises(InvalidInput, match="replaces"):
        store.supersede(old.id, "x", sources=["e3"])
    with pytest.raises(UnknownMemory):
        store.add_edge("a", "b", "c", sources=["e3"], replaces=["nope"])


def test_entities_merge_by_name_and_alias(store: Store) -> None:
    chat(store)
    store.add_edge("Alice", "owns", "payment-service", sources=["e2"])
    store.add_edge("  alice ", "member of", "Team Pay", sources=["e2"])
    store.add_edge("爱丽丝", "same as", "Alice", sources=["e3"])
    store.add_edge("爱丽丝", "likes", "咖啡", sources=["e3"])
    at2 = store.graph(at="e2")
    assert [e.object for e in at2.neighbors("ALICE")] == ["payment-service", "Team Pay"]
    with pytest.raises(UnknownEntity):
        at2.neighbors("爱丽丝")
    g = store.graph(at="e3")
    assert g.entity("爱丽丝").name == "Alice" and g.entity("alice").aliases == ("爱丽丝",)
    assert [e.object for e in g.neighbors("Alice")] == ["payment-service", "Team Pay", "咖啡"]
    assert [e.predicate for e in g.neighbors("Alice", predicate="same as")] == ["same as"]
    assert [str(p) for p in g.paths("咖啡", "Team Pay")] == [
        "咖啡 <-likes- Alice -member of-> Team Pay"
    ]
    names = [e.name for e in g.entities()]
    assert "Alice" in names and "爱丽丝" not in names


def test_paths_are_bounded_and_handle_cycles(store: Store) -> None:
    chat(store)
    ring = ["a", "b", "c", "d", "e", "f"]
    for x, y in zip(ring, ring[1:] + ring[:1], strict=True):
        store.add_edge(x, "next", y, sources=["e3"])
    g = store.graph(at="e3")
    assert [p.hops for p in g.paths("a", "d", max_hops=3)] == [3, 3]  # both ways round
    assert g.paths("a", "d", max_hops=2) == []
    assert [str(p) for p in g.paths("a", "b")] == ["a -next-> b"]
    assert g.paths("a", "a")[0].hops == 0
    assert sorted(p.hops for p in g.reach(["a"], max_hops=8).values()) == [0, 1, 1, 2, 2, 3]
    with pytest.raises(InvalidInput, match=r"max_hops.*longer walks cost more"):
        g.paths("a", "d", max_hops=MAX_HOPS + 1)
    for short in (0, -1, "3"):  # too short, or not a number: no word about cost
        with pytest.raises(
            InvalidInput, match=f"max_hops must be an integer in 1..{MAX_HOPS}, got"
        ) as e:
            g.paths("a", "d", max_hops=short)
        assert "cost" not in str(e.value)
    with pytest.raises(InvalidInput, match="max_edges"):
        g.paths("a", "d", max_edges=0)
    with pytest.raises(UnknownEntity):
        g.paths("a", "zzz")
    assert g.paths("a", "d", max_edges=2) == []  # the budget ran out first


def test_no_anchor_no_entities_and_the_error_says_so(store: Store) -> None:
    store.add_event("e1", content="Alice owns auth")
    store.add_edge("Alice", "owns", "auth", sources=["e1"])
    for at in (None, []):
        g = store.graph(at=at)
        assert g.edges() == [] and g.entities() == []
        with pytest.raises(UnknownEntity, match=r"no anchor, no entities.*pass at= an event id"):
            g.neighbors("Alice")
    with pytest.raises(UnknownEntity, match=r"at 'e1'.*entities\(\) lists"):
        store.graph(at="e1").neighbors("Bob")


def test_bad_edges_are_refused_and_readds_are_checked(store: Store) -> None:
    chat(store)
    for bad in ("", "  ", "a\nb", 3):
        with pytest.raises(InvalidInput):
            store.add_edge(bad, "owns", "x", sources=["e1"])  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="two entities"):
        store.add_edge("x", "owns", " X ", sources=["e1"])
    with pytest.raises(InvalidInput):
        store.add_edge("x", "owns", "y", sources=[])
    with pytest.raises(InvalidInput):
        store.graph(at="e1").neighbors("x", direction="sideways")
    e = store.add_edge("x", "owns", "y", sources=["e1"], id="k1")
    assert store.add_edge("x", "owns", "y", sources=["e1"], id="k1") == e
    with pytest.raises(ConflictingRecord):
        store.add_edge("x", "owns", "z", sources=["e1"], id="k1")


def test_edge_waits_for_its_sources(store: Store) -> None:
    store.add_edge("x", "owns", "y", sources=["late"])
    store.add_event("root")
    assert store.graph(at="root").edges() == []
    store.add_event("late", parent="root")
    assert [e.object for e in store.graph(at="late").neighbors("x")] == ["y"]


def test_time_hides_edges(open_store) -> None:  # type: ignore[no-untyped-def]
    now = [100.0]
    store = open_store(clock=lambda: now[0])
    chat(store)
    store.add_edge("x", "owns", "y", sources=["e1"], valid_to=150.0)
    assert len(store.graph(at="e1").edges()) == 1
    assert store.graph(at="e1", now=200.0).edges() == []
    now[0] = 160.0
    assert store.graph(at="e1").edges() == []


def test_edge_names_go_through_redaction(tmp_path) -> None:  # type: ignore[no-untyped-def]
    store = Store(redactor=Redactor())
    store.add_event("e1")
    store.add_edge("alice@example.com", "owns", "auth-service", sources=["e1"])
    (edge,) = store.graph(at="e1").edges()
    assert "alice@example.com" not in repr(edge.to_dict())
    assert "alice@example.com" not in store.memories(at="e1", kind="edge")[0].content


def test_another_connection_sees_new_edges(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "g.db"
    a, b = Store(path), Store(path)
    a.add_event("e1")
    a.add_edge("x", "owns", "y", sources=["e1"])
    assert len(b.graph(at="e1").edges()) == 1
    a.add_edge("x", "owns", "z", sources=["e1"])
    assert len(b.graph(at="e1").neighbors("x")) == 2
    a.add_event("e2", parent="e1")
    gone = a.add_edge("y", "uses", "w", sources=["e2"])
    assert len(b.graph(at="e2").neighbors("y")) == 2
    assert gone.id in a.purge(events=["e2"])  # erased through the other store
    assert [e.id for e in b.graph(at="e1").edges() if e.id == gone.id] == []
    a.close()
    b.close()


def test_purge_forgets_edges(store: Store) -> None:
    chat(store)
    e = store.add_edge("x", "owns", "y", sources=["e2"])
    assert len(store.graph(at="e3").edges()) == 1
    store.purge(events=["e2"])
    assert store.graph(at="e3").edges() == []
    assert e.id not in [m.id for m in store.memories(at="e3", kind="edge")]


def test_a_new_owner_supersedes_the_old_on_its_path(store: Store) -> None:
    chat(store)
    store.add_edge("Alice", "owns", "payment-service", sources=["e2"])
    store.add_edge("Bob", "owns", "payment-service", sources=["e3"])
    assert [e.subject for e in store.graph(at="e3").neighbors("payment-service")] == ["Bob"]
    assert [e.subject for e in store.graph(at="e2").neighbors("payment-service")] == ["Alice"]
