"""Validation errors of a body that may take one of several shapes (one event
or a batch of them): only those of the shape the body is closest to.

Pydantic reports a failed union once per member (``body.EventIn.id``,
``body.EventsIn.events``, ...), which tells a caller who sent ``{"id": 123}``
about a batch they never meant. The closest shape is the one with the fewest
structural misses (a field missing, or one it does not have); a tie keeps
every shape's errors.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

_STRUCTURAL = {"missing", "extra_forbidden"}


def closest_shape(errors: Sequence[Any]) -> list[Any]:
    """``errors`` (pydantic's dicts) less those of the shapes the body is farther from.

    >>> errs = [
    ...     {"loc": ("body", "EventIn", "id"), "type": "string_type"},
    ...     {"loc": ("body", "EventsIn", "events"), "type": "missing"},
    ...     {"loc": ("body", "EventsIn", "id"), "type": "extra_forbidden"},
    ... ]
    >>> [e["loc"][1] for e in closest_shape(errs)]
    ['EventIn']
    """
    shapes: dict[str, list[Any]] = {}
    for e in errors:
        loc = tuple(e.get("loc", ()))
        if len(loc) >= 2 and loc[0] == "body" and isinstance(loc[1], str) and loc[1][:1].isupper():
            shapes.setdefault(loc[1], []).append(e)
    if len(shapes) < 2:
        return list(errors)

    def misses(name: str) -> int:
        # Only the body's own fields: a nested miss is a wrong value, not a wrong shape.
        return sum(
            1 for e in shapes[name] if e.get("type") in _STRUCTURAL and len(e.get("loc", ())) == 3
        )

    best = min(misses(n) for n in shapes)
    keep = {n for n in shapes if misses(n) == best}
    drop = set(shapes) - keep
    return [e for e in errors if not (len(e.get("loc", ())) >= 2 and e["loc"][1] in drop)]
