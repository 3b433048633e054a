"""`AsyncStore`: every method of `Store`, awaitable; many tasks on one store end
where the same calls made one by one on a `Store` end; the loop never waits."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from branchmem import AsyncStore, Store, UnknownEvent
from branchmem.testing.strategies import History, histories


def public(cls: type) -> set[str]:
    return {n for n in dir(cls) if not n.startswith("_")}


def test_every_method_of_store_is_an_awaitable_twin() -> None:
    assert public(AsyncStore) == public(Store) | {"store"}
    for name in public(Store) - {"redactor"}:
        mine, theirs = getattr(AsyncStore, name), getattr(Store, name)
        assert inspect.iscoroutinefunction(mine), name
        if name != "close":
            assert mine.__wrapped__ is theirs, name
            assert list(inspect.signature(mine).parameters) == list(
                inspect.signature(theirs).parameters
            ), name


def test_errors_and_results_are_the_stores_own(tmp_path: Path) -> None:
    async def main() -> None:
        async with AsyncStore(tmp_path / "mem.db") as store:
            e = await store.add_event("e1", content="你好")
            assert e == await store.get_event("e1")
            with pytest.raises(UnknownEvent):
                await store.get_event("nowhere")
            assert store.redactor is None

    asyncio.run(main())
    with Store(tmp_path / "mem.db") as s:  # closed, and written to the file
        assert s.get_event("e1").content == "你好"


def test_a_store_or_a_path_not_both() -> None:
    with Store() as s, pytest.raises(TypeError, match="not both"):
        AsyncStore(":memory:", store=s)


def test_the_event_loop_runs_while_sqlite_writes(tmp_path: Path) -> None:
    """A ticker task keeps ticking while 200 writes from 20 tasks go to one file."""

    async def main() -> tuple[int, int]:
        ticks = 0
        done = asyncio.Event()

        async def ticker() -> None:
            nonlocal ticks
            while not done.is_set():
                ticks += 1
                await asyncio.sleep(0)

        async with AsyncStore(tmp_path / "mem.db") as store:
            await store.add_event("root")
            tick = asyncio.create_task(ticker())

            async def writer(t: int) -> None:
                for i in range(10):
                    await store.add_event(f"t{t}-{i}", parent="root", content=f"{t} {i}")

            await asyncio.gather(*(writer(t) for t in range(20)))
            done.set()
            await tick
            return ticks, len(await store.events(limit=1000))

    ticks, n = asyncio.run(main())
    assert n == 201
    assert ticks > 20  # the loop ran between the writes, not only before and after


Call = tuple[str, tuple[Any, ...], dict[str, Any]]


def calls_of(h: History) -> list[Call]:
    """The history as calls: events in arrival order, each record op after its
    ``after`` events, and a read of every event's memories after each write."""
    out: list[Call] = []
    ops = list(h.ops)
    for n, e in enumerate([*h.arrival, None]):
        while ops and ops[0].after <= n:
            op = ops.pop(0)
            srcs = list(op.sources)
            if op.kind == "add":
                out.append(("add_memory", (f"fact {op.id}",), {"sources": srcs, "id": op.id}))
            elif op.kind == "retract":
                out.append(("retract", (op.target,), {"sources": srcs, "id": op.extra_id}))
            else:
                args = (op.target, f"fact {op.id}")
                out.append(("supersede", args, {"sources": srcs, "id": op.id}))
            out.append(("memories", (), {"at": srcs[0]}))
        if e is not None:
            out.append(("add_event", (e,), {"parent": list(h.parents[e]), "content": e}))
            out.append(("memories", (), {"at": e}))
    return out


def plain(x: Any) -> Any:
    """A result or an exception, as values both stores give alike."""
    if isinstance(x, BaseException):
        return type(x).__name__
    if isinstance(x, list):
        return [m.id for m in x]
    return x.id


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(histories(max_events=10, max_ops=8))
def test_many_tasks_end_where_one_by_one_ends(h: History) -> None:
    calls = calls_of(h)
    seq: list[Any] = []
    with Store() as store:
        for name, args, kwargs in calls:
            try:
                seq.append(plain(getattr(store, name)(*args, **kwargs)))
            except Exception as exc:
                seq.append(plain(exc))
        final = {e: plain(store.memories(at=e)) for e in h.parents}

    async def main() -> tuple[list[Any], dict[str, Any]]:
        async with AsyncStore() as store:
            each: list[Awaitable[Any]] = [getattr(store, n)(*a, **k) for n, a, k in calls]
            got = await asyncio.gather(*each, return_exceptions=True)
            ends = {e: plain(await store.memories(at=e)) for e in h.parents}
            return [plain(x) for x in got], ends

    concurrent, ends = asyncio.run(main())
    assert concurrent == seq
    assert ends == final


def test_gathered_calls_on_every_backend(make_store: Callable[[], Store]) -> None:
    """Ten tasks writing a chain each, and reading it back, on one store."""

    async def main() -> list[list[str]]:
        async with AsyncStore(store=make_store()) as store:

            async def chain(t: int) -> list[str]:
                parent = None
                for i in range(5):
                    await store.add_event(f"t{t}-{i}", parent=parent, content=f"{t} {i}")
                    parent = f"t{t}-{i}"
                await store.add_memory(f"fact {t}", sources=[f"t{t}-2"], id=f"m{t}")
                return [m.id for m in await store.memories(at=parent)]

            return await asyncio.gather(*(chain(t) for t in range(10)))

    assert asyncio.run(main()) == [[f"m{t}"] for t in range(10)]
