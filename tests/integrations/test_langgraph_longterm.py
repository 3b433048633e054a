"""Long-term memory across LangGraph threads (``BranchmemStore(shared=True)``):
what one thread's current lineage holds, every thread and every bare read sees;
a fork or rewind takes it back everywhere, and coming back returns it. And a
property: the incrementally kept long-term view equals a naive one, read at
every head from scratch."""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import Callable
from typing import Any, TypedDict

import pytest

pytest.importorskip("langgraph")

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langgraph.graph import START, StateGraph
from langgraph.store.base import BaseStore, SearchOp
from langgraph.store.memory import _compare_values

from branchmem import InvalidInput, Store
from branchmem.integrations.langgraph import BranchmemSaver, BranchmemStore
from branchmem.integrations.langgraph import _keys as k
from branchmem.integrations.langgraph._heads import (
    MARK,
    SHARED,
    Writes,
    derive,
    ident_of,
    read_view,
)
from branchmem.integrations.langgraph._longterm import LongTerm
from branchmem.integrations.langgraph.store import _View
from branchmem.model import RETRACTION

NS = ("user", "profile")


class S(TypedDict, total=False):
    fact: str | None
    drop: bool
    seen: dict[str, str]


def _learn(state: S, *, store: BaseStore) -> dict[str, Any]:
    if state.get("drop"):
        store.delete(NS, "drink")
    elif state.get("fact"):
        store.put(NS, "drink", {"text": state["fact"]})
    return {}


def _recall(state: S, *, store: BaseStore) -> dict[str, Any]:
    return {"seen": {i.key: i.value["text"] for i in store.search(NS)}}


def _graph(mem: Store, store: BaseStore | None = None) -> Any:
    g = StateGraph(S)
    g.add_node("learn", _learn)
    g.add_node("recall", _recall)
    g.add_edge(START, "learn")
    g.add_edge("learn", "recall")
    return g.compile(checkpointer=BranchmemSaver(mem), store=store or BranchmemStore(mem))


def _cfg(thread: str) -> Any:
    return {"configurable": {"thread_id": thread}}


def _first_step(graph: Any, thread: str) -> Any:
    """The thread's oldest checkpoint about to run ``learn`` (before anything it learned)."""
    return [s for s in graph.get_state_history(_cfg(thread)) if s.next == ("learn",)][-1]


def _bare(store: BaseStore) -> dict[str, str]:
    return {i.key: i.value["text"] for i in store.search(NS)}


def test_what_one_thread_learns_another_sees_and_a_rewind_takes_back(
    make_store: Callable[[], Store],
) -> None:
    mem = make_store()
    store = BranchmemStore(mem)
    graph = _graph(mem, store)
    graph.invoke({"fact": "喝茶"}, _cfg("t1"))
    learned = graph.get_state(_cfg("t1")).config
    assert graph.invoke({}, _cfg("t2"))["seen"] == {"drink": "喝茶"}
    assert _bare(store) == {"drink": "喝茶"}
    item = store.get(NS, "drink")
    assert item is not None and item.value == {"text": "喝茶"}
    assert store.list_namespaces() == [NS]

    # t1 is rewound to before it learned, and goes on from there: gone everywhere
    before = _first_step(graph, "t1")
    graph.invoke(None, graph.update_state(before.config, {"fact": None}))
    assert graph.invoke({}, _cfg("t2"))["seen"] == {}
    assert _bare(store) == {} and store.get(NS, "drink") is None
    assert store.list_namespaces() == []

    # t1 comes back to the old branch: the fact returns
    graph.update_state(learned, {"fact": None})
    assert _bare(store) == {"drink": "喝茶"}
    assert graph.invoke({}, _cfg("t3"))["seen"] == {"drink": "喝茶"}


def test_an_overwrite_in_another_thread_wins_and_a_run_never_reads_its_own_head(
    make_store: Callable[[], Store],
) -> None:
    mem = make_store()
    store = BranchmemStore(mem)
    graph = _graph(mem, store)
    graph.invoke({"fact": "喝茶"}, _cfg("t1"))
    start = _first_step(graph, "t1")
    graph.invoke({"fact": "喝咖啡"}, _cfg("t2"))  # t2 saw t1's value and overwrote it
    assert graph.invoke({"fact": None}, _cfg("t2"))["seen"] == {"drink": "喝咖啡"}
    assert store.at(_cfg("t1")).get(NS, "drink").value == {"text": "喝咖啡"}
    # a run of t1 resumed from before it learned sees t2's value, not its own head's
    assert store.at(start.config).get(NS, "drink").value == {"text": "喝咖啡"}
    assert _bare(store) == {"drink": "喝咖啡"}
    # t2 rewinds past its overwrite: t1's value is back for everyone
    t2_start = _first_step(graph, "t2")
    graph.update_state(t2_start.config, {"fact": None})
    assert _bare(store) == {"drink": "喝茶"}


def test_independent_values_own_first_bare_newest(make_store: Callable[[], Store]) -> None:
    mem = make_store()
    apart = _graph(mem, BranchmemStore(mem, shared=False))  # writes that saw nothing else
    apart.invoke({"fact": "喝茶"}, _cfg("t1"))
    apart.invoke({"fact": "喝咖啡"}, _cfg("t2"))
    store = BranchmemStore(mem)
    graph = _graph(mem, store)
    assert graph.invoke({}, _cfg("t1"))["seen"] == {"drink": "喝茶"}
    assert graph.invoke({}, _cfg("t2"))["seen"] == {"drink": "喝咖啡"}
    assert _bare(store) == {"drink": "喝咖啡"}  # the newest
    assert store.via(NS, "drink") == "t2"
    assert store.at(_cfg("t1")).via(NS, "drink") == "t1"
    # a new thread, before t2's value: the newest other one
    t2_start = _first_step(graph, "t2")
    graph.update_state(t2_start.config, {"fact": None})
    assert graph.invoke({}, _cfg("t3"))["seen"] == {"drink": "喝茶"}


def test_a_delete_in_one_thread_holds_everywhere_until_rewound(
    make_store: Callable[[], Store],
) -> None:
    mem = make_store()
    store = BranchmemStore(mem)
    graph = _graph(mem, store)
    graph.invoke({"fact": "喝茶"}, _cfg("t1"))
    graph.invoke({"drop": True}, _cfg("t2"))
    deleted = graph.get_state(_cfg("t2")).config
    assert _bare(store) == {}
    assert graph.invoke({}, _cfg("t3"))["seen"] == {}
    before = _first_step(graph, "t2")
    graph.update_state(before.config, {"drop": False})  # t2 abandons its delete
    assert _bare(store) == {"drink": "喝茶"}
    graph.update_state(deleted, {"drop": False})  # and comes back to it
    assert _bare(store) == {}


def test_bare_writes_are_long_term_and_seen_in_runs(make_store: Callable[[], Store]) -> None:
    mem = make_store()
    store = BranchmemStore(mem)
    store.put(NS, "drink", {"text": "喝水"})
    graph = _graph(mem, store)
    assert graph.invoke({}, _cfg("t1"))["seen"] == {"drink": "喝水"}
    graph.invoke({"fact": "喝茶"}, _cfg("t1"))
    assert _bare(store) == {"drink": "喝茶"}
    store.delete(NS, "drink")
    assert _bare(store) == {} and graph.invoke({}, _cfg("t2"))["seen"] == {}


def test_a_new_store_object_and_a_reopened_file_build_the_same_view(tmp_path: Any) -> None:
    path = tmp_path / "agent.db"
    mem = Store(path)
    graph = _graph(mem)
    graph.invoke({"fact": "喝茶"}, _cfg("t1"))
    BranchmemStore(mem).put(("other",), "k", {"text": "x"})
    mem.close()
    again = Store(path)
    assert _bare(BranchmemStore(again)) == {"drink": "喝茶"}
    assert BranchmemStore(again).list_namespaces() == [("other",), NS]
    again.close()


def test_two_store_objects_on_one_file_follow_each_other(tmp_path: Any) -> None:
    """A running store sees what another Store object (or process) on the same
    file saved since it built its view, without a restart."""
    path = tmp_path / "agent.db"
    mem_a, mem_b = Store(path), Store(path)
    graph = _graph(mem_a)
    reader = BranchmemStore(mem_b)
    assert _bare(reader) == {}  # built now, before anything was learned
    graph.invoke({"fact": "喝茶"}, _cfg("t1"))
    learned = graph.get_state(_cfg("t1")).config
    assert _bare(reader) == {"drink": "喝茶"}
    # a rewind in the other store takes it out here too, and coming back returns it
    graph.invoke(None, graph.update_state(_first_step(graph, "t1").config, {"fact": None}))
    assert _bare(reader) == {} and reader.get(NS, "drink") is None
    graph.update_state(learned, {"fact": None})
    assert _bare(reader) == {"drink": "喝茶"}
    # and the other way: a bare write here reaches the running graph's store
    reader.put(("user", "prefs"), "tone", {"text": "短"})
    writer = BranchmemStore(mem_a)
    assert [i.value for i in writer.search(("user", "prefs"))] == [{"text": "短"}]
    assert graph.invoke({}, _cfg("t2"))["seen"] == {"drink": "喝茶"}
    # a run in the graph reads the other store's bare write through the scope chain
    assert {i.key for i in writer.search(("user",))} == {"drink", "tone"}
    mem_a.close()
    mem_b.close()


def test_deleting_a_thread_takes_its_lineage_out(make_store: Callable[[], Store]) -> None:
    mem = make_store()
    store = BranchmemStore(mem)
    saver = BranchmemSaver(mem)
    g = StateGraph(S)
    g.add_node("learn", _learn)
    g.add_edge(START, "learn")
    graph = g.compile(checkpointer=saver, store=store)
    graph.invoke({"fact": "喝茶"}, _cfg("t1"))
    assert _bare(store) == {"drink": "喝茶"}
    saver.delete_thread("t1")
    assert _bare(store) == {}


def test_shared_false_keeps_threads_apart(make_store: Callable[[], Store]) -> None:
    mem = make_store()
    store = BranchmemStore(mem, shared=False)
    graph = _graph(mem, store)
    graph.invoke({"fact": "喝茶"}, _cfg("t1"))
    assert graph.invoke({}, _cfg("t2"))["seen"] == {}
    assert _bare(store.at(_cfg("t1"))) == {"drink": "喝茶"}
    with pytest.raises(InvalidInput, match="shared=False"):
        store.get(NS, "drink")


def test_async_bare_reads_see_the_long_term_view(make_store: Callable[[], Store]) -> None:
    mem = make_store()
    store = BranchmemStore(mem)
    graph = _graph(mem, store)

    async def go() -> None:
        await graph.ainvoke({"fact": "喝茶"}, _cfg("t1"))
        assert [i.value for i in await store.asearch(NS)] == [{"text": "喝茶"}]
        item = await store.aget(NS, "drink")
        assert item is not None and item.value == {"text": "喝茶"}
        assert await store.alist_namespaces(prefix=("user",)) == [NS]

    asyncio.run(go())


def test_via_names_the_thread_a_value_came_from(make_store: Callable[[], Store]) -> None:
    mem = make_store()
    store = BranchmemStore(mem)
    graph = _graph(mem, store)
    graph.invoke({"fact": "喝茶"}, _cfg("t1"))
    store.put(("x",), "k", {"text": "bare"})
    assert store.via(NS, "drink") == "t1"
    assert store.via(("x",), "k") is None
    assert store.via(("x",), "missing") is None


# ------------------------------------------------------------------ property
# Threads grow trees of checkpoints; each step writes from a task event
# between a checkpoint and its child (put, overwrite or delete of a key, as a
# run does), then the thread's head moves to the child, or back to any older
# checkpoint (a rewind). The view kept by `LongTerm.move` must equal the one
# read from scratch at every head.

KEYS = ["a", "b", "c"]
SPACE = {"a": ("ns",), "b": ("ns",), "c": ("ns", "deep")}  # the namespace of each key
FILTERS: list[dict[str, Any]] = [
    {"k": 0}, {"k": 1.0}, {"b": True}, {"b": 1}, {"k": 2, "b": False}, {"f": 0},
    {"k": {"$gte": 1}}, {"n": None}, {"missing": None}, {"l": [1]}, {"k": "1"},
    {"k": float("nan")},
]  # fmt: skip
THREADS = ["t1", "t2", "t3"]
step = st.tuples(
    st.sampled_from([*THREADS, SHARED]),
    st.integers(0, 50),  # which of the thread's checkpoints to grow from (or rewind to)
    st.sampled_from(["grow", "rewind", "drop"]),
    st.lists(st.tuples(st.sampled_from(KEYS), st.sampled_from(["put", "overwrite", "delete"])),
             max_size=3),
)  # fmt: skip


def _naive(
    mem: Store, heads: dict[str, str], also_hidden: set[str] | frozenset[str] = frozenset()
) -> dict[tuple[tuple[str, ...], str], str]:
    """Read at every head from scratch: what a lineage holds for a key is its
    newest visible record; the long-term item is the newest of those that no
    head's visible retractions name."""
    hidden: set[str] = set(also_hidden)
    for anchor in heads.values():
        hidden |= {r.target for r in mem.memories(at=anchor, kind=RETRACTION) if r.target}
    shown: dict[tuple[tuple[str, ...], str], Any] = {}
    for anchor in heads.values():
        newest: dict[tuple[tuple[str, ...], str], Any] = {}
        for m in mem.memories(at=anchor):
            ident = (tuple(m.meta[MARK]["namespace"]), m.meta[MARK]["key"])
            if ident not in newest or newest[ident].seq < m.seq:
                newest[ident] = m
        for ident, m in newest.items():
            if m.id not in hidden and (ident not in shown or shown[ident].seq < m.seq):
                shown[ident] = m
    return {i: m.id for i, m in shown.items()}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(step, max_size=14))
def test_kept_view_equals_a_view_read_at_every_head(steps: list[Any]) -> None:
    mem = Store()
    lt = LongTerm(mem, "default")
    lt.build()
    mem.add_event(k.SHARED_EVENT, role="note")
    checkpoints: dict[str, list[str]] = {t: [] for t in THREADS}
    tasks: dict[str, Writes] = {}
    heads: dict[str, str] = {}
    for n, (thread, pick, what, writes) in enumerate(steps, 1):
        if thread == SHARED:  # a bare write: sourced from the shared event
            added, hid = [], []
            for key, kind in dict(writes).items():  # a batch: the last write of a key wins
                old = _current(lt, (SPACE[key], key))
                if kind == "delete":
                    if old is not None:
                        mem.retract(old.id, sources=[k.SHARED_EVENT])
                        hid.append(old.id)
                else:
                    added.append(
                        _put(mem, k.SHARED_EVENT, key, n, old if kind == "overwrite" else None)
                    )
                    if old is not None and kind == "overwrite":
                        hid.append(old.id)
            lt.wrote(added, hid)
            heads[SHARED] = k.SHARED_EVENT
        elif what == "drop" and checkpoints[thread]:
            lt.move(thread, None)
            heads.pop(thread, None)
            checkpoints[thread] = []
        elif what == "rewind" and checkpoints[thread]:
            to = checkpoints[thread][pick % len(checkpoints[thread])]
            lt.move(thread, to)
            heads[thread] = to
        else:
            cps = checkpoints[thread]
            parent = cps[pick % len(cps)] if cps else None
            # ids as the integration makes them, so that the derivation applies
            cid = json.loads(parent[3:])[3] if parent else "none"
            task = k.task_event(thread, cid, f"x{n}")
            cp = k.checkpoint_event(thread, "", f"c{n}")
            mem.add_event(task, parent=parent, role="note")
            done: Writes = tasks.setdefault(task, [])
            for key, kind in writes:
                ident = (SPACE[key], key)
                seen = read_view(mem, "default", task).items.get(ident) or _current(lt, ident)
                if kind == "delete":
                    if seen is not None:
                        mem.retract(seen.id, sources=[task])
                        done.append(([], [seen.id]))
                else:
                    old = seen if kind == "overwrite" else None
                    done.append(([_put(mem, task, key, n, old)], [old.id] if old else []))
            head = lt.heads.get(thread)
            if head is not None and head.anchor == parent:  # a task's view, derived
                derived = derive(head, task, done)
                if derived is not None:
                    fresh = read_view(mem, "default", task)
                    assert derived.items == fresh.items and derived.hides == fresh.hides
            mem.add_event(cp, parent=task, role="note")
            cps.append(cp)
            lt.move(thread, cp, [task], tasks)  # derived from the old head where it can be
            heads[thread] = cp
        kept = {(sp, key): m.id for sp, recs in lt.current.items() for key, m in recs.items()}
        assert kept == _naive(mem, heads)
        _check_searches(mem, lt, kept)
        for t in THREADS:  # a run at any checkpoint of any thread: the scope chain
            for anchor in checkpoints[t][pick % 3 :: 3]:
                view = _View(read_view(mem, "default", anchor), lt, t, mem, "default")
                others = {u: a for u, a in heads.items() if u != t}
                want = _naive_chain(mem, anchor, others)
                got = {i: m.id for i in want.keys() | _idents(kept) if (m := view.get(i))}
                assert got == want


def _check_searches(mem: Store, lt: LongTerm, kept: dict[Any, str]) -> None:
    """A bare filtered search (through the kept index where a condition is a
    scalar) returns what filtering every kept item does, in InMemoryStore's
    order (namespace by its oldest item, then each item's first put)."""
    ours = BranchmemStore(mem)
    recs = {m.id: m for items in lt.current.values() for m in items.values()}
    for filt in FILTERS:
        for prefix in [("ns",), ("ns", "deep")]:
            op = SearchOp(prefix, filt, limit=10)
            page = ours._search(op, _View(None, lt, None, mem, "default"), None)
            got = [ident_of(m) for m, _ in page]
            items = [(i, recs[rid]) for i, rid in kept.items() if i[0][: len(prefix)] == prefix]
            low: dict[Any, float] = {}
            for (space, _), m in items:
                low[space] = min(low.get(space, math.inf), m.meta[MARK]["created_at"])
            hits = [
                (low[i[0]], m.meta[MARK]["created_at"], m.seq, i)
                for i, m in items
                if all(_compare_values(m.meta[MARK]["value"].get(f), w) for f, w in filt.items())
            ]
            assert got == [h[3] for h in sorted(hits)][:10], filt


def _naive_chain(mem: Store, anchor: str, others: dict[str, str]) -> dict[Any, str]:
    """A run at ``anchor``: its own newest record per key unless another
    head's retractions name it, else the long-term item of the other heads
    (leaving out what ``anchor``'s retractions name)."""
    mine = _naive(mem, {"own": anchor})
    hidden: set[str] = set()
    for a in others.values():
        hidden |= {r.target for r in mem.memories(at=a, kind=RETRACTION) if r.target}
    own_hides = {r.target for r in mem.memories(at=anchor, kind=RETRACTION) if r.target}
    out = {i: rid for i, rid in mine.items() if rid not in hidden}
    for i, rid in _naive(mem, others, also_hidden=own_hides | set(mine.values())).items():
        out.setdefault(i, rid)
    return out


def _idents(kept: dict[Any, str]) -> set[Any]:
    return set(kept) | {(SPACE[key], key) for key in KEYS}


def _current(lt: LongTerm, ident: Any) -> Any:
    return (lt.current.get(ident[0]) or {}).get(ident[1])


def _put(mem: Store, source: str, key: str, n: int, old: Any) -> Any:
    value = {"n": n, "k": n % 3, "b": n % 2 == 0, "f": float(n % 2), "l": [n % 2]}
    meta = {MARK: {"namespace": list(SPACE[key]), "key": key, "value": value,
                   "created_at": float(n), "updated_at": float(n)}}  # fmt: skip
    if old is not None:
        return mem.supersede(old.id, str(n), sources=[source], meta=meta)
    return mem.add_memory(str(n), sources=[source], meta=meta)


def test_the_example_runs_on_every_backend(make_store: Callable[[], Store]) -> None:
    import importlib.util
    from pathlib import Path

    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.store.memory import InMemoryStore

    path = Path(__file__).resolve().parents[2] / "examples" / "langgraph_longterm.py"
    spec = importlib.util.spec_from_file_location("langgraph_longterm", path)
    assert spec is not None and spec.loader is not None
    ex = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ex)
    mem = make_store()
    ours = BranchmemStore(mem)
    assert ex.scenario(ex.build(BranchmemSaver(mem), ours), ours) == {
        "chat-2 after chat-1 learned": "茶",
        "bare get": "茶",
        "chat-3 after chat-1 was rewound": None,
        "bare get after the rewind": None,
        "chat-4 after chat-1 came back": "茶",
    }
    theirs = InMemoryStore()
    leaked = ex.scenario(ex.build(InMemorySaver(), theirs), theirs)
    assert leaked["chat-3 after chat-1 was rewound"] == "茶"  # the peer keeps the abandoned fact


def test_a_purge_reaches_the_kept_view_of_the_same_process(
    make_store: Callable[[], Store],
) -> None:
    mem = make_store()
    store = BranchmemStore(mem)
    graph = _graph(mem, store)
    graph.invoke({"fact": "喝茶"}, _cfg("t1"))
    store.put(NS, "city", {"text": "杭州"})  # a bare put (long-term, outside any run)
    assert _bare(store) == {"drink": "喝茶", "city": "杭州"}  # the view is kept now
    assert graph.invoke({}, _cfg("t2"))["seen"] == {"drink": "喝茶", "city": "杭州"}
    head = graph.get_state(_cfg("t1")).config["configurable"]["checkpoint_id"]
    at_t1 = mem.memories(at=k.checkpoint_event("t1", "", head))
    learned = [m.id for m in at_t1 if "喝茶" in m.content]
    assert learned
    mem.purge(memories=learned)
    assert _bare(store) == {"city": "杭州"} and store.get(NS, "drink") is None
    assert graph.invoke({}, _cfg("t3"))["seen"] == {"city": "杭州"}
    assert graph.invoke({}, _cfg("t2"))["seen"] == {"city": "杭州"}
    mem.purge(whole_namespace=True)
    assert _bare(store) == {} and store.list_namespaces() == []
