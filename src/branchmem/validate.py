"""Input checks shared by every write path: they raise before anything is written."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

from .errors import InvalidInput
from .model import KINDS, ROLES, normalize_parents

MAX_ID_LEN = 512


def check_id(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise InvalidInput(f"{what} must be a string, got {type(value).__name__} {value!r}")
    if not value or not value.strip():
        raise InvalidInput(f"{what} must be a non-empty string")
    if len(value) > MAX_ID_LEN:
        raise InvalidInput(f"{what} is {len(value)} characters long; the limit is {MAX_ID_LEN}")
    return value


def check_namespace(value: Any) -> str:
    return check_id(value, "namespace")


def check_parents(event_id: str, parent: Any) -> tuple[str, ...]:
    parents = normalize_parents(parent)
    for p in parents:
        check_id(p, f"parent of event {event_id!r}")
    if len(set(parents)) != len(parents):
        raise InvalidInput(f"event {event_id!r} names the same parent twice: {list(parents)}")
    return parents


def check_role(role: Any) -> str:
    if role not in ROLES:
        raise InvalidInput(f"role must be one of {', '.join(ROLES)}; got {role!r}")
    return str(role)


def check_text(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise InvalidInput(f"{what} must be a string, got {type(value).__name__}")
    return value


def check_meta(meta: Any) -> dict[str, Any] | None:
    """Meta is a JSON object; it is stored as JSON, so it must survive a round trip."""
    if meta is None:
        return None
    if not isinstance(meta, dict):
        raise InvalidInput(f"meta must be a dict (a JSON object) or None, got {type(meta).__name__}")
    try:
        copied: dict[str, Any] = json.loads(json.dumps(meta, allow_nan=False))
    except (TypeError, ValueError) as exc:
        raise InvalidInput(
            f"meta must be JSON-serialisable (str, numbers, bools, None, lists, dicts): {exc}"
        ) from exc
    return copied


def check_kind(kind: Any) -> str:
    if kind not in KINDS:
        raise InvalidInput(f"kind must be one of {', '.join(KINDS)}; got {kind!r}")
    return str(kind)


def check_sources(sources: Any, what: str = "sources") -> tuple[str, ...]:
    if isinstance(sources, str) or not isinstance(sources, Sequence):
        raise InvalidInput(
            f"{what} must be a non-empty list of event ids, e.g. sources=['e2']; got {sources!r}"
        )
    if not sources:
        raise InvalidInput(
            f"{what} must name at least one event: a record with no source would be "
            "visible everywhere, which the gate never allows"
        )
    out = tuple(check_id(s, "source event id") for s in sources)
    return tuple(dict.fromkeys(out))  # drop repeats, keep order


def check_importance(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InvalidInput(f"importance must be a number between 0 and 1, got {value!r}")
    f = float(value)
    if math.isnan(f) or not 0.0 <= f <= 1.0:
        raise InvalidInput(f"importance must be between 0 and 1, got {value!r}")
    return f


def check_key(key: Any) -> str | None:
    if key is None:
        return None
    return check_id(key, "key")
