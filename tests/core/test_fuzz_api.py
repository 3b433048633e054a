"""Fuzz the public API: whatever the arguments, only `BranchmemError` escapes, and
a call that fails changes nothing."""

from __future__ import annotations

import inspect
import math
import os
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from branchmem import BranchmemError, Policy, Store, Weights
from helpers.pg_helpers import examples
from helpers.raw_state import raw_state


def _deep(depth: int) -> Any:
    out: Any = "x"
    for _ in range(depth):
        out = [out]
    return out


def _deep_dict(depth: int) -> Any:
    out: Any = 1
    for _ in range(depth):
        out = {"a": out}
    return out


class Deep:
    """Stands for a structure nested thousands deep, built at call time (a printer
    could not show it)."""

    def __init__(self, make: Callable[[int], Any]) -> None:
        self.make = make

    def __repr__(self) -> str:
        return f"Deep({self.make.__name__})"


def _real(v: Any) -> Any:
    if isinstance(v, Deep):
        return v.make(3000)
    if type(v) is list:
        return [_real(x) for x in v]
    if type(v) is dict:
        return {k: _real(x) for k, x in v.items()}
    return v


ATOMS: list[Any] = [
    None, True, 0, -1, 1, 0.5, 10**400, -(10**400), math.nan, math.inf, -math.inf,
    "", " ", "e1", "e2", "m1", "main", "default", "nosuch", "\ud800", "a\x00b", "x" * 600,
    "a/b", b"e1", object(), [], {}, ["e1"], ["e1", "e2"], ["e1", None], [["e1"]],
    {"id": "e9"}, {"a": math.nan}, {"a": "\udcff"}, {"\ud800": 1}, {1: 2},
    Deep(_deep), Deep(_deep_dict), ("e1",), {"e1"}, Weights(), -0.0, 1e308,
]  # fmt: skip
VALUES = st.one_of(
    st.sampled_from(ATOMS),
    st.lists(st.sampled_from(ATOMS), max_size=3),
    st.dictionaries(st.sampled_from(["id", "content", "sources", "parent", "namespace",
                                     "meta", "importance", "kind", "role", "x"]),
                    st.sampled_from(ATOMS), max_size=4),
)  # fmt: skip

METHODS = [
    "add_event", "add_events", "add_memory", "add_memories", "retract", "supersede",
    "memories", "visible", "explain", "path", "get_event", "get_memory", "search", "purge",
    "create_branch", "remember", "set_branch", "branch_head", "branches", "delete_branch",
    "snapshot", "snapshots", "rollback", "history", "merge", "conflicts", "resolve", "touch",
    "score", "archive_expired", "restore", "prune_branches", "audit",
]  # fmt: skip


def _seed(store: Store) -> None:
    store.add_events([{"id": "e1", "content": "花生"}, {"id": "e2", "parent": "e1"}])
    store.add_memory("用户对花生过敏", sources=["e2"], id="m1")
    store.create_branch("main", at="e2")


@st.composite
def calls(draw: st.DrawFn) -> tuple[str, list[Any], dict[str, Any]]:
    name = draw(st.sampled_from(METHODS))
    params = [
        p
        for p in inspect.signature(getattr(Store, name)).parameters.values()
        if p.name != "self" and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)
    ]
    args: list[Any] = []
    kwargs: dict[str, Any] = {}
    for p in params:
        if draw(st.integers(0, 2)) == 0 and p.default is not p.empty:
            continue  # leave it at its default
        value = draw(VALUES)
        if p.kind is p.POSITIONAL_OR_KEYWORD and not kwargs and draw(st.booleans()):
            args.append(value)
        else:
            kwargs[p.name] = value
    if draw(st.integers(0, 9)) == 0:
        kwargs["bogus"] = draw(VALUES)
    return name, args, kwargs


def _call(store: Store, name: str, args: list[Any], kwargs: dict[str, Any]) -> None:
    method = getattr(store, name)
    try:
        inspect.signature(method).bind(*args, **kwargs)
    except TypeError:
        return  # a wrong number or name of arguments: Python's own call check
    before = raw_state(store)
    try:
        method(*_real(args), **_real(kwargs))
    except BranchmemError:
        assert raw_state(store) == before, f"{name} failed but changed the store"


def test_only_branchmem_errors_escape(make_store: Callable[[], Store], backend_name: str) -> None:
    @settings(
        max_examples=examples(backend_name, int(os.environ.get("FUZZ_EXAMPLES", "150"))),
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    @given(seq=st.lists(calls(), min_size=1, max_size=4))
    def run(seq: list[tuple[str, list[Any], dict[str, Any]]]) -> None:
        with make_store() as store:  # closed at once: a server's connections are few
            _seed(store)
            for name, args, kwargs in seq:
                _call(store, name, args, kwargs)

    run()


@given(
    ttl=st.one_of(st.sampled_from(ATOMS), st.floats()),
    boost=st.one_of(st.sampled_from(ATOMS), st.floats()),
)
@settings(max_examples=60, deadline=None)
def test_policy_refuses_what_is_not_a_positive_finite_number(ttl: Any, boost: Any) -> None:
    try:
        p = Policy(
            ttls={"working": _real(ttl)}, half_lives={"semantic": _real(ttl)}, max_boost=boost
        )
    except BranchmemError:
        return
    assert math.isfinite(p.ttls["working"]) and p.ttls["working"] > 0
    assert math.isfinite(p.max_boost)


@given(field=st.sampled_from(["keyword", "vector", "importance", "recency", "rrf_k", "half_life"]),
       value=st.sampled_from(ATOMS))  # fmt: skip
@settings(max_examples=60, deadline=None)
def test_weights_refuse_what_is_not_a_number_in_range(field: str, value: Any) -> None:
    try:
        w = Weights(**{field: _real(value)})
    except BranchmemError:
        return
    assert math.isfinite(getattr(w, field))


ANCHOR_CALLS: list[tuple[str, Callable[[Store, Any], Any]]] = [
    ("memories", lambda s, a: s.memories(at=a)),
    ("visible", lambda s, a: s.visible("m1", at=a)),
    ("explain", lambda s, a: s.explain("m1", at=a)),
    ("path", lambda s, a: s.path(a)),
    ("search", lambda s, a: s.search("花生", at=a, embedder="hashing")),
    ("conflicts", lambda s, a: s.conflicts(at=a)),
    ("create_branch", lambda s, a: s.create_branch("b2", at=a)),
    ("merge", lambda s, a: s.merge(a, "main")),
]


@pytest.mark.parametrize("at", ["\ud800", ["e1", "\ud800"]], ids=["one", "chain"])
@pytest.mark.parametrize(("name", "call"), ANCHOR_CALLS, ids=[n for n, _ in ANCHOR_CALLS])
def test_an_anchor_utf8_cannot_hold_is_bad_input(
    store: Store, name: str, call: Callable[[Store, Any], Any], at: Any
) -> None:
    # A lone surrogate reached SQLite's encoder (UnicodeEncodeError) before it was checked.
    _seed(store)
    before = raw_state(store)
    with pytest.raises(BranchmemError):
        call(store, at)
    assert raw_state(store) == before
