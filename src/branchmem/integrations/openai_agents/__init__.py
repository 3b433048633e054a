"""OpenAI Agents SDK integration: a `Session` whose items are events on a
branch, so that undoing a turn (``pop_item``) or branching from an old item
retracts what was derived from the abandoned items.

    from branchmem import Store
    from branchmem.integrations.openai_agents import BranchmemSession, memory_tool

    mem = Store("agent.db")
    session = BranchmemSession("chat-1", mem)
    agent = Agent(name="assistant", tools=[memory_tool(session)])
    await Runner.run(agent, "hello", session=session)

Needs the ``openai-agents`` extra (``pip install 'branchmem[openai-agents]'``).
"""

from ._session import BranchmemSession
from ._tool import memory_tool

__all__ = ["BranchmemSession", "memory_tool"]
