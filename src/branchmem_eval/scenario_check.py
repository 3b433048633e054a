"""Check a scenario set before trusting its figures.

`problems` lists, one line each, what would make a scenario's assertions
meaningless: ids used twice; a parent, source, anchor, correction target or
purged id that names nothing in the scenario; an expected string that
overlaps an excluded one; an excluded string that no record of the scenario
states (the exclusion would be vacuous); and an assertion that even an ideal
ranker could not pass (`scenario_eval.ideal` over what the gate shows at the
anchor, after every correction and the purge). An empty list means the set
is sound.
"""

from __future__ import annotations

from .scenario_eval import OpenStore, _holds, run_scenario
from .scenarios import Scenario, ScenarioSet


def problems(open_store: OpenStore, data: ScenarioSet) -> list[str]:
    """Every problem of every scenario of ``data`` (see the module docstring)."""
    out: list[str] = []
    for sc in data.scenarios:
        found = structure(sc)
        out += found
        if not found:  # the store would refuse a broken seed; only a sound one is run
            out += unreachable(open_store, sc)
    return out


def structure(sc: Scenario) -> list[str]:
    """The problems that need no store: ids, references, and the strings' overlap."""
    out: list[str] = []
    say = out.append
    events: set[str] = set()
    for e in sc.events:
        if e["id"] in events:
            say(f"{sc.id}: event {e['id']} is defined twice")
        parents = [e["parent"]] if isinstance(e["parent"], str) else e["parent"] or []
        for p in parents:
            if p not in events:
                say(f"{sc.id}: event {e['id']} has parent {p}, not an earlier event")
        events.add(e["id"])
    records: set[str] = set()

    def sources(what: str, srcs: list[str]) -> None:
        for s in srcs:
            if s not in events:
                say(f"{sc.id}: {what} has source {s}, not an event of the scenario")

    for m in sc.memories:
        if m["id"] in records:
            say(f"{sc.id}: memory {m['id']} is defined twice")
        records.add(m["id"])
        sources(f"memory {m['id']}", m["sources"])
    for i, c in enumerate(sc.corrections):
        what = f"correction {i} ({c['op']} {c['target']})"
        if c["target"] not in records:
            say(f"{sc.id}: {what} targets no memory defined before it")
        sources(what, c["sources"])
        if "id" in c:
            if c["id"] in records:
                say(f"{sc.id}: {what} reuses the id {c['id']}")
            records.add(c["id"])
    if sc.purge is not None:
        for e in sc.purge.get("events", []):
            if e not in events:
                say(f"{sc.id}: purge names event {e}, not in the scenario")
        for m in sc.purge.get("memories", []):
            if m not in records:
                say(f"{sc.id}: purge names memory {m}, not in the scenario")
    for i, edge in enumerate(sc.edges):
        what = f"edge {i} ({edge['subject']} {edge['predicate']} {edge['object']})"
        sources(what, edge["sources"])
        sources(f"{what} retracted_by", edge["retracted_by"])
    stated = [m["content"] for m in sc.memories]
    stated += [c["content"] for c in sc.corrections if "content" in c]
    seen: set[str] = set()
    for a in sc.assertions:
        if a.id in seen:
            say(f"{sc.id}: assertion {a.id} is defined twice")
        seen.add(a.id)
        for anchor in a.at:
            if anchor not in events:
                say(f"{sc.id}/{a.id}: anchor {anchor} is not an event of the scenario")
        for x in a.excluded:
            if not any(_holds(c, x) for c in stated):
                say(f"{sc.id}/{a.id}: excluded {x!r} is stated by no record (a vacuous check)")
            for s in a.expected:
                if _holds(s, x) or _holds(x, s):
                    say(f"{sc.id}/{a.id}: expected {s!r} and excluded {x!r} overlap")
    return out


def unreachable(open_store: OpenStore, sc: Scenario) -> list[str]:
    """The assertions an ideal ranking of the gated records would still fail."""
    return [
        f"{sc.id}/{o.assertion.id}: no ranking passes (best top {o.assertion.k} misses "
        f"{list(o.verdict.missed)}, leaks {list(o.verdict.leaked)})"
        for o in run_scenario(open_store, sc, oracle=True)
        if not o.verdict.passed
    ]
