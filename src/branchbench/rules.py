"""The format rules of ``docs/branchbench-format.md`` over one scenario.

One function per rule (rule 0: files and fields); `validate_scenario` runs
them all. How each rule is read, where the document leaves room, is in the
docstring of `branchbench.validate`, which also checks folders and is the
``branchbench validate`` command.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from branchbench.scenario import FORK_TYPES, QUESTION_TYPES, ROLES, Scenario, reach

MESSAGE_ROLES = ("user", "assistant")
CHECKPOINT_MIN_TURNS = 2
FOLDER = "<folder>"


RULES: dict[int, str] = {
    0: "files, fields and MANIFEST are well formed",
    1: "unique ids, known parents, no cycle, an anchor that exists",
    2: "the anchor's path forks off a sibling branch that holds a message",
    3: "every answer word occurs on the anchor's path",
    4: "forbidden words occur off the path and never on it",
    5: "no forbidden or superseded word occurs in the question text",
    6: "keyword lists are present where required and do not overlap",
    7: "fork_type matches the shape of the conversation",
    8: "heads name the newest event of every other thread, one each",
}
"""Each rule of ``docs/branchbench-format.md`` in one line, quoted in every violation."""


@dataclass(frozen=True)
class Violation:
    """One broken rule in one scenario (``rule`` 0 is a file or field problem)."""

    scenario: str
    rule: int
    message: str

    def __str__(self) -> str:
        if self.scenario == FOLDER:  # the message names the folder itself
            return self.message
        statement = RULES.get(self.rule)
        rule = f"rule {self.rule} ({statement})" if statement else f"rule {self.rule}"
        return f"{self.scenario}: {rule}: {self.message}"


@dataclass(frozen=True)
class _Fork:
    """A proper ancestor of the anchor with a child off the anchor's path."""

    point: str
    on_children: tuple[str, ...]
    off_child: str
    has_message: bool


class _Graph:
    """The scenario's event graph, built once rule 1 has passed."""

    def __init__(self, s: Scenario) -> None:
        self.events = s.by_id()
        self.order = {e.id: i for i, e in enumerate(s.events)}
        self.children: dict[str, list[str]] = {e.id: [] for e in s.events}
        for e in s.events:
            for p in e.parents:
                self.children[p].append(e.id)
        self.path = self.ancestors_or_self(s.anchor)
        for head in s.heads:  # threads (v1.1): other threads' current lineages count
            if head in self.events:
                self.path |= self.ancestors_or_self(head)
        self.anchor = s.anchor

    def ancestors_or_self(self, eid: str) -> set[str]:
        """``eid`` and every event above it, through all parents."""
        return reach(eid, lambda cur: self.events[cur].parents)

    def descendants_or_self(self, eid: str) -> set[str]:
        """``eid`` and every event below it."""
        return reach(eid, self.children.__getitem__)

    def forks(self) -> list[_Fork]:
        """Every (proper ancestor of the anchor, off-path child) pair, in arrival order."""
        found: list[_Fork] = []
        for point in sorted(self.path - {self.anchor}, key=self.order.__getitem__):
            kids = self.children[point]
            on = tuple(c for c in kids if c in self.path)
            for off in (c for c in kids if c not in self.path):
                branch = self.descendants_or_self(off)
                has_message = any(self.events[b].role in MESSAGE_ROLES for b in branch)
                found.append(_Fork(point, on, off, has_message))
        return found

    def turns_below(self, eid: str, memo: dict[str, int]) -> int:
        """Assistant messages on the longest downward chain starting at ``eid``.

        Iterative post-order, so a long abandoned run cannot hit the recursion
        limit; the graph is acyclic once rule 1 has passed.
        """
        stack = [eid]
        while stack:
            cur = stack[-1]
            pending = [c for c in self.children[cur] if c not in memo]
            if pending:
                stack.extend(pending)
                continue
            stack.pop()
            own = 1 if self.events[cur].role == "assistant" else 0
            memo[cur] = own + max((memo[c] for c in self.children[cur]), default=0)
        return memo[eid]

    def holding(self, word: str, ids: Iterable[str]) -> list[str]:
        """The events among ``ids`` whose content contains ``word`` (case kept)."""
        return [
            i for i in sorted(ids, key=self.order.__getitem__) if word in self.events[i].content
        ]

    def touching(self, word: str, ids: Iterable[str]) -> list[str]:
        """The events among ``ids`` whose content contains ``word``, ignoring case."""
        folded = word.casefold()
        return [
            i
            for i in sorted(ids, key=self.order.__getitem__)
            if folded in self.events[i].content.casefold()
        ]


def _fields(s: Scenario) -> list[Violation]:
    """Rule 0: enumerations and required text fields."""
    out: list[Violation] = []

    def bad(msg: str) -> None:
        out.append(Violation(s.id, 0, msg))

    if not s.id.strip():
        bad("the scenario id is empty; use the file name without .json")
    if s.fork_type not in FORK_TYPES:
        bad(f"fork_type {s.fork_type!r} is unknown; use one of {', '.join(FORK_TYPES)}")
    if not s.events:
        bad("the scenario has no events")
    if not s.questions:
        bad("the scenario has no questions")
    for e in s.events:
        if e.role not in ROLES:
            bad(f"event {e.id} has role {e.role!r}; use one of {', '.join(ROLES)}")
        if e.role in MESSAGE_ROLES and not e.content.strip():
            bad(f"event {e.id} is a {e.role} message with empty content")
    for q in s.questions:
        if q.type not in QUESTION_TYPES:
            bad(f"question {q.id} has type {q.type!r}; use one of {', '.join(QUESTION_TYPES)}")
        if not q.question.strip():
            bad(f"question {q.id} has empty question text")
    return out


def _rule1(s: Scenario) -> list[Violation]:
    """Rule 1: unique ids, known parents, no cycle, an anchor that exists."""
    out: list[Violation] = []

    def bad(msg: str) -> None:
        out.append(Violation(s.id, 1, msg))

    seen: set[str] = set()
    for e in s.events:
        if e.id in seen:
            bad(f"event id {e.id} is used twice; give every event its own id")
        seen.add(e.id)
    qseen: set[str] = set()
    for q in s.questions:
        if q.id in qseen:
            bad(f"question id {q.id} is used twice; give every question its own id")
        qseen.add(q.id)
    for e in s.events:
        for p in e.parents:
            if p not in seen:
                bad(f"event {e.id} names parent {p}, which is not in the file")
    if s.anchor not in seen:
        bad(f"anchor {s.anchor} is not an event of the file")
    if not out:
        cycle = _find_cycle(s)
        if cycle:
            bad(f"events form a cycle: {' -> '.join(cycle)}; parents must point to earlier turns")
    return out


def _find_cycle(s: Scenario) -> list[str]:
    """A cycle through parent links as a list of ids, or [] (iterative DFS)."""
    parents = {e.id: e.parents for e in s.events}
    state: dict[str, int] = {}  # 1: on the current DFS stack, 2: finished
    for root in parents:
        if root in state:
            continue
        stack: list[tuple[str, int]] = [(root, 0)]
        trail: list[str] = [root]
        state[root] = 1
        while stack:
            node, i = stack[-1]
            if i < len(parents[node]):
                stack[-1] = (node, i + 1)
                nxt = parents[node][i]
                if state.get(nxt) == 1:
                    return [*trail[trail.index(nxt) :], nxt]
                if nxt not in state:
                    state[nxt] = 1
                    stack.append((nxt, 0))
                    trail.append(nxt)
            else:
                state[node] = 2
                stack.pop()
                trail.pop()
    return []


def _rule2(s: Scenario, forks: list[_Fork]) -> list[Violation]:
    """Rule 2: the anchor's path forks, and an off-path branch holds a message."""
    if not forks:
        return [
            Violation(
                s.id,
                2,
                f"the path of anchor {s.anchor} never forks: no ancestor of the anchor has a "
                "child off the path; add the abandoned sibling branch",
            )
        ]
    if not any(f.has_message for f in forks):
        heads = ", ".join(f.off_child for f in forks)
        return [
            Violation(
                s.id,
                2,
                f"the off-path branches ({heads}) hold no user or assistant message; "
                "a sibling branch must contain at least one message",
            )
        ]
    return []


def _rules345(s: Scenario, g: _Graph) -> list[Violation]:
    """Rules 3 (answers on path), 4 (forbidden only off path), 5 (not in question)."""
    out: list[Violation] = []
    off = set(g.events) - g.path
    for q in s.questions:
        for w in q.answer_any:
            if w and not g.holding(w, g.path):
                where = g.holding(w, off)
                hint = f" (it occurs only off the path, in {', '.join(where)})" if where else ""
                out.append(
                    Violation(
                        s.id,
                        3,
                        f"{q.id}: answer word {w!r} occurs in no event on the anchor's path"
                        f"{hint}; use a word said on the path",
                    )
                )
        for w in q.forbidden_any:
            if not w:
                continue
            on_hits = g.touching(w, g.path)
            if on_hits:
                out.append(
                    Violation(
                        s.id,
                        4,
                        f"{q.id}: forbidden word {w!r} occurs on the anchor's path in "
                        f"{', '.join(on_hits)}; a forbidden word must be found only off the path",
                    )
                )
            if not g.holding(w, off):
                out.append(
                    Violation(
                        s.id,
                        4,
                        f"{q.id}: forbidden word {w!r} occurs in no event off the anchor's path; "
                        "use the value the abandoned branch actually holds",
                    )
                )
        text = q.question.casefold()
        for label, words in (("forbidden", q.forbidden_any), ("superseded", q.superseded_any)):
            for w in words:
                if w and w.casefold() in text:
                    out.append(
                        Violation(
                            s.id,
                            5,
                            f"{q.id}: {label} word {w!r} occurs in the question text; rephrase "
                            "the question so a correct answer need not repeat it",
                        )
                    )
    return out


def _rule6(s: Scenario) -> list[Violation]:
    """Rule 6: the keyword lists are present where required and do not overlap."""
    out: list[Violation] = []

    def bad(q: str, msg: str) -> None:
        out.append(Violation(s.id, 6, f"{q}: {msg}"))

    for q in s.questions:
        if not q.answer_any:
            bad(q.id, "answer_any is empty; every question needs at least one answer word")
        if q.type == "leak" and not q.forbidden_any:
            bad(q.id, "a leak question needs at least one forbidden_any word")
        if q.type == "retain" and q.forbidden_any:
            bad(q.id, "forbidden_any is for leak questions only; make it a leak question")
        for name, words in (
            ("answer_any", q.answer_any),
            ("forbidden_any", q.forbidden_any),
            ("superseded_any", q.superseded_any),
        ):
            if any(not w.strip() for w in words):
                bad(q.id, f"{name} holds an empty word, which would match any text")
        answers = [w for w in q.answer_any if w.strip()]
        for f in (w for w in q.forbidden_any if w.strip()):
            for a in answers:
                if a.casefold() == f.casefold():
                    bad(q.id, f"{a!r} is both an answer word and a forbidden word")
                elif a.casefold() in f.casefold():
                    bad(
                        q.id,
                        f"answer word {a!r} is part of forbidden word {f!r}: a leaking answer "
                        "would also count as right; choose a more specific answer word",
                    )
                elif f.casefold() in a.casefold():
                    bad(
                        q.id,
                        f"forbidden word {f!r} is part of answer word {a!r}: a right answer "
                        "would count as a leak; choose a more specific forbidden word",
                    )
        for w in q.superseded_any:
            if w.strip() and w.casefold() in (a.casefold() for a in answers):
                bad(q.id, f"{w!r} is both an answer word and a superseded word")
    return out


def _rule7(s: Scenario, g: _Graph, forks: list[_Fork]) -> list[Violation]:
    """Rule 7: the conversation has the shape its ``fork_type`` names."""
    out: list[Violation] = []

    def bad(msg: str) -> None:
        out.append(Violation(s.id, 7, msg))

    role = {eid: e.role for eid, e in g.events.items()}
    real = [f for f in forks if f.has_message]
    if s.fork_type in ("edit", "regenerate"):
        want = "user" if s.fork_type == "edit" else "assistant"
        if not any(
            role[f.off_child] == want and any(role[c] == want for c in f.on_children) for f in real
        ):
            bad(
                f"fork_type {s.fork_type} needs a fork between two {want} messages: an on-path "
                f"{want} message and an off-path sibling {want} message under the same parent"
            )
    elif s.fork_type == "checkpoint":
        memo: dict[str, int] = {}
        best = max((g.turns_below(f.off_child, memo) for f in real), default=0)
        if best < CHECKPOINT_MIN_TURNS:
            bad(
                f"fork_type checkpoint needs the abandoned branch to run at least "
                f"{CHECKPOINT_MIN_TURNS} turns (assistant messages) below the fork point; "
                f"the longest holds {best}: fork from an earlier checkpoint"
            )
    elif s.fork_type == "switch_back":
        if not any(any(g.order[c] < g.order[f.off_child] for c in f.on_children) for f in real):
            bad(
                "fork_type switch_back needs the anchor on the earlier-arriving sibling: at some "
                "fork the on-path child must be listed before an off-path sibling"
            )
    elif s.fork_type == "in_branch_change" and not any(q.superseded_any for q in s.questions):
        bad(
            "fork_type in_branch_change needs a question with superseded_any: the earlier "
            "value the user replaced on the anchor's path"
        )
    for q in s.questions:
        if not q.superseded_any:
            continue
        answer_events = {e for a in q.answer_any if a for e in g.holding(a, g.path)}
        earlier: set[str] = set()
        for e in answer_events:
            earlier |= g.ancestors_or_self(e) - {e}
        for w in q.superseded_any:
            if not w:
                continue
            if not g.holding(w, g.path):
                bad(
                    f"{q.id}: superseded word {w!r} occurs in no event on the anchor's path; "
                    "it must be a value the user gave earlier on this path"
                )
            elif not g.holding(w, earlier):
                bad(
                    f"{q.id}: superseded word {w!r} occurs in no ancestor of an event holding an "
                    "answer word; the replaced value must come before the value that replaced it"
                )
    return out


def _rule8(s: Scenario, g: _Graph) -> list[Violation]:
    """Rule 8 (threads, v1.1): ``heads`` holds exactly the newest event of every
    thread but the anchor's. A thread is the events below one root (set)."""
    if not s.heads:
        return []
    out: list[Violation] = []

    def thread(eid: str) -> frozenset[str]:
        return frozenset(a for a in g.ancestors_or_self(eid) if not g.events[a].parents)

    newest: dict[frozenset[str], str] = {}
    for e in s.events:  # arrival order: the last one of a thread is its head
        newest[thread(e.id)] = e.id
    own = thread(s.anchor)
    for head in s.heads:
        if head not in g.events:
            out.append(Violation(s.id, 8, f"head {head} is not an event of the file"))
        elif thread(head) == own:
            out.append(Violation(s.id, 8, f"head {head} is in the anchor's own thread"))
        elif newest[thread(head)] != head:
            out.append(
                Violation(
                    s.id,
                    8,
                    f"head {head} is not its thread's newest event ({newest[thread(head)]})",
                )
            )
    want = sorted(h for t, h in newest.items() if t != own)
    if sorted(s.heads) != want and not out:
        out.append(Violation(s.id, 8, f"heads {list(s.heads)} should be {want}, one per thread"))
    return out


def validate_scenario(s: Scenario) -> list[Violation]:
    """Every rule violation of one scenario, in rule order; [] means valid.

    >>> from branchbench.scenario import scenario_from_dict
    >>> validate_scenario(scenario_from_dict({"id": "x", "fork_type": "edit",
    ...     "events": [], "anchor": "a", "questions": []}))[0].rule
    0
    """
    out = _fields(s) + _rule1(s) + _rule6(s)
    if not any(v.rule == 1 for v in out) and s.events:
        g = _Graph(s)
        forks = g.forks()
        out += _rule2(s, forks) + _rules345(s, g) + _rule7(s, g, forks) + _rule8(s, g)
    return sorted(out, key=lambda v: v.rule)
