"""Redaction of structured values: every string in a value, dict keys included.

`redact_value` walks what a store keeps as ``meta`` (JSON: dicts, lists,
strings, numbers) and what a graph keeps as state (those, plus tuples, sets,
dataclasses and models with ``model_copy``), and returns it with each string
passed through a text redaction. What holds nothing to redact comes back as
the same object, so an unchanged value costs no copy.

- A dict key is redacted like any string. Two keys that redact to the same
  text (two e-mail addresses both masked as ``[邮箱]``) are kept apart: in
  the sorted order of the original keys, the first takes the redacted key,
  the next ``<key>#2``, then ``<key>#3``; the same dict always gives the same
  keys, in whatever order its keys came.
- A whole number is checked as its decimal text (a phone number kept as an
  int); if that text changes, the redacted text replaces the number.
- Floats, bools, ``None``, bytes and objects of other types are kept as they
  are (a float cannot hold a card number exactly, and bytes are not text).
"""

from __future__ import annotations

import copy
import dataclasses
from collections import deque
from collections.abc import Callable
from typing import Any

from ..errors import InvalidInput

Text = Callable[[str], str]
Extra = Callable[[Any, Callable[[Any], Any]], Any]
"""A walker for one more type: ``extra(obj, walk)`` returns ``obj`` redacted
(calling ``walk`` on what it holds), or ``obj`` itself to leave it alone."""


def redact_value(value: Any, text: Text, *, int_floor: int = 0, extra: Extra | None = None) -> Any:
    """``value`` with every string in it (keys too) passed through ``text``.

    Whole numbers whose magnitude is below ``int_floor`` are not checked (the
    built-in detectors find nothing shorter than 11 digits).

    >>> mask = lambda s: s.replace("a@b.cn", "[邮箱]")
    >>> redact_value({"to": "a@b.cn", "a@b.cn": [1, "a@b.cn"], "[邮箱]": 0}, mask)
    {'to': '[邮箱]', '[邮箱]#2': [1, '[邮箱]'], '[邮箱]': 0}
    """
    try:
        return _Walk(text, int_floor, extra).value(value)
    except RecursionError:
        raise InvalidInput(
            "a value is nested too deeply to redact; flatten it (a few levels are plenty)"
        ) from None


class _Walk:
    __slots__ = ("extra", "floor", "text")

    def __init__(self, text: Text, floor: int, extra: Extra | None) -> None:
        self.text = text
        self.floor = floor
        self.extra = extra

    def value(self, v: Any) -> Any:
        t = type(v)
        if t is str:
            return self.text(v) if v else v
        if t is dict:
            return self.mapping(v)
        if t is list:
            return self.items(v, list)
        if v is None or t is float or t is bool:
            return v
        if t is int:
            return self.whole(v)
        if t is tuple:
            return self.items(v, tuple)
        if isinstance(v, tuple) and hasattr(t, "_fields"):  # a namedtuple
            out = [self.value(x) for x in v]
            return v if _same(out, v) else t._make(out)
        if t is set or t is frozenset:
            out = [self.value(x) for x in v]
            return v if _same(out, v) else t(out)
        if t is deque:
            out = [self.value(x) for x in v]
            return v if _same(out, v) else deque(out, v.maxlen)
        if dataclasses.is_dataclass(v) and not isinstance(v, type):
            return self.fields(v)
        fields = getattr(t, "model_fields", None)
        if isinstance(fields, dict) and callable(getattr(v, "model_copy", None)):
            return self.model(v, fields)
        if self.extra is not None:
            return self.extra(v, self.value)
        return v

    def whole(self, v: int) -> int | str:
        if -self.floor < v < self.floor:
            return v
        s = str(v)
        r = self.text(s)
        return v if r == s else r

    def items(self, v: Any, kind: type) -> Any:
        out = [self.value(x) for x in v]
        return v if _same(out, v) else kind(out)

    def key(self, k: Any) -> Any:
        if type(k) is str:
            return self.text(k) if k else k
        if type(k) is int:
            return self.whole(k)
        return k

    def mapping(self, d: dict[Any, Any]) -> dict[Any, Any]:
        changed = False
        keys = []
        vals = []
        for k, x in d.items():
            nk, nx = self.key(k), self.value(x)
            changed = changed or nk is not k or nx is not x
            keys.append(nk)
            vals.append(nx)
        if not changed:
            return d
        if any(nk is not k for nk, k in zip(keys, d, strict=True)):
            keys = _apart(list(d), keys)
        return dict(zip(keys, vals, strict=True))

    def fields(self, v: Any) -> Any:
        changes = {}
        for f in dataclasses.fields(v):
            old = getattr(v, f.name, _MISSING)
            if old is _MISSING:
                continue
            new = self.value(old)
            if new is not old:
                changes[f.name] = new
        if not changes:
            return v
        out = copy.copy(v)
        for name, new in changes.items():
            object.__setattr__(out, name, new)  # frozen dataclasses too
        return out

    def model(self, v: Any, fields: dict[str, Any]) -> Any:
        update = {}
        extra = getattr(v, "__pydantic_extra__", None) or {}
        for name in [*fields, *extra]:
            old = getattr(v, name, _MISSING)
            if old is _MISSING:
                continue
            new = self.value(old)
            if new is not old:
                update[name] = new
        return v.model_copy(update=update) if update else v


_MISSING = object()


def _same(out: list[Any], old: Any) -> bool:
    return all(a is b for a, b in zip(out, old, strict=True))


def _apart(old: list[Any], new: list[Any]) -> list[Any]:
    """Redacted keys made distinct: a key the redaction left alone keeps its
    name; of several that redact to one, the first in sorted order of the
    original keys takes it, the others ``#2``, ``#3``, ... (see the module)."""
    taken = {nk for k, nk in zip(old, new, strict=True) if nk == k}
    order = sorted(
        (i for i, (k, nk) in enumerate(zip(old, new, strict=True)) if nk != k),
        key=lambda i: (type(old[i]).__name__, str(old[i])),
    )
    out = list(new)
    for i in order:
        name, n = new[i], 1
        while name in taken:
            n += 1
            name = f"{new[i]}#{n}"
        taken.add(name)
        out[i] = name
    return out
