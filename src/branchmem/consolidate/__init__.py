"""Consolidation that keeps its evidence: merges, contradictions and profiles
written as gated records sourced from all of their inputs (`writer`), decided
by rules and, where an embedder is given, vectors (`plan`).

>>> from branchmem import Store
>>> store = Store()
>>> _ = store.add_events([{"id": "e1", "content": "x"}, {"id": "e2", "parent": "e1"}])
>>> _ = store.add_memories([{"content": "用户对花生过敏", "sources": ["e1"]},
...                         {"content": "用户对花生过敏。", "sources": ["e2"]}])
>>> done = store.consolidate(at="e2")
>>> [(m.content, m.sources) for m in done.merged]
[('用户对花生过敏。', ('e1', 'e2'))]
>>> store.consolidate(at="e2").written
0
"""

from .writer import PROFILE_KEY, Consolidation, Profile, consolidate, profile

__all__ = ["PROFILE_KEY", "Consolidation", "Profile", "consolidate", "profile"]
