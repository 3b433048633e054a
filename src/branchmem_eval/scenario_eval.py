"""Run retrieval scenarios (see `scenarios`) against a store and score them.

**The rule.** An assertion passes when at least 80% of its ``expected``
strings appear in the contents of the top-``k`` hits and at least 80% of its
``excluded`` strings do not (a string appears when it is a substring of some
hit's content, compared case-folded; an empty list counts as met).

**The figures**, per set, split, embedder and mode: the *pass rate*; *Recall@k*,
the share of an assertion's expected strings found in its top k, averaged
over the assertions that expect something; *precision@k*, the share of the
hits returned (at most ``k``) that hold an expected string, averaged the same
way (a search that returns nothing scores 0). ``k`` is each assertion's own.

Everything goes through the public API of the store it is given (events,
memories, supersede, retract, purge, search; ``add_edge`` where the store has
one). The caller opens the store, with a `ScenarioClock` as its clock, so
that records are written on the scenario's days:

>>> from branchmem import Store
>>> from branchmem_eval.scenarios import load_set
>>> sc = load_set("scenarios", "tune").scenarios[0]
>>> outcomes = run_scenario(lambda clock: Store(clock=clock), sc, embedder="hashing")
>>> len(outcomes) == len(sc.assertions)
True
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from branchmem.retrieval.embed import Embedder

from .scenarios import DAY, EPOCH, Assertion, Scenario, ScenarioSet

if TYPE_CHECKING:
    from branchmem.api import StoreAPI
    from branchmem.model import Memory

OpenStore = Callable[["ScenarioClock"], "StoreAPI"]
"""Opens an empty store whose clock is the given `ScenarioClock`."""


class ScenarioClock:
    """A store clock that reads the scenario day being seeded (seconds since the epoch)."""

    def __init__(self) -> None:
        self.t = EPOCH

    def __call__(self) -> float:
        return self.t

    def set_day(self, day: float) -> None:
        self.t = EPOCH + day * DAY


@dataclass(frozen=True)
class Seeded:
    """What seeding wrote: the store, and how many edges went in or were skipped."""

    store: StoreAPI
    edges_loaded: int = 0
    edges_skipped: int = 0


@dataclass(frozen=True)
class Verdict:
    """How one top-k list fared against one assertion."""

    passed: bool
    found: tuple[str, ...]
    """Expected strings in the top-k contents."""
    missed: tuple[str, ...]
    """Expected strings not in them."""
    leaked: tuple[str, ...]
    """Excluded strings that are in them."""
    relevant_hits: int
    """Hits that hold at least one expected string."""
    hits: int

    @property
    def recall(self) -> float:
        n = len(self.found) + len(self.missed)
        return len(self.found) / n if n else 1.0

    @property
    def precision(self) -> float:
        return self.relevant_hits / self.hits if self.hits else 0.0


def _holds(content: str, s: str) -> bool:
    return s.casefold() in content.casefold()


def _met(count: int, total: int) -> bool:
    """At least 80% (4 in 5), in integers so that 4 of 5 is never a rounding question."""
    return 5 * count >= 4 * total


def judge(expected: Sequence[str], excluded: Sequence[str], contents: Sequence[str]) -> Verdict:
    """The rule of the module docstring, over the top-k ``contents``.

    >>> judge(["杭州"], ["成都"], ["用户下个月搬去杭州", "用户在准备搬家"]).passed
    True
    >>> judge(["杭州"], ["成都"], ["用户下个月搬去成都", "用户下个月搬去杭州"]).passed
    False
    """
    found = tuple(s for s in expected if any(_holds(c, s) for c in contents))
    missed = tuple(s for s in expected if s not in found)
    leaked = tuple(s for s in excluded if any(_holds(c, s) for c in contents))
    relevant = sum(any(_holds(c, s) for s in expected) for c in contents)
    passed = _met(len(found), len(expected)) and _met(len(excluded) - len(leaked), len(excluded))
    return Verdict(passed, found, missed, leaked, relevant, len(contents))


@dataclass(frozen=True)
class Outcome:
    scenario: str
    assertion: Assertion
    verdict: Verdict
    contents: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        a, v = self.assertion, self.verdict
        return {
            "scenario": self.scenario,
            "assertion": a.id,
            "query": a.query,
            "at": list(a.at),
            "k": a.k,
            "passed": v.passed,
            "missed": list(v.missed),
            "leaked": list(v.leaked),
            "top": list(self.contents),
        }


def seed(store: StoreAPI, scenario: Scenario, clock: ScenarioClock) -> Seeded:
    """Write ``scenario`` into ``store`` (opened with ``clock``), in the documented order."""
    for e in scenario.events:
        clock.set_day(e["day"])
        store.add_events(
            [{k: v for k, v in e.items() if k in ("id", "parent", "role", "content", "meta")}]
        )
    for m in scenario.memories:
        clock.set_day(m["day"])
        store.add_memory(
            m["content"],
            sources=m["sources"],
            id=m["id"],
            **{k: m[k] for k in ("kind", "key", "importance", "meta") if k in m},
        )
    for c in scenario.corrections:
        clock.set_day(c["day"])
        if c["op"] == "retract":
            store.retract(
                c["target"], sources=c["sources"], **({"id": c["id"]} if "id" in c else {})
            )
        else:
            fields = {k: c[k] for k in ("id", "kind", "key", "importance", "meta") if k in c}
            store.supersede(c["target"], c["content"], sources=c["sources"], **fields)
    if scenario.purge is not None:
        clock.set_day(scenario.purge["day"])
        store.purge(
            events=scenario.purge.get("events", []), memories=scenario.purge.get("memories", [])
        )
    add_edge = getattr(store, "add_edge", None)
    scenario_days = {e["id"]: e["day"] for e in scenario.events}
    if not callable(add_edge):
        return Seeded(store, 0, len(scenario.edges))
    for edge in scenario.edges:
        clock.set_day(edge["day"])
        rec = add_edge(edge["subject"], edge["predicate"], edge["object"], sources=edge["sources"])
        if edge["retracted_by"]:
            clock.set_day(max(scenario_days.get(e, edge["day"]) for e in edge["retracted_by"]))
            store.retract(rec.id, sources=edge["retracted_by"])
    return Seeded(store, len(scenario.edges), 0)


def _now(scenario: Scenario, a: Assertion) -> float:
    return EPOCH + (scenario.now_day if a.day is None else a.day) * DAY


def run_scenario(
    open_store: OpenStore,
    scenario: Scenario,
    *,
    mode: str = "hybrid",
    embedder: Embedder | str | None = None,
    tokenizer: str | None = None,
    seeded: list[Seeded] | None = None,
    oracle: bool = False,
    hops: int = 0,
) -> list[Outcome]:
    """Seed a fresh store and judge each assertion's top k. ``seeded``, when given,
    receives what seeding wrote (for the edge counts). ``oracle=True`` judges the
    `ideal` top k of what the gate shows instead of searching (the ceiling)."""
    clock = ScenarioClock()
    with open_store(clock) as store:
        done = seed(store, scenario, clock)
        if seeded is not None:
            seeded.append(done)
        out = []
        for a in scenario.assertions:
            if oracle:
                contents = ideal(store.memories(at=list(a.at), now=_now(scenario, a)), a)
            else:
                hits = store.search(
                    a.query,
                    at=list(a.at),
                    k=a.k,
                    mode=mode,
                    embedder=embedder if mode != "keyword" else None,
                    tokenizer=tokenizer,
                    now=_now(scenario, a),
                    hops=hops,
                )
                contents = tuple(h.memory.content for h in hits)
            out.append(Outcome(scenario.id, a, judge(a.expected, a.excluded, contents), contents))
        return out


@dataclass(frozen=True)
class Report:
    """The figures of one set and split under one (embedder, mode)."""

    set: str
    split: str
    embedder: str
    mode: str
    scenarios: int
    outcomes: tuple[Outcome, ...]
    edges_loaded: int = 0
    edges_skipped: int = 0
    by_tag: dict[str, tuple[int, int]] = field(default_factory=dict)
    """tag -> (passed, assertions), over scenario and assertion tags."""

    @property
    def assertions(self) -> int:
        return len(self.outcomes)

    @property
    def passed(self) -> int:
        return sum(o.verdict.passed for o in self.outcomes)

    @property
    def pass_rate(self) -> float:
        return self.passed / self.assertions if self.outcomes else 0.0

    def _mean(self, f: Callable[[Verdict], float]) -> float:
        vs = [o.verdict for o in self.outcomes if o.assertion.expected]
        return sum(f(v) for v in vs) / len(vs) if vs else 0.0

    @property
    def recall(self) -> float:
        return self._mean(lambda v: v.recall)

    @property
    def precision(self) -> float:
        return self._mean(lambda v: v.precision)

    def failures(self) -> list[Outcome]:
        return [o for o in self.outcomes if not o.verdict.passed]

    def to_dict(self, *, outcomes: bool = False) -> dict[str, Any]:
        d: dict[str, Any] = {
            "set": self.set,
            "split": self.split,
            "embedder": self.embedder,
            "mode": self.mode,
            "scenarios": self.scenarios,
            "assertions": self.assertions,
            "passed": self.passed,
            "pass_rate": self.pass_rate,
            "recall_at_k": self.recall,
            "precision_at_k": self.precision,
            "edges_loaded": self.edges_loaded,
            "edges_skipped": self.edges_skipped,
            "by_tag": {t: {"passed": p, "assertions": n} for t, (p, n) in self.by_tag.items()},
        }
        if outcomes:
            d["outcomes"] = [o.to_dict() for o in self.outcomes]
        return d


def run_set(
    open_store: OpenStore,
    data: ScenarioSet,
    *,
    mode: str = "hybrid",
    embedder: Embedder | str | None = None,
    tokenizer: str | None = None,
    scenarios: Iterable[Scenario] | None = None,
    oracle: bool = False,
    hops: int = 0,
) -> Report:
    """Every scenario of ``data`` (or just ``scenarios``) under one (embedder, mode);
    ``oracle=True``: the figures of the `ideal` ranking instead (embedder ``"ideal"``)."""
    from branchmem.retrieval.search import _embedder

    chosen = tuple(data.scenarios if scenarios is None else scenarios)
    seeded: list[Seeded] = []
    outcomes: list[Outcome] = []
    by_tag: dict[str, list[int]] = {}
    for sc in chosen:
        for o in run_scenario(
            open_store,
            sc,
            mode=mode,
            embedder=embedder,
            tokenizer=tokenizer,
            seeded=seeded,
            oracle=oracle,
            hops=hops,
        ):
            outcomes.append(o)
            for t in dict.fromkeys((*sc.tags, *o.assertion.tags)):
                tally = by_tag.setdefault(t, [0, 0])
                tally[0] += o.verdict.passed
                tally[1] += 1
    name = "ideal" if oracle else "-" if mode == "keyword" else _embedder(embedder).name
    if tokenizer not in (None, "bigram") and not oracle:
        name += f"/{tokenizer}"
    if hops and not oracle:
        name += f"+hops{hops}"
    return Report(
        set=data.name,
        split=data.split,
        embedder=name,
        mode="-" if oracle else mode,
        scenarios=len(chosen),
        outcomes=tuple(outcomes),
        edges_loaded=sum(s.edges_loaded for s in seeded),
        edges_skipped=sum(s.edges_skipped for s in seeded),
        by_tag={t: (p, n) for t, (p, n) in sorted(by_tag.items())},
    )


def ideal(visible: Sequence[Memory], a: Assertion) -> tuple[str, ...]:
    """The contents an ideal ranker would put in the top k: greedily, the visible
    record holding no excluded string that covers most expected strings not yet covered."""
    pool = [m.content for m in visible if not any(_holds(m.content, s) for s in a.excluded)]
    top: list[str] = []
    left = set(a.expected)
    while left and len(top) < a.k:
        best = max(pool, key=lambda c: sum(_holds(c, s) for s in left), default=None)
        if best is None or not any(_holds(best, s) for s in left):
            break
        top.append(best)
        pool.remove(best)
        left = {s for s in left if not _holds(best, s)}
    return tuple(top)
