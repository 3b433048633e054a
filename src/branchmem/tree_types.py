"""What the tree reads return: a page of events, an event's versions, a diff."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from .model import Event, Memory

VERSION_OF = "version_of"
"""The ``meta`` key by which a root names the conversation's first root: an
edit of a conversation's first message is a root with
``meta={"version_of": first_root_id}``. Other roots are separate
conversations (``versions`` 1/1)."""


@dataclass(frozen=True, slots=True)
class EventPage:
    """A page of `Store.children` or `Store.siblings`, in arrival order.

    ``cursor`` is None on the last page; otherwise pass it back as
    ``cursor=`` for the next one. A cursor belongs to the question that gave
    it (children of one event, say) and is opaque. The page iterates over its
    events, and ``len()`` counts them.

    >>> page = EventPage((Event("a"), Event("b")))
    >>> [e.id for e in page], len(page)
    (['a', 'b'], 2)
    """

    events: tuple[Event, ...]
    cursor: str | None = None

    def __iter__(self) -> Iterator[Event]:
        return iter(self.events)

    def __len__(self) -> int:
        return len(self.events)

    def to_dict(self) -> dict[str, Any]:
        return {"events": [e.to_dict() for e in self.events], "cursor": self.cursor}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> EventPage:
        evs = tuple(Event.from_dict(e) for e in data.get("events", []))
        return cls(evs, data.get("cursor"))


@dataclass(frozen=True, slots=True)
class Versions:
    """Where an event stands among its versions (its siblings: the events with
    the same parents, in arrival order), for a chat UI's "version 2 of 3".

    ``position`` counts from 1; ``previous`` and ``next`` are the neighbouring
    versions' ids (None at either end).

    >>> Versions("e2b", 2, 3, "e2", "e2c")
    Versions(id='e2b', position=2, count=3, previous='e2', next='e2c')
    """

    id: str
    position: int
    count: int
    previous: str | None = None
    next: str | None = None

    def __str__(self) -> str:
        return f"{self.position}/{self.count}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "position": self.position,
            "count": self.count,
            "previous": self.previous,
            "next": self.next,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Versions:
        return cls(
            data["id"],
            int(data["position"]),
            int(data["count"]),
            data.get("previous"),
            data.get("next"),
        )


@dataclass(frozen=True, slots=True)
class Diff:
    """What changes if the anchor moves from ``a`` to ``b`` (`Store.diff`).

    ``only_a`` holds the memories visible at ``a`` and not at ``b``: what
    disappears; ``only_b`` the reverse: what appears. Both are gated reads
    (oldest first), so neither holds anything hidden at its own anchor.
    ``fork_point`` is the nearest event that both anchors descend from (their
    first anchors, for scope chains; below a merge, one of the nearest), or
    None when they share no ancestor. ``same`` counts the memories both see.
    """

    a: str | tuple[str, ...]
    b: str | tuple[str, ...]
    fork_point: str | None
    only_a: tuple[Memory, ...]
    only_b: tuple[Memory, ...]
    same: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "a": self.a if isinstance(self.a, str) else list(self.a),
            "b": self.b if isinstance(self.b, str) else list(self.b),
            "fork_point": self.fork_point,
            "only_a": [m.to_dict() for m in self.only_a],
            "only_b": [m.to_dict() for m in self.only_b],
            "same": self.same,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Diff:
        def side(v: Any) -> str | tuple[str, ...]:
            return v if isinstance(v, str) else tuple(v)

        return cls(
            side(data["a"]),
            side(data["b"]),
            data.get("fork_point"),
            tuple(Memory.from_dict(m) for m in data.get("only_a", [])),
            tuple(Memory.from_dict(m) for m in data.get("only_b", [])),
            int(data.get("same", 0)),
        )
