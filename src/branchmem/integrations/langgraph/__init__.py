"""LangGraph integration: a checkpointer whose checkpoints are branchmem events, and
a store whose memories are gated by checkpoint lineage.

    from branchmem import Store
    from branchmem.integrations.langgraph import BranchmemSaver, BranchmemStore

    mem = Store("agent.db")
    graph = builder.compile(checkpointer=BranchmemSaver(mem), store=BranchmemStore(mem))

Needs the ``langgraph`` extra (``pip install 'branchmem[langgraph]'``).
"""

from .saver import BranchmemSaver
from .store import BranchmemStore

__all__ = ["BranchmemSaver", "BranchmemStore"]
