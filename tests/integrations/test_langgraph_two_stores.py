"""Two `Store` objects on one store (one SQLite file, one PostgreSQL schema),
as two processes: the long-term view that ``BranchmemStore`` keeps in one
follows what the other commits (a bare put, a run's put, a rewind that
abandons it, a thread deleted) at its next bare read, and its own writes
never make it read every head again (`LongTerm.build`, counted).

The memory backend is not here: a `Store()` has a backend of its own, whose
only writer is that store (`OtherWriters`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypedDict

import pytest

pytest.importorskip("langgraph")

from langgraph.graph import START, StateGraph
from langgraph.store.base import BaseStore

from branchmem import Store
from branchmem.integrations.langgraph import BranchmemSaver, BranchmemStore, _longterm
from helpers.pg_helpers import PG_URL, SKIP_REASON, Tracer
from helpers.store_pairs import store_pairs

KINDS = [
    "sqlite",
    pytest.param("postgres", marks=pytest.mark.skipif(not PG_URL, reason=SKIP_REASON)),
]
NS = ("user", "profile")
PREFS = ("user", "prefs")


class S(TypedDict, total=False):
    fact: str | None


def _learn(state: S, *, store: BaseStore) -> dict[str, Any]:
    if state.get("fact"):
        store.put(NS, "drink", {"text": state["fact"]})
    return {}


def _cfg(thread: str) -> Any:
    return {"configurable": {"thread_id": thread}}


def _first_step(graph: Any, thread: str) -> Any:
    """The thread's oldest checkpoint about to run ``learn``."""
    return [s for s in graph.get_state_history(_cfg(thread)) if s.next == ("learn",)][-1]


def _bare(store: BaseStore) -> dict[str, str]:
    return {i.key: i.value["text"] for i in store.search(NS)}


@pytest.fixture
def open_pair(tmp_path: Path) -> Iterator[Callable[[str], tuple[Store, Store]]]:
    """A factory: two stores on one fresh store of the named kind (on
    PostgreSQL a schema of their own, every statement checked to stay on one
    namespace)."""
    tracer = Tracer()
    with store_pairs(tmp_path, "bmt_lg2", trace=tracer) as factory:
        yield factory
    assert not tracer.problems, "\n".join(tracer.problems[:5])


@pytest.fixture
def builds(monkeypatch: pytest.MonkeyPatch) -> Counter[int]:
    """Whole reads of every thread's head (`LongTerm.build`), by `Store` id."""
    seen: Counter[int] = Counter()
    real = _longterm.thread_heads

    def counted(store: Store, ns: str) -> Any:
        seen[id(store)] += 1
        return real(store, ns)

    monkeypatch.setattr(_longterm, "thread_heads", counted)
    return seen


def _graph(mem: Store) -> tuple[Any, BranchmemSaver]:
    saver = BranchmemSaver(mem)
    g = StateGraph(S)
    g.add_node("learn", _learn)
    g.add_edge(START, "learn")
    return g.compile(checkpointer=saver, store=BranchmemStore(mem)), saver


@pytest.mark.parametrize("kind", KINDS)
def test_one_store_follows_the_others_puts_rewinds_and_deletes(
    open_pair: Callable[[str], tuple[Store, Store]], builds: Counter[int], kind: str
) -> None:
    a, b = open_pair(kind)
    reader = BranchmemStore(a)
    assert _bare(reader) == {} and reader.list_namespaces() == []  # built now
    assert builds[id(a)] == 1
    graph, saver = _graph(b)

    # a bare put in the other store
    BranchmemStore(b).put(PREFS, "tone", {"text": "短"})
    got = reader.get(PREFS, "tone")
    assert got is not None and got.value == {"text": "短"}
    assert reader.list_namespaces() == [PREFS]

    # a run's put there, then a rewind there that abandons it, then the way back
    graph.invoke({"fact": "喝茶"}, _cfg("t1"))
    learned = graph.get_state(_cfg("t1")).config
    assert _bare(reader) == {"drink": "喝茶"}
    assert reader.list_namespaces() == [PREFS, NS]
    graph.invoke(None, graph.update_state(_first_step(graph, "t1").config, {"fact": None}))
    assert reader.get(NS, "drink") is None  # the abandoned branch's item is gone here too
    assert _bare(reader) == {} and reader.list_namespaces() == [PREFS]
    graph.update_state(learned, {"fact": None})
    got = reader.get(NS, "drink")
    assert got is not None and got.value == {"text": "喝茶"}

    # a thread deleted there
    graph.invoke({"fact": "喝咖啡"}, _cfg("t2"))
    assert _bare(reader) == {"drink": "喝咖啡"}
    saver.delete_thread("t2")
    assert _bare(reader) == {"drink": "喝茶"}

    # and the other way round: this store's bare put reaches the other's runs
    reader.put(PREFS, "tone", {"text": "长"})
    assert [i.value for i in BranchmemStore(b).search(PREFS)] == [{"text": "长"}]


@pytest.mark.parametrize("kind", KINDS)
def test_own_writes_never_read_every_head_again(
    open_pair: Callable[[str], tuple[Store, Store]], builds: Counter[int], kind: str
) -> None:
    a, b = open_pair(kind)
    mine, _ = _graph(a)
    theirs, _ = _graph(b)
    store = BranchmemStore(a)
    mine.invoke({"fact": "喝水"}, _cfg("a1"))
    assert _bare(store) == {"drink": "喝水"}
    first = builds[id(a)]
    # runs, rewinds, bare puts and deletes of this store: followed, never rebuilt
    mine.invoke({"fact": "喝茶"}, _cfg("a2"))
    store.put(PREFS, "tone", {"text": "短"})
    assert _bare(store) == {"drink": "喝茶"}
    mine.update_state(_first_step(mine, "a2").config, {"fact": None})
    assert _bare(store) == {"drink": "喝水"}
    store.delete(PREFS, "tone")
    assert store.list_namespaces() == [NS] and store.get(PREFS, "tone") is None
    assert builds[id(a)] == first
    # one commit of the other store: one rebuild, at the next read
    theirs.invoke({"fact": "喝咖啡"}, _cfg("b1"))
    assert _bare(store) == {"drink": "喝咖啡"}
    assert _bare(store) == {"drink": "喝咖啡"}
    assert builds[id(a)] == first + 1
    store.put(PREFS, "tone", {"text": "长"})
    assert store.get(PREFS, "tone") is not None and builds[id(a)] == first + 1
