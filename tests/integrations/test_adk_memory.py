"""BranchmemMemoryService (ADK's memory service on branchmem): what a rewound
invocation said leaves memory once the session is added again, and comes
back if the head does; ADK's Runner with a scripted model (no network)
recalls through ADK's load_memory tool."""

from __future__ import annotations

import asyncio
import runpy
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("google.adk", reason="needs 'google-adk', of the 'adk' extra")
from google.adk.agents import LlmAgent
from google.adk.events.event import Event
from google.adk.memory.memory_entry import MemoryEntry
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.genai import types
from hypothesis import given, settings
from hypothesis import strategies as st

from branchmem import Store
from branchmem.integrations.adk import BranchmemMemoryService

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "adk_rewind.py"
APP, USER = "app", "u"


def _text(text: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=text)])


def _visible(service: BranchmemMemoryService, session_id: str) -> list[str]:
    """Every memory visible at the session's head (and the user's root)."""
    mem = service.store
    at = [
        mem.branch_head(service.branch_of(APP, USER, session_id)),
        f"{service.user_prefix(APP, USER)}/user",
    ]
    return sorted(m.content for m in mem.memories(at=at))


class Harness:
    """One ADK session, its invocations appended as user events, rewound
    through ADK's Runner, and added to a BranchmemMemoryService."""

    def __init__(self) -> None:
        self.sessions = InMemorySessionService()
        self.service = BranchmemMemoryService(Store())
        agent = LlmAgent(name="a", model="scripted")  # (never called: no turn is run)
        self.runner = Runner(app_name=APP, agent=agent, session_service=self.sessions,
                             memory_service=self.service)  # fmt: skip
        self.sid = ""
        self.added = 0  # how many of the session's events memory has been given

    async def start(self) -> None:
        self.sid = (await self.sessions.create_session(app_name=APP, user_id=USER)).id

    async def session(self) -> Any:
        return await self.sessions.get_session(app_name=APP, user_id=USER, session_id=self.sid)

    async def say(self, invocation: str, text: str) -> None:
        event = Event(invocation_id=invocation, author="user", content=_text(text))
        await self.sessions.append_event(await self.session(), event)

    async def rewind(self, invocation: str) -> None:
        await self.runner.rewind_async(
            user_id=USER, session_id=self.sid, rewind_before_invocation_id=invocation
        )

    async def sync(self) -> None:
        session = await self.session()
        await self.service.add_session_to_memory(session)
        self.added = len(session.events)

    async def delta(self) -> None:
        """ADK's incremental form: the events since the last add, rewinds included."""
        events = (await self.session()).events
        await self.service.add_events_to_memory(
            app_name=APP, user_id=USER, session_id=self.sid, events=events[self.added :]
        )
        self.added = len(events)


OPS = st.lists(
    st.one_of(
        st.tuples(st.just("say"), st.integers(0, 0)),
        st.tuples(st.just("rewind"), st.integers(0, 20)),
        st.tuples(st.just("sync"), st.integers(0, 0)),
        st.tuples(st.just("delta"), st.integers(0, 0)),
    ),
    max_size=12,
)


@settings(max_examples=25, deadline=None)
@given(OPS)
def test_memory_holds_exactly_the_invocations_live_at_the_last_add(
    ops: list[tuple[str, int]],
) -> None:
    """Against a naive reference: a list of live invocations, a rewind cuts it."""

    async def run() -> None:
        h = Harness()
        await h.start()
        live: list[tuple[str, str]] = []  # (invocation, text)
        synced: list[str] | None = None
        n = 0
        for op, arg in ops:
            if op == "say":
                inv, text = f"inv{n}", f"fact {n}"
                n += 1
                await h.say(inv, text)
                live.append((inv, text))
            elif op == "rewind" and live:
                cut = arg % len(live)
                await h.rewind(live[cut][0])
                live = live[:cut]
            elif op in ("sync", "delta"):
                await (h.sync() if op == "sync" else h.delta())
                synced = sorted(t for _, t in live)
            if synced is not None:
                assert _visible(h.service, h.sid) == synced

    asyncio.run(run())


def test_a_rewound_fact_returns_when_the_head_does() -> None:
    async def run() -> None:
        h = Harness()
        await h.start()
        await h.say("i1", "我喜欢茶")
        await h.say("i2", "我下个月搬去成都")
        await h.sync()
        branch = h.service.branch_of(APP, USER, h.sid)
        before = h.service.store.branch_head(branch)
        await h.rewind("i2")
        await h.sync()
        assert _visible(h.service, h.sid) == ["我喜欢茶"]
        found = await h.service.search_memory(app_name=APP, user_id=USER, query="成都")
        assert all("成都" not in str(m.content) for m in found.memories)
        h.service.store.set_branch(branch, before)  # nothing was deleted
        assert _visible(h.service, h.sid) == ["我下个月搬去成都", "我喜欢茶"]

    asyncio.run(run())


def test_direct_memories_and_their_deletion() -> None:
    async def run() -> None:
        service = BranchmemMemoryService(Store())
        entry = MemoryEntry(id="m1", content=_text("用户喜欢茶"), author="user")
        await service.add_memory(app_name=APP, user_id=USER, memories=[entry])
        found = await service.search_memory(app_name=APP, user_id=USER, query="茶")
        assert [m.id for m in found.memories] == ["m1"]
        other = await service.search_memory(app_name=APP, user_id="someone-else", query="茶")
        assert other.memories == []
        await service.delete_memory(app_name=APP, user_id=USER, memory_id="m1")
        found = await service.search_memory(app_name=APP, user_id=USER, query="茶")
        assert found.memories == []

    asyncio.run(run())


def test_the_runner_with_a_scripted_model_forgets_the_rewound_invocation() -> None:
    """The example: ADK's Runner and load_memory tool; ADK's own service keeps
    recalling the rewound invocation, branchmem's does not."""
    rows = asyncio.run(runpy.run_path(str(EXAMPLE))["run"]())
    assert [(ours, theirs) for _, ours, theirs in rows] == [
        ("我下个月搬去成都", "我下个月搬去成都"),
        ("(nothing)", "我下个月搬去成都"),
    ]


def test_a_rewind_in_a_later_delta_moves_the_head_back() -> None:
    """Events given one turn at a time: the rewind comes in a later delta than
    the invocation it rewinds, and the turn after it follows as a sibling."""

    async def run() -> None:
        h = Harness()
        await h.start()
        await h.say("i1", "我喜欢茶")
        await h.delta()
        await h.say("i2", "我下个月搬去成都")
        await h.delta()
        branch = h.service.branch_of(APP, USER, h.sid)
        told = h.service.store.branch_head(branch)
        await h.rewind("i2")
        await h.say("i3", "我下个月搬去杭州")
        await h.delta()
        assert _visible(h.service, h.sid) == ["我下个月搬去杭州", "我喜欢茶"]
        head = h.service.store.branch_head(branch)
        assert told not in [e.id for e in h.service.store.path(head)]
        found = await h.service.search_memory(app_name=APP, user_id=USER, query="成都")
        assert all("成都" not in str(m.content) for m in found.memories)

    asyncio.run(run())
