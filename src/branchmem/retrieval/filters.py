"""``search(..., filter=)``: conditions on record fields, as LangGraph's store writes them.

A filter is a dict of ``field -> condition``; every condition must hold.
A condition is a plain value (equality) or a dict of operators, all of
which must hold: ``$eq $ne $gt $gte $lt $lte $in``::

    {"kind": "semantic",
     "meta.topic": {"$in": ["food", "health"]},
     "created_at": {"$gte": 1700000000}}

Fields: the record's ``kind``, ``key``, ``content``, ``importance``,
``created_at``, ``valid_from``, ``valid_to``, ``expires_at``, ``id``, and
``meta.NAME`` (a field of its ``meta``; ``meta.a.b`` goes one level deeper).
A record lacking the field fails every operator but ``$ne``. Order
comparisons (``$gt`` ...) hold only between numbers or between strings,
never across types; equality is Python's (``1 == 1.0``, ``True`` is not 1).

The filter applies after the gate and before ranking (`candidates.keep`),
the same on every backend since it is evaluated on the gate's answer. It is
checked first (`check`): an unknown field or operator raises `InvalidInput`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from ..errors import InvalidInput
from ..model import Memory
from ..validate import show

OPERATORS = ("$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in")
FIELDS = (
    "content",
    "created_at",
    "expires_at",
    "id",
    "importance",
    "key",
    "kind",
    "valid_from",
    "valid_to",
)
_MISSING = object()

Condition = tuple[str, str, Any]  # (field, operator, operand)


def check(flt: Any) -> tuple[Condition, ...] | None:
    """The filter as a sorted tuple of conditions (None for no filter), or `InvalidInput`."""
    if flt is None:
        return None
    if not isinstance(flt, Mapping):
        raise InvalidInput(
            'filter must be a dict of field -> value or {"$op": value}, e.g. '
            f'{{"kind": "semantic", "created_at": {{"$gte": 0}}}}; got {show(flt)}'
        )
    out: list[Condition] = []
    for name, cond in flt.items():
        if not isinstance(name, str) or not (
            name in FIELDS or (name.startswith("meta.") and len(name) > 5)
        ):
            raise InvalidInput(
                f"filter field {show(name)} is unknown; use one of {', '.join(FIELDS)} or meta.NAME"
            )
        if isinstance(cond, Mapping):
            if not cond:
                raise InvalidInput(f"filter on {name} has no operator; use one of {OPERATORS}")
            for op, operand in cond.items():
                out.append((name, _op(name, op, operand), _operand(name, op, operand)))
        else:
            out.append((name, "$eq", _operand(name, "$eq", cond)))
    return tuple(sorted(out, key=repr))


def _op(name: str, op: Any, operand: Any) -> str:
    if op not in OPERATORS:
        raise InvalidInput(
            f"filter on {name}: unknown operator {show(op)}; use one of {', '.join(OPERATORS)}"
        )
    return str(op)


def _operand(name: str, op: str, v: Any) -> Any:
    if op == "$in":
        if isinstance(v, (str, bytes, Mapping)) or not isinstance(v, (list, tuple, set, frozenset)):
            raise InvalidInput(f"filter on {name}: $in takes a list of values, got {show(v)}")
        return tuple(_scalar(name, op, x) for x in v)
    x = _scalar(name, op, v)
    if op in ("$gt", "$gte", "$lt", "$lte") and (x is None or isinstance(x, bool)):
        raise InvalidInput(f"filter on {name}: {op} takes a number or a string, got {show(v)}")
    return x


def _scalar(name: str, op: str, v: Any) -> Any:
    if v is None or isinstance(v, (bool, str)):
        return v
    if isinstance(v, (int, float)):
        if isinstance(v, float) and not math.isfinite(v):
            raise InvalidInput(f"filter on {name}: {op} takes a finite number, got {show(v)}")
        return v
    raise InvalidInput(
        f"filter on {name}: {op} takes a string, number, true/false or null, got {show(v)}"
    )


def value_of(m: Memory, name: str) -> Any:
    """The record's value for a filter field (`_MISSING` when it has none)."""
    if name.startswith("meta."):
        cur: Any = m.meta or {}
        for part in name[5:].split("."):
            if not isinstance(cur, Mapping) or part not in cur:
                return _MISSING
            cur = cur[part]
        return cur
    v = getattr(m, name)
    return _MISSING if v is None and name != "key" else v


def _same(a: Any, b: Any) -> bool:
    """Equality that never takes True for 1."""
    return isinstance(a, bool) == isinstance(b, bool) and a == b


def _ordered(a: Any, b: Any) -> bool:
    """Can ``a`` and ``b`` be compared by order (numbers with numbers, text with text)?"""
    num = (int, float)
    if isinstance(a, bool) or isinstance(b, bool):
        return False
    return (isinstance(a, num) and isinstance(b, num)) or (
        isinstance(a, str) and isinstance(b, str)
    )


def holds(m: Memory, conds: tuple[Condition, ...]) -> bool:
    """Does ``m`` meet every condition?"""
    for name, op, x in conds:
        v = value_of(m, name)
        if op == "$ne":
            if v is not _MISSING and _same(v, x):
                return False
            continue
        if v is _MISSING:
            return False
        if op == "$eq":
            ok = _same(v, x)
        elif op == "$in":
            ok = any(_same(v, y) for y in x)
        elif not _ordered(v, x):
            ok = False
        elif op == "$gt":
            ok = v > x
        elif op == "$gte":
            ok = v >= x
        elif op == "$lt":
            ok = v < x
        else:
            ok = v <= x
        if not ok:
            return False
    return True
