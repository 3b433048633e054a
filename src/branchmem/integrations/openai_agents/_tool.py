"""`memory_tool`: a function tool that gives an agent the memories visible at
its session's head."""

from __future__ import annotations

from typing import Any

from agents import FunctionTool, function_tool

from ._session import BranchmemSession


def memory_tool(
    session: BranchmemSession, *, name: str = "recall_memory", k: int = 5, **options: Any
) -> FunctionTool:
    """A tool ``name(query)`` that answers with the ``k`` memories best
    ranked for ``query`` among those visible at ``session``'s head (then its
    ``scope``), one a line. A memory sourced from an item the session popped,
    or that is on another branch, is never among them. ``options`` are
    `Store.context`'s search keywords."""

    async def recall(query: str) -> str:
        ctx = await session.context(query, window=0, k=k, **options)
        return "\n".join(f"- {m.content}" for m in ctx.memories) or "(no memory)"

    recall.__doc__ = (
        "Look up what is remembered about the user and this conversation.\n\n"
        "Args:\n    query: what to look for."
    )
    return function_tool(recall, name_override=name)
