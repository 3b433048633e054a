"""Views made at one anchor state share what they work out (`graph/memo.py`):
repeated reads answer the same as a fresh store would, a write or a moved
branch starts afresh, and the time still counts where an edge has a bound."""

from __future__ import annotations

from branchmem import Store


def _store() -> Store:
    s = Store()
    s.add_events(
        [
            {"id": "e1"},
            {"id": "e2", "parent": "e1"},
            {"id": "e2b", "parent": "e1"},
        ]
    )
    s.add_edge("Alice", "owns", "auth-service", sources=["e1"], id="g1")
    s.add_edge("auth-service", "uses", "jwt", sources=["e2"], id="g2")
    s.add_edge("auth-service", "uses", "libfoo", sources=["e2b"], id="g3")
    return s


def _ids(s: Store, at: str | list[str], name: str = "auth-service") -> list[str]:
    return [e.id for e in s.graph(at=at).neighbors(name)]


def test_repeated_views_share_and_agree() -> None:
    s = _store()
    first = _ids(s, "e2")
    assert first == ["g1", "g2"] and _ids(s, "e2") == first
    assert _ids(s, "e2b") == ["g1", "g3"]  # another anchor, its own state
    assert _ids(s, ["e2", "e2b"]) == ["g1", "g2", "g3"]
    memos = s._engine.find("graph-views")
    assert memos is not None and len(memos._by) == 3  # type: ignore[attr-defined]


def test_a_returned_list_is_the_callers() -> None:
    s = _store()
    got = s.graph(at="e2").neighbors("auth-service")
    got.clear()
    assert _ids(s, "e2") == ["g1", "g2"]


def test_a_write_starts_afresh() -> None:
    s = _store()
    assert _ids(s, "e2") == ["g1", "g2"]
    s.retract("g2", sources=["e2"])
    assert _ids(s, "e2") == ["g1"]
    s.add_edge("Bob", "uses", "auth-service", sources=["e1"], id="g4")
    assert _ids(s, "e2") == ["g1", "g4"]


def test_a_moved_branch_starts_afresh() -> None:
    s = _store()
    s.set_branch("main", "e2")
    assert _ids(s, "main") == ["g1", "g2"]
    s.set_branch("main", "e2b")
    assert _ids(s, "main") == ["g1", "g3"]


def test_time_bounds_are_not_shared_across_now() -> None:
    s = _store()
    s.add_edge("auth-service", "uses", "old-lib", sources=["e1"], id="g5", valid_to=100.0)
    early = [e.id for e in s.graph(at="e2", now=50.0).neighbors("auth-service")]
    late = [e.id for e in s.graph(at="e2", now=150.0).neighbors("auth-service")]
    assert early == ["g1", "g2", "g5"] and late == ["g1", "g2"]
    assert [e.id for e in s.graph(at="e2", now=50.0).neighbors("auth-service")] == early


def test_erasure_clears_the_kept_state() -> None:
    s = _store()
    assert _ids(s, "e2") == ["g1", "g2"]
    s.purge(memories=["g2"])
    assert _ids(s, "e2") == ["g1"]
