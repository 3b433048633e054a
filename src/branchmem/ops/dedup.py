"""One fact once: `add_memory` of a fact already visible under the same key writes nothing.

A new keyed record whose content equals, once normalised (`same_text`), that
of a record with the same key visible at its first source is not written;
the visible record is returned instead. Visible at that source means visible
wherever the new one would be (its sources are ancestors of every anchor that
sees the new one). Records without a key, and records given an ``id`` by
the caller (who will name it later), are written as before; the extractor's
writer checks its proposals the same way (`extract.writer`).
"""

from __future__ import annotations

import unicodedata

from ..engine import Engine
from ..model import Memory


def same_text(text: str) -> str:
    """Width, case, spacing and end punctuation folded: the text a duplicate shares."""
    t = unicodedata.normalize("NFKC", text).casefold()
    t = "".join(t.split())
    return t.rstrip("。.!！?？;；,，")


def visible_duplicate(
    engine: Engine, ns: str, content: str, key: str | None, sources: list[str], id: str | None
) -> Memory | None:
    """The visible record that a new one with these fields would repeat, if any."""
    if key is None or not sources:
        return None
    from .reads import memories

    b = engine.backend
    if id is not None:
        return None  # an id of the caller's: written under it (or a re-add, by its rules)
    if not b.event_positions(ns, {sources[0]}):
        return None  # the source has not arrived: nothing is visible there yet
    want = same_text(engine.redact(content))
    seen = memories(
        engine,
        at=sources[0],
        kind=None,
        namespace=ns,
        now=None,
        as_of=None,
        include_archived=False,
        touch=False,
    )
    for m in seen:
        if m.key == key and m.target is None and same_text(m.content) == want:
            return m
    return None
