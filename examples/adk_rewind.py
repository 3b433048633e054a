"""Rewind an invocation in a Google ADK session, with branchmem's memory
service and with ADK's InMemoryMemoryService.

An agent (ADK's `Runner`, with a scripted model: no network, no model) has
ADK's `load_memory` tool. In session 1 the user says they move to 成都, and
the turn's events are added to memory as they come (`add_events_to_memory`,
ADK's incremental form). Session 2 asks where they move. Then session 1 is
rewound to before that invocation (the user took it back) and the events
since the last add, the rewind among them, are added; session 3 asks again:

    python examples/adk_rewind.py

needs ``pip install 'branchmem[adk]'``; no model, no network.
"""

from __future__ import annotations

import asyncio
import unicodedata
from collections.abc import AsyncGenerator
from typing import Any

from branchmem import Store

try:  # the adk extra; without it, one line saying so rather than a traceback
    from google.adk.agents import LlmAgent
    from google.adk.memory import BaseMemoryService, InMemoryMemoryService
    from google.adk.models.base_llm import BaseLlm
    from google.adk.models.llm_request import LlmRequest
    from google.adk.models.llm_response import LlmResponse
    from google.adk.runners import Runner
    from google.adk.sessions import InMemorySessionService
    from google.adk.tools import load_memory
    from google.genai import types
    from pydantic import Field

    from branchmem.integrations.adk import BranchmemMemoryService
except ModuleNotFoundError as exc:
    raise SystemExit(
        f"{exc.name} is not installed: this example needs pip install 'branchmem[adk]'"
    ) from None

APP, USER = "movers", "user-42"


class ScriptedLlm(BaseLlm):
    """A model that answers with the responses queued in ``script``, in order."""

    model: str = "scripted"
    script: list[LlmResponse] = Field(default_factory=list)

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        yield self.script.pop(0)


USAGE = types.GenerateContentResponseUsageMetadata(prompt_token_count=0, total_token_count=0)


def says(text: str) -> LlmResponse:
    content = types.Content(role="model", parts=[types.Part(text=text)])
    return LlmResponse(content=content, usage_metadata=USAGE)


def calls_load_memory(query: str) -> LlmResponse:
    call = types.FunctionCall(name="load_memory", args={"query": query})
    content = types.Content(role="model", parts=[types.Part(function_call=call)])
    return LlmResponse(content=content, usage_metadata=USAGE)


async def turn(runner: Runner, session_id: str, text: str) -> list[Any]:
    message = types.Content(role="user", parts=[types.Part(text=text)])
    return [ev async for ev in runner.run_async(user_id=USER, session_id=session_id,
                                                new_message=message)]  # fmt: skip


def recalled(events: list[Any]) -> str:
    """What load_memory gave the agent: the memories' texts that mention 搬."""
    texts = [
        part.text
        for ev in events
        for p in (ev.content.parts if ev.content else [])
        if p.function_response is not None
        for m in (p.function_response.response or {})["result"].memories
        for part in (m.content.parts or [])
        if part.text and "搬" in part.text
    ]
    return "、".join(texts) or "(nothing)"


async def scenario(memory: BaseMemoryService) -> list[str]:
    llm = ScriptedLlm()
    agent = LlmAgent(name="assistant", model=llm, tools=[load_memory])
    sessions = InMemorySessionService()
    runner = Runner(app_name=APP, agent=agent, session_service=sessions, memory_service=memory)

    async def ask() -> str:
        session = await sessions.create_session(app_name=APP, user_id=USER)
        llm.script = [calls_load_memory("搬去"), says("…")]
        return recalled(await turn(runner, session.id, "我要搬去哪里？"))

    first = await sessions.create_session(app_name=APP, user_id=USER)
    added = 0  # how many of session 1's events memory has been given

    async def add_new_events() -> None:
        nonlocal added
        session = await sessions.get_session(app_name=APP, user_id=USER, session_id=first.id)
        events = session.events if session is not None else []
        await memory.add_events_to_memory(
            app_name=APP, user_id=USER, session_id=first.id, events=events[added:]
        )
        added = len(events)

    llm.script = [says("好的")]
    told = await turn(runner, first.id, "我下个月搬去成都")
    await add_new_events()
    rows = [await ask()]
    await runner.rewind_async(
        user_id=USER, session_id=first.id, rewind_before_invocation_id=told[0].invocation_id
    )
    await add_new_events()
    rows.append(await ask())
    return rows


def pad(text: str, width: int) -> str:
    """``text`` padded to ``width`` terminal columns (a CJK character takes two)."""
    used = sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)
    return text + " " * max(width - used, 2)


async def run() -> list[tuple[str, str, str]]:
    mem = Store()
    ours = await scenario(BranchmemMemoryService(mem))
    theirs = await scenario(InMemoryMemoryService())
    mem.close()
    labels = ["session 2, after session 1 told", "session 3, after the rewind"]
    return list(zip(labels, ours, theirs, strict=True))


def main() -> None:
    print(pad("", 34) + pad("BranchmemMemoryService", 26) + "InMemoryMemoryService")
    for label, ours, theirs in asyncio.run(run()):
        print(pad(label, 34) + pad(ours, 26) + theirs)


if __name__ == "__main__":
    main()
