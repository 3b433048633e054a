"""Retrieval scenarios: a store to seed through the public API, and assertions on search.

A scenario set is a JSON file ``{"set": NAME, "split": SPLIT, "scenarios": [...]}``;
the shipped ones (``scenarios`` for single-hop recall, ``multihop`` for people →
teams → services → libraries → vulnerabilities, each in a ``tune`` and a
``held-out`` split) are package data in ``branchmem_eval/data/``. One scenario::

    {"id": "move-edit-zh", "lang": "zh", "tags": ["branch", "noise"],
     "note": "what it tests, in a line",
     "events": [
       {"id": "e1", "content": "我在准备搬家", "day": 0},
       {"id": "e2", "content": "我下个月搬去成都"},              # parent: the previous event
       {"id": "e2b", "parent": "e1", "content": "我下个月搬去杭州"}  # an edit: a sibling
     ],
     "memories": [{"id": "m1", "content": "用户下个月搬去成都", "sources": ["e2"],
                   "key": "user.move_to"}],
     "corrections": [{"op": "supersede", "target": "m1", "id": "m1b", "content": "...",
                      "sources": ["e5"]},
                     {"op": "retract", "target": "m3", "sources": ["e6"]}],
     "purge": {"events": ["e4"], "memories": []},
     "edges": [{"subject": "Alice", "predicate": "owns", "object": "auth-service",
                "sources": ["e3"]}],
     "now_day": 30,
     "assertions": [{"id": "a1", "query": "我要搬去哪里？", "at": "e2b", "k": 3,
                     "expected": ["杭州"], "excluded": ["成都"], "tags": ["branch"]}]}

Events: ``parent`` absent means the previous event of the list (the first one
is a root), ``null`` a root, a string or a list of ids those parents (a list
is a merge). ``role`` defaults to ``"user"``. ``day`` (days after the set's
epoch) is when the store's clock says the item was written; an event without
one takes the previous event's, a memory, correction or edge without one the
latest day of its sources. Records' ``created_at`` is therefore spread in time,
and every search measures recency from ``now_day`` (default: the latest day of
the scenario) unless an assertion names its own ``day``.

Seeding order: events, memories, corrections (in order), the purge, then the
edges (loaded with ``store.add_edge`` where the store has one, and an edge
with ``retracted_by`` then retracted by a retraction from those events;
skipped, and counted as skipped, where the store has no ``add_edge``).
``k`` defaults to 3; ``at`` may be a list (a scope chain). How an assertion is
judged is in `scenario_eval`.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from branchmem.errors import InvalidInput
from branchmem.validate import show

SETS = ("scenarios", "multihop")
"""The shipped scenario sets: single-hop recall, and multi-hop over an organisation."""

SPLITS = ("tune", "held-out")
"""``tune`` may be looked at while changing ranking; ``held-out`` must not be."""

EPOCH = 1_700_000_000.0
"""Day 0 of every scenario (seconds since the Unix epoch), so runs never depend on today."""

DAY = 86_400.0

DEFAULT_K = 3

_SCENARIO_FIELDS = {"id", "lang", "tags", "note", "events", "memories", "corrections"}
_SCENARIO_FIELDS |= {"purge", "edges", "now_day", "assertions"}
_EVENT_FIELDS = {"id", "parent", "role", "content", "day", "meta"}
_MEMORY_FIELDS = {"id", "content", "sources", "kind", "key", "importance", "meta", "day"}
_CORRECTION_FIELDS = {"op", "target", "id", "content", "sources", "day", "key", "importance"}
_CORRECTION_FIELDS |= {"kind", "meta"}
_EDGE_FIELDS = {"subject", "predicate", "object", "sources", "day", "id", "attributes"}
_EDGE_FIELDS |= {"retracted_by"}
_ASSERTION_FIELDS = {"id", "query", "at", "k", "expected", "excluded", "tags", "day", "note"}


@dataclass(frozen=True)
class Assertion:
    """A search to run and what its top ``k`` hit contents must (not) hold."""

    id: str
    query: str
    at: tuple[str, ...]
    k: int = DEFAULT_K
    expected: tuple[str, ...] = ()
    excluded: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    day: float | None = None


@dataclass(frozen=True)
class Scenario:
    """One seeded store and its assertions; the seed lists are plain dicts, as in the file,
    with defaults filled in (every event's ``parent`` and ``day``, every record's ``day``)."""

    id: str
    lang: str
    tags: tuple[str, ...]
    events: tuple[dict[str, Any], ...]
    memories: tuple[dict[str, Any], ...]
    corrections: tuple[dict[str, Any], ...]
    purge: dict[str, Any] | None
    edges: tuple[dict[str, Any], ...]
    assertions: tuple[Assertion, ...]
    now_day: float
    note: str = ""


@dataclass(frozen=True)
class ScenarioSet:
    name: str
    split: str
    scenarios: tuple[Scenario, ...]

    @property
    def assertions(self) -> int:
        return sum(len(s.assertions) for s in self.scenarios)


def data_dir() -> Path:
    """Where the shipped sets live (inside the installed package)."""
    return Path(str(resources.files("branchmem_eval") / "data"))


def load_set(name: str, split: str) -> ScenarioSet:
    """A shipped set: ``load_set("scenarios", "tune")``.

    >>> s = load_set("scenarios", "tune")
    >>> s.name, s.split, s.assertions > 0
    ('scenarios', 'tune', True)
    """
    if name not in SETS:
        raise InvalidInput(f"scenario set must be one of {', '.join(SETS)}; got {show(name)}")
    if split not in SPLITS:
        raise InvalidInput(f"split must be one of {', '.join(SPLITS)}; got {show(split)}")
    return read_set(data_dir() / f"{name}-{split}.json")


def read_set(path: str | os.PathLike[str]) -> ScenarioSet:
    """Parse a scenario-set file (see the module docstring); every mistake names its place."""
    p = Path(path)
    try:
        doc = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InvalidInput(f"cannot read scenario set {p}: {exc}; pass a UTF-8 JSON file") from exc
    if not isinstance(doc, dict) or not isinstance(doc.get("scenarios"), list):
        raise InvalidInput(f'{p}: expected {{"set": ..., "split": ..., "scenarios": [...]}}')
    scenarios = tuple(
        parse_scenario(d, f"{p}: scenarios[{i}]") for i, d in enumerate(doc["scenarios"])
    )
    ids = [s.id for s in scenarios]
    dup = sorted({i for i in ids if ids.count(i) > 1})
    if dup:
        raise InvalidInput(f"{p}: scenario ids must be unique; repeated: {dup}")
    return ScenarioSet(str(doc.get("set", p.stem)), str(doc.get("split", "")), scenarios)


def parse_scenario(d: Any, where: str = "scenario") -> Scenario:
    """A `Scenario` from its dict, defaults filled in; `InvalidInput` saying where on a mistake."""
    obj = _object(d, _SCENARIO_FIELDS, where)
    sid = _str(obj, "id", where)
    where = f"{where} ({sid})"
    events: list[dict[str, Any]] = []
    day = 0.0
    for i, raw in enumerate(_list(obj, "events", where)):
        e = dict(_object(raw, _EVENT_FIELDS, f"{where}: events[{i}]"))
        _str(e, "id", f"{where}: events[{i}]")
        if "parent" not in e:
            e["parent"] = events[-1]["id"] if events else None
        day = _day(e.get("day", day), f"{where}: events[{i}]")
        e["day"] = day
        events.append(e)
    days = {e["id"]: e["day"] for e in events}
    memories = [
        _sourced(raw, _MEMORY_FIELDS, days, f"{where}: memories[{i}]", needs_content=True)
        for i, raw in enumerate(_list(obj, "memories", where))
    ]
    corrections = []
    for i, raw in enumerate(_list(obj, "corrections", where)):
        at = f"{where}: corrections[{i}]"
        c = _sourced(raw, _CORRECTION_FIELDS, days, at, needs_content=False)
        if c.get("op") not in ("supersede", "retract"):
            raise InvalidInput(f'{at}: "op" must be "supersede" or "retract"')
        _str(c, "target", at)
        if c["op"] == "supersede":
            _str(c, "content", at)
        corrections.append(c)
    purge = obj.get("purge")
    if purge is not None:
        purge = dict(_object(purge, {"events", "memories", "day"}, f"{where}: purge"))
        for f in ("events", "memories"):
            _strs(purge.get(f, []), f"{where}: purge.{f}")
        purge["day"] = _day(purge.get("day", max(days.values(), default=0.0)), f"{where}: purge")
    edges = []
    for i, raw in enumerate(_list(obj, "edges", where)):
        at = f"{where}: edges[{i}]"
        edge = _sourced(raw, _EDGE_FIELDS, days, at, needs_content=False)
        for f in ("subject", "predicate", "object"):
            _str(edge, f, at)
        edge["retracted_by"] = list(_strs(edge.get("retracted_by", []), f"{at}: retracted_by"))
        edges.append(edge)
    latest = max([*days.values(), *(r["day"] for r in memories + corrections + edges)], default=0.0)
    now_day = _day(obj.get("now_day", latest), f"{where}: now_day")
    assertions = tuple(
        _assertion(raw, f"{where}: assertions[{i}]")
        for i, raw in enumerate(_list(obj, "assertions", where))
    )
    tags = _strs(obj.get("tags", []), f"{where}: tags")
    return Scenario(
        id=sid,
        lang=str(obj.get("lang", "")),
        tags=tags,
        events=tuple(events),
        memories=tuple(memories),
        corrections=tuple(corrections),
        purge=purge,
        edges=tuple(edges),
        assertions=assertions,
        now_day=now_day,
        note=str(obj.get("note", "")),
    )


def _sourced(
    raw: Any, fields: set[str], days: dict[str, float], where: str, *, needs_content: bool
) -> dict[str, Any]:
    r = dict(_object(raw, fields, where))
    if needs_content:
        _str(r, "id", where)
        _str(r, "content", where)
    sources = _strs(r.get("sources"), f"{where}: sources")
    if not sources:
        raise InvalidInput(f"{where}: a derived record needs at least one source event")
    r["sources"] = list(sources)
    r["day"] = _day(r.get("day", max((days.get(s, 0.0) for s in sources), default=0.0)), where)
    return r


def _assertion(raw: Any, where: str) -> Assertion:
    a = _object(raw, _ASSERTION_FIELDS, where)
    at = a.get("at")
    anchors = (at,) if isinstance(at, str) else _strs(at, f"{where}: at")
    if not anchors or not all(anchors):
        raise InvalidInput(f"{where}: at must be an event id or a non-empty list of them")
    k = a.get("k", DEFAULT_K)
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise InvalidInput(f"{where}: k must be a positive integer, got {show(k)}")
    expected = _strs(a.get("expected", []), f"{where}: expected")
    excluded = _strs(a.get("excluded", []), f"{where}: excluded")
    if not expected and not excluded:
        raise InvalidInput(f"{where}: an assertion needs expected and/or excluded strings")
    return Assertion(
        id=_str(a, "id", where),
        query=_str(a, "query", where),
        at=anchors,
        k=k,
        expected=expected,
        excluded=excluded,
        tags=_strs(a.get("tags", []), f"{where}: tags"),
        day=_day(a["day"], where) if "day" in a else None,
    )


def _object(d: Any, fields: set[str], where: str) -> dict[str, Any]:
    if not isinstance(d, dict):
        raise InvalidInput(f"{where}: expected a JSON object, got {show(d)}")
    unknown = set(d) - fields
    if unknown:
        raise InvalidInput(
            f"{where}: unknown field(s) {sorted(unknown)}; allowed: {', '.join(sorted(fields))}"
        )
    return d


def _list(obj: dict[str, Any], field: str, where: str) -> list[Any]:
    v = obj.get(field, [])
    if not isinstance(v, list):
        raise InvalidInput(f"{where}: {field} must be a list, got {show(v)}")
    return v


def _str(obj: dict[str, Any], field: str, where: str) -> str:
    v = obj.get(field)
    if not isinstance(v, str) or not v.strip():
        raise InvalidInput(f"{where}: {field} must be a non-empty string, got {show(v)}")
    return v


def _strs(v: Any, where: str) -> tuple[str, ...]:
    if not isinstance(v, list) or not all(isinstance(x, str) and x for x in v):
        raise InvalidInput(f"{where} must be a list of non-empty strings, got {show(v)}")
    return tuple(v)


def _day(v: Any, where: str) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 <= v < 100_000:
        raise InvalidInput(f"{where}: day must be a number of days >= 0, got {show(v)}")
    return float(v)
