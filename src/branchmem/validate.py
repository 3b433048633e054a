"""Input checks shared by every write path: they raise before anything is written."""

from __future__ import annotations

import json
import math
import reprlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from .errors import InvalidInput
from .model import KINDS, ROLES, Event, Memory, normalize_parents, set_fresh
from .validate_json import MAX_DEPTH as MAX_DEPTH
from .validate_json import TOO_DEEP as TOO_DEEP
from .validate_json import check_json as check_json
from .validate_json import check_utf8 as check_utf8
from .validate_json import nesting as nesting
from .validate_json import nul_error as nul_error
from .validate_json import readable_meta as readable_meta

MAX_ID_LEN = 512

_REPR = reprlib.Repr()
_REPR.maxstring = _REPR.maxother = 200
_REPR.maxlevel = 3


def show(value: Any) -> str:
    """A short repr of untrusted input for an error message: bounded in length
    and depth, so a huge or deeply nested argument cannot break the message."""
    try:
        return _REPR.repr(value)
    except Exception:  # a broken __repr__ of the caller's object
        return f"<{type(value).__name__}>"


def check_id(value: Any, what: str) -> str:
    """Ids are non-empty, printable strings (no control characters or line breaks)."""
    if (
        type(value) is str
        and 0 < len(value) <= MAX_ID_LEN
        and value.isprintable()
        and not value.isspace()
    ):
        return value
    if not isinstance(value, str):
        raise InvalidInput(f"{what} must be a string, got {type(value).__name__} {show(value)}")
    if not value or value.isspace():
        raise InvalidInput(f"{what} must be a non-empty string, got {show(value)}")
    if len(value) > MAX_ID_LEN:
        raise InvalidInput(f"{what} is {len(value)} characters long; the limit is {MAX_ID_LEN}")
    raise InvalidInput(
        f"{what} {show(value)} holds a control character or line break; ids must be printable"
    )


def check_namespace(value: Any) -> str:
    return check_id(value, "namespace")


MAX_PARENTS = 64
"""How many parents one event may name (a merge names two; an event under
every one of 64 branches is already rare). The same at every door."""
MAX_SOURCES = 256
"""How many source events one record (memory, summary, edge) may name: a
summary of a long conversation names each message it read. The same at every door."""
MAX_CONTENT_BYTES = 1 << 20
"""The most UTF-8 bytes the content of one event or record may hold (1 MiB,
about 250,000 words: more than any model's context), the same at every door:
`Store`, HTTP, MCP and the importers (which skip a longer message, saying so)."""


def check_parents(event_id: str, parent: Any) -> tuple[str, ...]:
    if parent is None:
        return ()
    if type(parent) is str:
        return (check_id(parent, f"parent of event {show(event_id)}"),)
    parents = normalize_parents(parent)
    if len(parents) > MAX_PARENTS:
        raise InvalidInput(
            f"event {show(event_id)} names {len(parents)} parents; the limit is {MAX_PARENTS} "
            "per event (branchmem.validate.MAX_PARENTS, the same at every door): hang "
            "the event under fewer parents (a merge names two)"
        )
    for p in parents:
        check_id(p, f"parent of event {show(event_id)}")
    if len(set(parents)) != len(parents):
        raise InvalidInput(f"event {show(event_id)} names the same parent twice: {list(parents)}")
    return parents


def check_role(role: Any) -> str:
    if type(role) is not str or role not in ROLES:
        raise InvalidInput(f"role must be one of {', '.join(ROLES)}; got {show(role)}")
    return str(role)


def check_text(value: Any, what: str) -> str:
    """Stored text: a string UTF-8 can hold, without NUL characters (which
    PostgreSQL cannot store: every backend refuses them alike)."""
    if not isinstance(value, str):
        raise InvalidInput(f"{what} must be a string, got {type(value).__name__}")
    if "\x00" in value:
        raise nul_error(what)
    return check_utf8(value, what)


def check_content(value: Any, what: str) -> str:
    """The content of an event or record: stored text (`check_text`) of at
    most `MAX_CONTENT_BYTES` bytes of UTF-8."""
    text = check_text(value, what)
    if len(text) > MAX_CONTENT_BYTES // 4 and (size := len(text.encode("utf-8"))) > (
        MAX_CONTENT_BYTES
    ):
        raise too_long(what, size)
    return text


def too_long(what: str, size: int) -> InvalidInput:
    return InvalidInput(
        f"{what} is {size} bytes of UTF-8 text; the limit is {MAX_CONTENT_BYTES} per event "
        "or record (branchmem.validate.MAX_CONTENT_BYTES, the same at every door): split "
        "it into several, or keep the text elsewhere and store a reference to it"
    )


def check_ids(values: Any, what: str) -> list[str]:
    """A list (or other iterable) of ids, repeats dropped, order kept."""
    if isinstance(values, (str, bytes, Mapping)) or not isinstance(values, Iterable):
        raise InvalidInput(
            f"{what}s must be a list of ids, e.g. ['e1']; got {type(values).__name__} "
            f"{show(values)}"
        )
    return list(dict.fromkeys(check_id(v, what) for v in values))


def check_meta(meta: Any, what: str = "meta") -> dict[str, Any] | None:
    """Meta is a JSON object; it is stored as JSON, so it must survive a round trip."""
    if meta is None:
        return None
    if not isinstance(meta, dict):
        raise InvalidInput(
            f"{what} must be a dict (a JSON object) or None, got {type(meta).__name__}"
        )
    copied: dict[str, Any] = json.loads(check_json(meta, what))
    return copied


MAX_MESSAGE_BYTES = MAX_CONTENT_BYTES
"""The default cap on the text of one imported message (UTF-8 bytes): the
content limit of every event, so one longer message is skipped with its reason."""

MAX_INT = 2**63 - 1
"""The largest whole number an integer parameter takes: what every backend holds
(SQLite's and PostgreSQL's 64-bit integers)."""


def check_int(value: Any, what: str, least: int = 0, most: int = MAX_INT) -> int:
    """A whole number from ``least`` to ``most``: every integer parameter (offsets,
    limits, ``k``, windows) goes through here, so that one too large for a
    backend is the same `InvalidInput` on every backend."""
    if type(value) is int and least <= value <= most:
        return value
    if isinstance(value, int) and not isinstance(value, bool) and least <= value <= most:
        return int(value)  # an IntEnum, say
    too_big = isinstance(value, int) and not isinstance(value, bool) and value > most
    # The backends' ceiling (2**63 - 1) is no figure to show one who passed 0 or '5'.
    span = f"from {least} to {most}" if most < MAX_INT or too_big else f"of at least {least}"
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidInput(
            f"{what} must be a whole number {span}, got {type(value).__name__} {show(value)}"
        )
    raise InvalidInput(f"{what} must be a whole number {span}, got {show(value)}")


def check_kind(kind: Any) -> str:
    if kind not in KINDS:
        raise InvalidInput(f"kind must be one of {', '.join(KINDS)}; got {show(kind)}")
    return str(kind)


def check_sources(sources: Any, what: str = "sources") -> tuple[str, ...]:
    if type(sources) is list and 0 < len(sources) < 3:  # one source, or a message and reply
        a = check_id(sources[0], "source event id")
        if len(sources) == 1:
            return (a,)
        b = check_id(sources[1], "source event id")
        return (a,) if a == b else (a, b)
    if isinstance(sources, str) or not isinstance(sources, Sequence):
        raise InvalidInput(
            f"{what} must be a non-empty list of event ids, e.g. sources=['e2']; "
            f"got {show(sources)}"
        )
    if not sources:
        raise InvalidInput(
            f"{what} must name at least one event: a record with no source would be "
            "visible everywhere, which the gate never allows"
        )
    if len(sources) > MAX_SOURCES:
        raise InvalidInput(
            f"{what} names {len(sources)} events; the limit is {MAX_SOURCES} per record "
            "(branchmem.validate.MAX_SOURCES, the same at every door): name the events "
            "the record was derived from, or split it into several records"
        )
    out = tuple(check_id(s, "source event id") for s in sources)
    return tuple(dict.fromkeys(out))  # drop repeats, keep order


def check_importance(value: Any) -> float:
    if type(value) is float and 0.0 <= value <= 1.0:
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InvalidInput(f"importance must be a number between 0 and 1, got {show(value)}")
    try:
        f = float(value)
    except OverflowError:
        f = math.inf
    if math.isnan(f) or not 0.0 <= f <= 1.0:
        raise InvalidInput(f"importance must be between 0 and 1, got {show(value)}")
    return f


def check_key(key: Any) -> str | None:
    if key is None:
        return None
    return check_id(key, "key")


_EVENT_KEYS = frozenset({"id", "parent", "parents", "role", "content", "namespace", "meta"})
_MEMORY_KEYS = frozenset(
    {"content", "sources", "kind", "key", "importance", "namespace", "meta", "id"}
    | {"expires_at", "valid_from", "valid_to"}
)


def event_from(item: Any, now: float) -> Event:
    """A checked `Event` from an `Event` or a dict of `Store.add_event`'s arguments.

    Plain and thorough; batches go through `events_from`, whose fast loop is
    tested against this.
    """
    if isinstance(item, Event):
        d: Mapping[str, Any] = {
            "id": item.id,
            "parents": item.parents,
            "role": item.role,
            "content": item.content,
            "namespace": item.namespace,
            "meta": item.meta,
        }
    elif isinstance(item, Mapping):
        d = item
        if not d.keys() <= _EVENT_KEYS:
            raise InvalidInput(
                f"unknown event field(s) {sorted(set(d) - _EVENT_KEYS)}; an event has "
                f"{', '.join(sorted(_EVENT_KEYS))}"
            )
    else:
        raise InvalidInput(f"an event is an Event or a dict, got {type(item).__name__}")
    get = d.get
    eid = check_id(get("id"), "event id")
    content = get("content", "")
    check_content(content, f"content of event {show(eid)}")
    ns = get("namespace", "default")
    meta = get("meta")
    return Event(
        eid,
        check_parents(eid, d["parents"] if "parents" in d else get("parent")),
        check_role(get("role", "user")),
        content,
        ns if ns == "default" else check_namespace(ns),
        None if meta is None else check_meta(meta, f"meta of event {show(eid)}"),
        now,
    )


def memory_from(item: Any, now: float, new_id: Callable[[], str]) -> Memory:
    """A checked `Memory` from a `Memory` or a dict of `Store.add_memory`'s arguments."""
    if isinstance(item, Memory):
        if item.target is not None:
            raise InvalidInput("add_memories() stores memories; use retract() for retractions")
        d: Mapping[str, Any] = item.to_dict()
        d = {k: v for k, v in d.items() if k in _MEMORY_KEYS}
    elif isinstance(item, Mapping):
        d = item
        if not d.keys() <= _MEMORY_KEYS:
            raise InvalidInput(
                f"unknown memory field(s) {sorted(set(d) - _MEMORY_KEYS)}; "
                f"a memory has {', '.join(sorted(_MEMORY_KEYS))}"
            )
    else:
        raise InvalidInput(f"a memory is a Memory or a dict, got {type(item).__name__}")
    get = d.get
    rid = get("id")
    kind = get("kind", "semantic")
    imp = get("importance", 0.5)
    key = get("key")
    meta = get("meta")
    ns = get("namespace", "default")
    mem = Memory(
        new_id() if rid is None else check_id(rid, "memory id"),
        check_content(get("content"), "content"),
        check_sources(get("sources")),
        kind if kind in KINDS else check_kind(kind),
        None if key is None else check_id(key, "key"),
        check_importance(imp),
        ns if ns == "default" else check_namespace(ns),
        None if meta is None else check_meta(meta),
        None,
        now,
    )
    times = (get("expires_at"), get("valid_from"), get("valid_to"))
    if times == (None, None, None):
        return mem
    expires, vfrom, vto = (check_time(t, n) for t, n in zip(times, TIME_FIELDS, strict=True))
    if vfrom is not None and vto is not None and vfrom > vto:
        raise InvalidInput(
            f"valid_from ({vfrom}) is after valid_to ({vto}); the fact must hold for "
            "some time, so swap them or drop one"
        )
    set_fresh(mem, expires_at=expires, valid_from=vfrom, valid_to=vto)
    return mem


TIME_FIELDS = ("expires_at", "valid_from", "valid_to")


def check_page(offset: Any, limit: Any, most: int = 100_000) -> tuple[int, int]:
    """``offset`` (0 or more) and ``limit`` (1 to ``most``) of a listing."""
    return check_int(offset, "offset"), check_int(limit, "limit", 1, most)


def check_time(value: Any, what: str) -> float | None:
    """``None`` or a finite time in seconds since the epoch (as from ``time.time()``)."""
    if value is None:
        return None
    if not isinstance(value, bool) and isinstance(value, (int, float)):
        try:
            f = float(value)
        except OverflowError:
            f = math.inf
        if math.isfinite(f):
            return f
    raise InvalidInput(
        f"{what} must be a time in seconds since the epoch (a number, as from "
        f"time.time()) or None; got {show(value)}"
    )


MAX_NAME_LEN = 200


def check_name(value: Any, what: str = "branch name") -> str:
    """Branch and snapshot names: hierarchical (``user_001/session_abc/task``),
    no whitespace or control characters, no empty part, at most 200 characters."""
    # The common case in a few string methods: a printable string holds no
    # whitespace other than the space (tests/core/test_pair_fast_paths.py).
    if (
        type(value) is str
        and 0 < len(value) <= MAX_NAME_LEN
        and value.isprintable()
        and " " not in value
        and "//" not in value
        and value[0] != "/"
        and value[-1] != "/"
    ):
        return value
    if type(value) is not str:
        raise InvalidInput(f"{what} must be a string, got {type(value).__name__} {show(value)}")
    if not value:
        raise InvalidInput(f"{what} must be a non-empty string such as 'user_001/main'")
    if len(value) > MAX_NAME_LEN:
        raise InvalidInput(f"{what} is {len(value)} characters long; the limit is {MAX_NAME_LEN}")
    if any(c.isspace() or not c.isprintable() for c in value):
        raise InvalidInput(
            f"{what} {show(value)} holds whitespace or a control character; use names like "
            "'user_001/session_abc/task' (join words with '_' or '-')"
        )
    if any(not part for part in value.split("/")):
        raise InvalidInput(
            f"{what} {show(value)} has an empty part (a leading, trailing or doubled '/'); "
            "use names like 'user_001/session_abc/task'"
        )
    return value


def check_batch(items: Any, method: str, what: str) -> list[Any]:
    """A batch argument as a list; one item, or a non-iterable, is refused."""
    if isinstance(items, (str, bytes, Mapping, Event, Memory)) or not isinstance(items, Iterable):
        raise InvalidInput(
            f"{method}() takes a list of {what} dicts, got {type(items).__name__} "
            f"{show(items)}; wrap a single {what} in a list"
        )
    return list(items)


def check_actor(actor: Any) -> str | None:
    """``None`` or the id of who makes a change (kept in the audit log)."""
    return None if actor is None else check_id(actor, "actor")


def check_anchors(at: Any) -> list[str]:
    """A scope chain: a list (or tuple) of anchors, each once, in the given order."""
    if not isinstance(at, (list, tuple)):
        raise InvalidInput(
            f"`at` must be an event id, a branch name, or a list of them; got {show(at)}"
        )
    for a in at:
        if not isinstance(a, str) or not a:
            raise InvalidInput(
                f"every anchor in `at` must be an event id or a branch name, got {show(a)}"
            )
    return list(dict.fromkeys(at))


def check_query(query: Any) -> None:
    """Refuse a query that asks nothing: not text, or only whitespace and NUL
    (no stored text holds NUL, so NUL matches nothing a search could rank)."""
    if not isinstance(query, str) or not query.replace("\x00", "").strip():
        raise InvalidInput(
            "query must be a non-empty string (more than NUL characters and whitespace); "
            "to list every visible record use store.memories(at=...)"
        )
