"""JSON values the store keeps (meta, and what integrations keep in it), and
the text checks every stored string passes: valid UTF-8 (no lone surrogate),
no NUL, a bounded nesting depth."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from .errors import InvalidInput

_SURROGATE = re.compile("[\ud800-\udfff]").search


def check_utf8(value: str, what: str) -> str:
    """Text is stored as UTF-8, which cannot hold a lone surrogate ('\\ud800')."""
    if not value.isascii() and _SURROGATE(value):
        raise InvalidInput(
            f"{what} holds a lone surrogate (such as '\\ud800'), which UTF-8 cannot "
            "store; decode the text with errors='replace', or fix its source"
        )
    return value


MAX_DEPTH = 64
"""How deeply objects and lists may nest in a JSON value the store keeps (meta,
and what integrations keep in it): ``{}`` is one level, ``{"a": []}`` two.
Checked on every write path before anything is written; `readable_meta` keeps
reads of anything deeper, stored before the limit, from failing."""


def check_json(value: Any, what: str, levels: int = MAX_DEPTH) -> str:
    """``value`` as JSON text: JSON types only, no NaN or infinity, no lone
    surrogate, and objects and lists nested at most ``levels`` deep."""
    try:
        text = json.dumps(value, allow_nan=False, ensure_ascii=False)
    except (TypeError, ValueError) as exc:
        raise InvalidInput(
            f"{what} must be JSON-serialisable (str, numbers, bools, None, lists, dicts): {exc}"
        ) from exc
    except RecursionError:
        raise _too_deep(what, levels) from None
    # A value nests no deeper than it has brackets: most are settled by a count.
    if text.count("{") + text.count("[") > levels and nesting(value, levels) > levels:
        raise _too_deep(what, levels)
    # NUL is written as an escape (so the text holds one only if a string did,
    # or a string held a backslash before "u0000": then look at the strings).
    if "\\u0000" in text and _holds_nul(value):
        raise nul_error(f"a key or value of {what}")
    check_utf8(text, what)
    return text


def _holds_nul(value: Any) -> bool:
    todo = [value]
    while todo:
        v = todo.pop()
        if isinstance(v, str):
            if "\x00" in v:
                return True
        elif isinstance(v, dict):
            todo.extend(v.keys())
            todo.extend(v.values())
        elif isinstance(v, (list, tuple)):
            todo.extend(v)
    return False


def nul_error(what: str) -> InvalidInput:
    return InvalidInput(
        f"{what} holds a NUL character ('\\x00'), which text columns cannot store; "
        "remove it (text.replace('\\x00', '')) or fix its source"
    )


def _too_deep(what: str, levels: int) -> InvalidInput:
    return InvalidInput(
        f"{what} nests objects and lists more than {levels} levels deep, the store's "
        "limit; flatten it (a few levels are plenty)"
    )


def nesting(value: Any, stop: int = MAX_DEPTH) -> int:
    """How many levels of objects and lists ``value`` nests (0 for a scalar), counted
    without recursion; the count stops once it passes ``stop``."""
    deepest = 0
    todo: list[tuple[Any, int]] = [(value, 1)]
    while todo:
        v, level = todo.pop()
        if isinstance(v, dict):
            items: Iterable[Any] = v.values()
        elif isinstance(v, (list, tuple)):
            items = v
        else:
            continue
        if level > deepest:
            deepest = level
            if level > stop:
                break
        todo.extend((x, level + 1) for x in items if isinstance(x, (dict, list, tuple)))
    return deepest


TOO_DEEP = "meta_nested_too_deeply"
"""The one key of the meta a read returns for meta stored nested deeper than
`MAX_DEPTH` (before the limit): its value is the stored JSON text."""


def readable_meta(text: str) -> dict[str, Any]:
    """Stored meta JSON text as a dict; meta nested deeper than `MAX_DEPTH`
    (written before the limit) comes back as ``{TOO_DEEP: text}``, so that no
    reader, here or over HTTP, fails on it."""
    if len(text) <= 2 * MAX_DEPTH or text.count("{") + text.count("[") <= MAX_DEPTH:
        value: dict[str, Any] = json.loads(text)
        return value
    try:
        value = json.loads(text)
    except RecursionError:
        return {TOO_DEEP: text}
    return value if nesting(value) <= MAX_DEPTH else {TOO_DEEP: text}
