"""Bad calls, each with the error it must raise, and the store they run on.

`seeded` writes a small tree, a memory, a retraction and a branch; each entry
of `BAD_CALLS` is ``(label, error type, call)``, the call made on that store.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from ..errors import (
    ConflictingEvent,
    ConflictingRecord,
    CycleError,
    InvalidInput,
    NotFound,
    UnknownAnchor,
    UnknownMemory,
)
from ..store import Store

PROBE_IDS = ["e1", "e2", "e3", "x", "y", "z", "bad", "main"]


def seeded(store: Store) -> dict[str, str]:
    store.add_events(
        [
            {"id": "e1", "content": "你好"},
            {"id": "e2", "parent": "e1", "content": "我下个月搬去成都。"},
            {"id": "e3", "parent": "e1", "content": "我下个月搬去杭州。"},
            {"id": "y", "parent": "x"},  # waiting for x
        ]
    )
    m = store.add_memory("成都", sources=["e2"], id="m1", key="city")
    r = store.retract("m1", sources=["e3"], id="r1")
    store.set_branch("main", "e2")
    return {"memory": m.id, "retraction": r.id}


BAD_CALLS: list[tuple[str, type[Exception], Callable[[Store], Any]]] = [
    ("empty event id", InvalidInput, lambda s: s.add_event("")),
    ("blank event id", InvalidInput, lambda s: s.add_event("   ")),
    ("non-string event id", InvalidInput, lambda s: s.add_event(7)),  # type: ignore[arg-type]
    ("control char in id", InvalidInput, lambda s: s.add_event("a\nb")),
    ("non-string parent", InvalidInput, lambda s: s.add_event("z", parent=3)),  # type: ignore[arg-type]
    ("empty parent id", InvalidInput, lambda s: s.add_event("z", parent="")),
    ("repeated parent", InvalidInput, lambda s: s.add_event("z", parent=["e1", "e1"])),
    ("self parent", CycleError, lambda s: s.add_event("z", parent="z")),
    ("two-event cycle", CycleError, lambda s: s.add_event("x", parent="y")),
    (
        "longer cycle in one batch",
        CycleError,
        lambda s: s.add_events(
            [{"id": "p", "parent": "q"}, {"id": "q", "parent": "x"}, {"id": "x", "parent": "p"}]
        ),
    ),
    ("bad role", InvalidInput, lambda s: s.add_event("z", role="robot")),
    ("non-string content", InvalidInput, lambda s: s.add_event("z", content=5)),  # type: ignore[arg-type]
    ("unknown event field", InvalidInput, lambda s: s.add_events([{"id": "z", "text": "hi"}])),
    ("not an event", InvalidInput, lambda s: s.add_events(["z"])),  # type: ignore[list-item]
    ("meta not JSON", InvalidInput, lambda s: s.add_event("z", meta={"f": object()})),
    ("meta NaN", InvalidInput, lambda s: s.add_event("z", meta={"f": math.nan})),
    ("meta not a dict", InvalidInput, lambda s: s.add_event("z", meta=[1])),  # type: ignore[arg-type]
    (
        "conflicting content",
        ConflictingEvent,
        lambda s: s.add_event("e2", parent="e1", content="变了"),
    ),
    (
        "conflicting parent",
        ConflictingEvent,
        lambda s: s.add_event("e2", parent="e3", content="我下个月搬去成都。"),
    ),
    (
        "bad item late in a batch",
        InvalidInput,
        lambda s: s.add_events(
            [{"id": "z", "parent": "e1"}, {"id": "z2", "parent": "z"}, {"id": "", "parent": "z"}]
        ),
    ),
    (
        "conflict late in a batch",
        ConflictingEvent,
        lambda s: s.add_events([{"id": "z", "parent": "e1"}, {"id": "z", "parent": "e2"}]),
    ),
    ("NUL in content", InvalidInput, lambda s: s.add_event("z", parent="e1", content="a\x00")),
    (
        "NUL late in a COPY-sized batch",
        InvalidInput,
        lambda s: s.add_events(
            [{"id": f"z{i}", "content": "a\x00" if i == 599 else "ok"} for i in range(600)]
        ),
    ),
    ("NUL in a memory", InvalidInput, lambda s: s.add_memory("\x00", sources=["e1"])),
    ("NUL in a supersede", InvalidInput, lambda s: s.supersede("m1", "\x00", sources=["e1"])),
    ("unknown kind", InvalidInput, lambda s: s.add_memory("x", sources=["e1"], kind="fact")),
    (
        "retraction kind",
        InvalidInput,
        lambda s: s.add_memory("x", sources=["e1"], kind="retraction"),
    ),
    ("empty sources", InvalidInput, lambda s: s.add_memory("x", sources=[])),
    ("sources as a string", InvalidInput, lambda s: s.add_memory("x", sources="e1")),
    ("empty source id", InvalidInput, lambda s: s.add_memory("x", sources=["e1", ""])),
    ("importance above 1", InvalidInput, lambda s: s.add_memory("x", sources=["e1"], importance=2)),
    (
        "importance NaN",
        InvalidInput,
        lambda s: s.add_memory("x", sources=["e1"], importance=math.nan),
    ),
    ("importance bool", InvalidInput, lambda s: s.add_memory("x", sources=["e1"], importance=True)),
    (
        "memory meta not JSON",
        InvalidInput,
        lambda s: s.add_memory("x", sources=["e1"], meta={"s": {1, 2}}),
    ),
    (
        "conflicting record",
        ConflictingRecord,
        lambda s: s.add_memory("杭州", sources=["e2"], id="m1"),
    ),
    (
        "unknown memory field",
        InvalidInput,
        lambda s: s.add_memories([{"content": "x", "src": ["e1"]}]),
    ),
    (
        "bad memory late in a batch",
        InvalidInput,
        lambda s: s.add_memories(
            [{"content": "ok", "sources": ["e1"]}, {"content": "bad", "sources": []}]
        ),
    ),
    ("retract unknown", UnknownMemory, lambda s: s.retract("nope", sources=["e1"])),
    ("retract a retraction", InvalidInput, lambda s: s.retract("r1", sources=["e1"])),
    ("retract with no sources", InvalidInput, lambda s: s.retract("m1", sources=[])),
    ("supersede unknown", UnknownMemory, lambda s: s.supersede("nope", "x", sources=["e1"])),
    (
        "supersede bad field",
        InvalidInput,
        lambda s: s.supersede("m1", "x", sources=["e1"], colour=1),
    ),
    (
        "supersede bad kind",
        InvalidInput,
        lambda s: s.supersede("m1", "x", sources=["e1"], kind="no"),
    ),
    ("anchor not a string", InvalidInput, lambda s: s.memories(at=5)),  # type: ignore[arg-type]
    ("unknown anchor", UnknownAnchor, lambda s: s.memories(at="nowhere")),
    ("visible of unknown", UnknownMemory, lambda s: s.visible("nope", at="e1")),
    ("memories unknown kind", InvalidInput, lambda s: s.memories(at="e1", kind="facts")),
    ("empty namespace", InvalidInput, lambda s: s.add_event("z", namespace="")),
    ("branch on unknown event", NotFound, lambda s: s.set_branch("b", "nope")),
    ("branch named like an event", InvalidInput, lambda s: s.set_branch("e1", "e2")),
    ("event named like a branch", InvalidInput, lambda s: s.add_event("main", parent="e1")),
]
