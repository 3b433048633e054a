"""BranchmemSession (the Agents SDK's Session on a branch): undoing a turn
hides what was derived from it, a fork sees its own history only, and an
agent run by the SDK's Runner with a scripted model (no network) recalls
memories gated at its session's head. The SDK's own session tests run in
tests/integrations/agents_sdk/."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

agents = pytest.importorskip("agents", reason="needs 'openai-agents', of the 'openai-agents' extra")
from agents import Agent, Runner  # noqa: E402
from agents.testing import ScriptedModel  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from openai.types.responses import (  # noqa: E402
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)

from branchmem import Store  # noqa: E402
from branchmem.integrations.openai_agents import BranchmemSession, memory_tool  # noqa: E402

agents.set_tracing_disabled(True)


def said(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


async def visible(session: BranchmemSession) -> list[str]:
    return sorted(m.content for m in (await session.context(window=0, k=None)).memories)


OPS = st.lists(
    st.one_of(
        st.tuples(st.just("add"), st.integers(1, 2)),
        st.tuples(st.just("pop"), st.just(0)),
        st.tuples(st.just("remember"), st.just(0)),
        st.tuples(st.just("back"), st.integers(0, 50)),
        st.tuples(st.just("clear"), st.just(0)),
    ),
    max_size=14,
)


@settings(max_examples=40, deadline=None)
@given(OPS)
def test_a_memory_is_visible_exactly_while_its_item_is_on_the_sessions_path(
    ops: list[tuple[str, int]],
) -> None:
    """Against a naive reference: a tree of items with a head; a memory is
    visible iff the item it was remembered at is on the path to the head."""

    async def run() -> None:
        s = BranchmemSession("s", Store())
        parent: dict[str, str | None] = {}
        head: str | None = None
        source: dict[str, str] = {}  # memory text -> item id
        n = 0

        def path() -> list[str]:
            out, at = [], head
            while at is not None:
                out.append(at)
                at = parent[at]
            return out[::-1]

        for op, arg in ops:
            if op == "add":
                await s.add_items([said(f"m{n + i}") for i in range(arg)])
                n += arg
                for eid in (await s.item_ids())[-arg:]:
                    parent[eid], head = head, eid
            elif op == "pop":
                item = await s.pop_item()
                if head is None:
                    assert item is None
                else:
                    head = parent[head]
            elif op == "remember" and head is not None:
                text = f"fact{len(source)}"
                await s.remember(text)
                source[text] = head
            elif op == "back" and parent:
                target = sorted(parent)[arg % len(parent)]
                await s.move_to(target)
                head = target
            elif op == "clear":
                await s.clear_session()
                head = None
            assert await s.item_ids() == path()
            on_path = set(path())
            assert await visible(s) == sorted(t for t, e in source.items() if e in on_path)

    asyncio.run(run())


def test_pop_hides_the_memory_and_it_returns_with_the_head() -> None:
    async def run() -> None:
        s = BranchmemSession("chat-1", Store())
        await s.add_items([said("我下个月搬去成都")])
        chengdu = await s.head()
        await s.remember("用户下个月搬去成都")
        assert await s.pop_item() == said("我下个月搬去成都")
        assert await visible(s) == []
        await s.add_items([said("我下个月搬去杭州")])  # a sibling of the popped item
        await s.remember("用户下个月搬去杭州")
        assert await s.get_items() == [said("我下个月搬去杭州")]
        assert await visible(s) == ["用户下个月搬去杭州"]
        assert chengdu is not None
        await s.move_to(chengdu)
        assert await visible(s) == ["用户下个月搬去成都"]

    asyncio.run(run())


def test_a_fork_sees_its_history_and_not_what_the_original_adds_later() -> None:
    async def run() -> None:
        s = BranchmemSession("chat-1", Store())
        await s.add_items([said("我喜欢茶"), said("我养了一只猫")])
        tea, cat = await s.item_ids()
        await s.remember("用户喜欢茶", at=tea)
        await s.remember("用户养猫", at=cat)
        fork = await s.fork("chat-2", at=tea)
        assert await fork.get_items() == [said("我喜欢茶")]
        assert await visible(fork) == ["用户喜欢茶"]
        await fork.add_items([said("我不喝咖啡")])
        assert len(await s.get_items()) == 2  # the original is untouched
        await fork.clear_session()
        assert await fork.get_items() == [] and await visible(fork) == []

    asyncio.run(run())


def test_one_session_across_stores_on_one_file(tmp_path: Path) -> None:
    async def run() -> None:
        a, b = Store(tmp_path / "m.db"), Store(tmp_path / "m.db")
        await BranchmemSession("chat-1", a).add_items([said("一"), said("二")])
        assert await BranchmemSession("chat-1", b).pop_item() == said("二")
        assert await BranchmemSession("chat-1", a).get_items() == [said("一")]
        a.close()
        b.close()

    asyncio.run(run())


def _call(query: str) -> ResponseFunctionToolCall:
    return ResponseFunctionToolCall(
        id="1", call_id="c1", type="function_call", name="recall_memory",
        arguments=json.dumps({"query": query}),
    )  # fmt: skip


def _text(text: str) -> ResponseOutputMessage:
    return ResponseOutputMessage(
        id="m", type="message", role="assistant", status="completed",
        content=[ResponseOutputText(type="output_text", text=text, annotations=[])],
    )  # fmt: skip


def test_a_runner_recalls_memories_gated_at_its_session_head() -> None:
    """An agent whose scripted model calls the memory tool: after the turn
    that told the fact is undone (popped), the tool no longer returns it."""

    async def run() -> list[str]:
        s = BranchmemSession("chat-1", Store())
        model = ScriptedModel()
        agent = Agent(name="assistant", model=model, tools=[memory_tool(s)])
        model.enqueue([_text("好的")])
        await Runner.run(agent, "我下个月搬去成都", session=s)
        user_turn = (await s.item_ids())[0]
        await s.remember("用户下个月搬去成都", at=user_turn)
        outputs = []
        for _ in range(2):
            model.enqueue([_call("搬去哪里")])
            model.enqueue([_text("done")])
            await Runner.run(agent, "我要搬去哪里？", session=s)
            tool_out = [i for i in await s.get_items() if i.get("type") == "function_call_output"]
            outputs.append(str(tool_out[-1]["output"]))  # type: ignore[typeddict-item]
            while len(await s.get_items()) > 0:  # undo everything: the fact's turn too
                await s.pop_item()
        return outputs

    first, second = asyncio.run(run())
    assert "成都" in first
    assert "成都" not in second and "no memory" in second


def test_the_example_recalls_only_what_its_branch_said() -> None:
    import runpy

    example = runpy.run_path(str(Path(__file__).parents[2] / "examples" / "openai_agents_undo.py"))
    answers = [answer for _, answer in asyncio.run(example["run"]())]
    assert answers == ["用户要搬去成都", "(no memory)", "用户要搬去杭州", "用户要搬去成都"]
