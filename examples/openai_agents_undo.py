"""Undo a turn in an OpenAI Agents SDK session, and branch from an old one,
with branchmem's session.

An agent (the SDK's `Runner`, with the SDK's scripted model: no network, no
model) has a tool that recalls memories. The user says they move to 成都;
branchmem's extractor derives a memory from that message. The user then
undoes the turn (``pop_item`` twice: the message and the reply) and says
杭州 instead. Recalled at each step, and from a session forked from the first
turn ("branch from here"):

    python examples/openai_agents_undo.py

needs ``pip install 'branchmem[openai-agents]'``; no model, no network.
"""

from __future__ import annotations

import asyncio
import json
import unicodedata

from branchmem import Store

try:  # the openai-agents extra; without it, one line saying so rather than a traceback
    from agents import Agent, Runner, set_tracing_disabled
    from agents.testing import ScriptedModel
    from openai.types.responses import (
        ResponseFunctionToolCall,
        ResponseOutputMessage,
        ResponseOutputText,
    )

    from branchmem.integrations.openai_agents import BranchmemSession, memory_tool
except ModuleNotFoundError as exc:
    raise SystemExit(
        f"{exc.name} is not installed: this example needs pip install 'branchmem[openai-agents]'"
    ) from None


def reply(text: str) -> ResponseOutputMessage:
    """What the scripted model answers."""
    return ResponseOutputMessage(
        id="msg", type="message", role="assistant", status="completed",
        content=[ResponseOutputText(type="output_text", text=text, annotations=[])],
    )  # fmt: skip


def call_recall(query: str) -> ResponseFunctionToolCall:
    """The scripted model calling the memory tool."""
    return ResponseFunctionToolCall(
        id="call", call_id="call-1", type="function_call", name="recall_memory",
        arguments=json.dumps({"query": query}),
    )  # fmt: skip


async def say(mem: Store, session: BranchmemSession, model: ScriptedModel, text: str) -> None:
    """One turn; branchmem's extractor derives memories from the user's message."""
    agent = Agent(name="assistant", model=model, tools=[memory_tool(session)])
    model.enqueue([reply("好的")])
    await Runner.run(agent, text, session=session)
    user_turn = (await session.item_ids())[-2]  # the message, before the reply
    await asyncio.to_thread(mem.extract, at=user_turn)


async def recall(session: BranchmemSession, model: ScriptedModel) -> str:
    """Ask the agent; its scripted model calls the memory tool. What the tool
    answered is left out of the session (popped), so each ask sees the same."""
    agent = Agent(name="assistant", model=model, tools=[memory_tool(session)])
    model.enqueue([call_recall("搬去哪里")])
    model.enqueue([reply("…")])
    before = len(await session.get_items())
    await Runner.run(agent, "我要搬去哪里？", session=session)
    items = await session.get_items()
    answer = next(str(i["output"]) for i in items if i.get("type") == "function_call_output")
    while len(await session.get_items()) > before:
        await session.pop_item()
    return answer.removeprefix("- ")


async def run() -> list[tuple[str, str]]:
    set_tracing_disabled(True)
    mem = Store()
    model = ScriptedModel()
    chat = BranchmemSession("chat-1", mem)
    rows = []
    await say(mem, chat, model, "我下个月搬去成都")
    first_turn = (await chat.item_ids())[0]
    rows.append(("told 成都", await recall(chat, model)))
    await chat.pop_item()  # the reply
    await chat.pop_item()  # the message: the turn is undone
    rows.append(("turn undone", await recall(chat, model)))
    await say(mem, chat, model, "我下个月搬去杭州")
    rows.append(("told 杭州 instead", await recall(chat, model)))
    fork = await chat.fork("chat-2", at=first_turn)
    rows.append(("chat-2, forked from 成都", await recall(fork, model)))
    mem.close()
    return rows


def pad(text: str, width: int) -> str:
    """``text`` padded to ``width`` terminal columns (a CJK character takes two)."""
    used = sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)
    return text + " " * max(width - used, 2)


def main() -> None:
    for label, answer in asyncio.run(run()):
        print(pad(label, 28) + answer)


if __name__ == "__main__":
    main()
