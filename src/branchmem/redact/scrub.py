"""`Scrub`: what a store with a redactor applies to everything before it is written.

The one place the store's rule lives (docs/redaction.md, "What is redacted"):

- **Text is rewritten**: content, ``meta`` (its keys and values, at any
  depth), a logged query and its filters, the actor of an audit line or head
  move. Nothing refers to these by their value later, so a redacted copy
  serves as well as the original.
- **Identifiers are refused**: event ids, parents, record ids, sources and
  targets, record keys, namespaces, branch and snapshot names. Later calls
  name them (``parent=``, ``at=``, ``sources=``, a merge by key), so a
  rewritten id would answer to nothing the caller holds, and a mask would
  make two ids one (every e-mail address is ``[邮箱]``). One holding personal
  data raises `InvalidInput` before anything is written.

A store without a redactor has no `Scrub` and pays nothing.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..errors import InvalidInput
from ..model import Event, Memory, make_event, memory_with
from .redactor import Redactor
from .values import Extra


class Scrub:
    """A `Redactor` applied the store's way (see the module docstring).

    >>> s = Scrub(Redactor())
    >>> s.value({"contact": {"li.lei@example.com": "13812345678"}})
    {'contact': {'[邮箱]': '138****5678'}}
    >>> s.identifier("user-13812345678", "event id")
    Traceback (most recent call last):
    ...
    branchmem.errors.InvalidInput: event id 'user-138****5678' holds personal data (phone); ...
    """

    __slots__ = ("redactor",)

    def __init__(self, redactor: Redactor) -> None:
        self.redactor = redactor

    def text(self, text: str) -> str:
        return self.redactor.redact(text) if text else text

    def value(self, value: Any, extra: Extra | None = None) -> Any:
        """``meta``, or a graph's state, with every string redacted, dict keys too
        (`branchmem.redact.values`); ``extra`` walks objects of more types."""
        return self.redactor._redact_value(value, extra)

    def identifier(self, value: str, what: str) -> str:
        """``value`` itself, or `InvalidInput` if it holds personal data."""
        found = self.redactor.findings(value) if value else ()
        if not found:
            return value
        kinds = ", ".join(dict.fromkeys(f.kind for f in found))
        raise InvalidInput(
            f"{what} {self.redactor.redact(value)!r} holds personal data ({kinds}); a store "
            "with a redactor refuses it rather than rewrite it, since later calls refer to it "
            "by its value: use one without personal data (a hash of it, for instance)"
        )

    def identifiers(self, values: Iterable[str], what: str) -> None:
        for v in values:
            self.identifier(v, what)

    def events(self, items: list[Event]) -> list[Event]:
        """Events as stored: ids checked, content and ``meta`` redacted."""
        self.identifiers({e.namespace for e in items}, "namespace")
        out = []
        for e in items:
            self.identifier(e.id, "event id")
            for p in e.parents:
                self.identifier(p, "parent id")
            c = self.text(e.content)
            m = self.value(e.meta) if e.meta is not None else None
            if c is not e.content or m is not e.meta:
                e = make_event(e.id, e.parents, e.role, c, e.namespace, m, e.created_at)
            out.append(e)
        return out

    def records(self, items: list[Memory]) -> list[Memory]:
        """Records as stored: ids, sources, target and key checked, content and
        ``meta`` redacted."""
        self.identifiers({m.namespace for m in items}, "namespace")
        out = []
        for m in items:
            self.identifier(m.id, "record id")
            for s in m.sources:
                self.identifier(s, "source event id")
            if m.target is not None:
                self.identifier(m.target, "target id")
            if m.key is not None:
                self.identifier(m.key, "key")
            c = self.text(m.content)
            meta = self.value(m.meta) if m.meta is not None else None
            if c is not m.content or meta is not m.meta:
                m = memory_with(m, content=c, meta=meta)
            out.append(m)
        return out
