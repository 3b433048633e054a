"""Google ADK integration: a memory service whose memories are gated by each
session's lineage, so that what a rewound invocation said leaves memory.

    from branchmem import Store
    from branchmem.integrations.adk import BranchmemMemoryService

    memory = BranchmemMemoryService(Store("agent.db"))
    runner = Runner(app_name="app", agent=agent, session_service=sessions,
                    memory_service=memory)

Needs the ``adk`` extra (``pip install 'branchmem[adk]'``).
"""

from ._memory import BranchmemMemoryService

__all__ = ["BranchmemMemoryService"]
