"""`GraphView`: the relation graph visible at an anchor (or a scope chain).

An edge is in the view iff its record is visible at one of the anchors: every
source on that anchor's path, no retraction of it visible there, and its time
not past (``valid_from``/``valid_to``, expiry, archive). Every read of the view
walks visible edges only, so an edge from an abandoned branch never steers a
neighbour list, a path or a search's expansion.

An entity exists in the view iff a visible edge names it or a visible record
(a memory, a summary: not an edge) mentions its name (`Mentions`, over the
names edges of the namespace name). One only mentioned has no neighbours.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from typing import Any

from ..backends.base import RecordRow
from ..engine import Engine
from ..errors import InvalidInput, UnknownEntity
from ..gate import read_views
from ..lineage import row_in_ranges
from ..model import Memory
from ..ops.times import time_hides
from ..validate import show
from .memo import ViewMemo
from .model import ALIAS, MAX_EDGES, MAX_HOPS, Edge, Entity, Path, norm

DIRECTIONS = ("both", "out", "in")


class GraphView:
    """The visible graph at ``at``; made by `Store.graph`.

    >>> from branchmem import Store
    >>> store = Store()
    >>> _ = store.add_events([{"id": "e1"}, {"id": "e2", "parent": "e1"}])
    >>> _ = store.add_edge("Alice", "owns", "auth-service", sources=["e1"])
    >>> _ = store.add_edge("auth-service", "uses", "jsonwebtoken", sources=["e2"])
    >>> [str(p) for p in store.graph(at="e2").paths("Alice", "jsonwebtoken")]
    ['Alice -owns-> auth-service -uses-> jsonwebtoken']
    >>> store.graph(at="e1").neighbors("auth-service")
    [Edge(Alice -owns-> auth-service, sources=[e1])]
    """

    __slots__ = (
        "_asked",
        "_comp",
        "_cut_seq",
        "_engine",
        "_index",
        "_kept",
        "_lifecycle",
        "_memo",
        "_nb",
        "_now",
        "_touch",
        "_views",
        "at",
        "namespace",
    )

    def __init__(
        self,
        engine: Engine,
        ns: str,
        at: str | list[str],
        memo: ViewMemo,
        now: float,
        lifecycle: bool,
        *,
        kept: bool = False,
    ) -> None:
        self.at = at
        self.namespace = ns
        self._engine = engine
        # One anchor state's ranges, index cut and answers, shared by the views made
        # there while nothing is written (memo.py).
        self._views = memo.views
        self._index = memo.index
        self._cut_seq = memo.cut  # what a later write appends is not in this view
        self._now = now
        self._lifecycle = lifecycle
        self._touch = memo.touch
        self._comp = memo.comp
        self._nb = memo.nb
        self._asked = memo.asked
        self._memo = memo
        self._kept = kept  # kept at its anchor for `Store.graph` (then it follows the clock)

    # ---------------------------------------------------------- the gate
    def _shows(self, row: RecordRow) -> bool:
        m = row.memory
        if m.seq > self._cut_seq:
            return False
        rets = self._index.retractions.get(m.id)
        for rs in self._views:
            if row_in_ranges(row, rs) and not (
                rets and any(r.memory.seq <= self._cut_seq and row_in_ranges(r, rs) for r in rets)
            ):
                return True
        return False

    def via(self, edge_id: str) -> int | None:
        """The place in the view's anchors of the first that shows ``edge_id``."""
        row = self._index.rows.get(edge_id)
        if row is None:
            return None
        for i, rs in enumerate(self._views):
            rets = self._index.retractions.get(edge_id)
            if row_in_ranges(row, rs) and not (
                rets and any(r.memory.seq <= self._cut_seq and row_in_ranges(r, rs) for r in rets)
            ):
                return i
        return None

    def record(self, edge_id: str) -> Memory:
        """The stored record of an edge of the index."""
        return self._index.rows[edge_id].memory

    def mentioned(self, text: str) -> list[str]:
        """The entities (by name) a visible edge names that ``text`` mentions."""
        keys = self._index.mentions().find(text)
        out = {self._name(self._members(k)) for k in keys if self.linked(k)}
        return sorted(out)

    def _said_here(self) -> frozenset[str]:
        """The normalised names of the index that records visible here mention
        (read once per anchor state; per view where a record's time matters)."""
        memo = self._memo
        if memo.said is not None:
            return memo.said
        b = self._engine.backend
        top = memo.top
        with b.reading():
            groups, _ = read_views(self._engine, self.namespace, self._views, None)
            live = [m for g in groups for m in g if top is None or m.seq <= top]
            timed = self._lifecycle or any(
                m.valid_from is not None or m.valid_to is not None or m.expires_at is not None
                for m in live
            )
            if timed:
                # The time matters: asked each time (a view kept at the anchor for
                # `Store.graph` follows the clock; another has its own time).
                life = b.get_life(self.namespace, [m.id for m in live]) if live else {}
                t = self._engine.clock() if self._kept else self._now
                inf = float("inf")
                live = [m for m in live if time_hides(m, life.get(m.id), t, inf, False) is None]
        find = self._index.mentions().find
        said = frozenset(k for m in live for k in find(m.content))
        if not timed:
            memo.said = said
        return said

    def names_of(self, name: str) -> tuple[str, ...]:
        """The normalised names of the entity ``name`` (itself and its aliases)."""
        return self._members(norm(name))

    def _timely(self, rows: list[RecordRow]) -> list[RecordRow]:
        t = self._now
        if not self._lifecycle:
            return [
                r
                for r in rows
                if (r.memory.valid_from is None or t >= r.memory.valid_from)
                and (r.memory.valid_to is None or t < r.memory.valid_to)
                and (r.memory.expires_at is None or t < r.memory.expires_at)
            ]
        b = self._engine.backend
        with b.reading():
            life = b.get_life(self.namespace, [r.memory.id for r in rows]) if rows else {}
        inf = float("inf")
        return [
            r for r in rows if time_hides(r.memory, life.get(r.memory.id), t, inf, False) is None
        ]

    def _touching(self, key: str) -> list[Edge]:
        """The visible edges with ``key`` (a normalised name) at either end, by seq."""
        got = self._touch.get(key)
        if got is not None:
            return got
        segs = self._index.by_name.get(key)
        rows: list[RecordRow] = []
        if segs:
            seen: set[str] = set()
            for rs in self._views:
                if len(segs) <= len(rs):
                    pairs: Iterable[tuple[int, list[RecordRow]]] = segs.items()
                else:
                    pairs = ((g, segs[g]) for g in rs if g in segs)
                for g, lst in pairs:
                    upto = rs.get(g, -1)
                    for row in lst:
                        pos = row.pos
                        if (
                            pos is not None
                            and pos[1] <= upto
                            and row.memory.id not in seen
                            and self._shows(row)
                        ):
                            seen.add(row.memory.id)
                            rows.append(row)
            rows = self._timely(rows)
            rows.sort(key=lambda r: r.memory.seq)
        edges = self._index.edges
        got = self._touch[key] = [edges[r.memory.id] for r in rows]
        return got

    # ---------------------------------------------------------- entities
    def _members(self, key: str) -> tuple[str, ...]:
        """The normalised names merged with ``key`` by visible alias edges."""
        got = self._comp.get(key)
        if got is not None:
            return got
        seen = {key}
        todo = [key]
        while todo:
            k = todo.pop()
            for e in self._touching(k):
                if norm(e.predicate) == ALIAS:
                    for other in (norm(e.subject), norm(e.object)):
                        if other not in seen:
                            seen.add(other)
                            todo.append(other)
        subj = self._index.alias_subjects
        members = tuple(sorted(seen, key=lambda k: (k in subj and len(seen) > 1, k)))
        for k in members:
            self._comp[k] = members
        return members

    def _node(self, name: str) -> tuple[str, ...]:
        """The members of the entity ``name`` names (`UnknownEntity` if none here)."""
        if not isinstance(name, str) or not name.strip():
            raise InvalidInput(f"an entity is a non-empty name, got {show(name)}")
        members = self._members(norm(name))
        if not any(self._touching(k) for k in members) and not self._said_here().intersection(
            members
        ):
            raise UnknownEntity(name, self.at, self.namespace)
        return members

    def linked(self, name: str) -> bool:
        """Does a visible edge name ``name`` (or one of its aliases)?"""
        return any(self._touching(k) for k in self._members(norm(name)))

    def has(self, name: str) -> bool:
        """Is ``name`` an entity here: named by a visible edge, or mentioned by a
        visible record (it, or one of its aliases)?"""
        members = self._members(norm(name))
        return any(self._touching(k) for k in members) or bool(
            self._said_here().intersection(members)
        )

    def entity(self, name: str) -> Entity:
        """The entity ``name`` names, with its aliases (`UnknownEntity` if none)."""
        members = self._node(name)
        d = self._index.display
        return Entity(d.get(members[0], members[0]), tuple(d.get(k, k) for k in members[1:]))

    def entities(self) -> list[Entity]:
        """Every entity a visible edge names or a visible record mentions, by name."""
        out: dict[str, Entity] = {}
        said = self._said_here()
        for key in sorted({*self._index.by_name, *said}):
            if key not in said and not self._touching(key):
                continue
            members = self._members(key)
            if members[0] not in out:
                out[members[0]] = self.entity(members[0])
        return [out[k] for k in sorted(out)]

    # ---------------------------------------------------------- edges
    def neighbors(
        self, entity: str, *, predicate: str | None = None, direction: str = "both"
    ) -> list[Edge]:
        """The visible edges at ``entity`` (or its aliases), oldest first; alias
        edges only when ``predicate`` asks for them. ``direction`` is
        ``"both"``, ``"out"`` (``entity`` the subject) or ``"in"``."""
        # Asked before with these very arguments: the answer kept then.
        asked: Any = None
        if type(entity) is str:
            if predicate is None and direction == "both":
                asked = entity
            elif (predicate is None or type(predicate) is str) and type(direction) is str:
                asked = (entity, predicate, direction)
            kept = self._asked.get(asked)
            if kept is not None:
                return list(kept)
        if direction not in DIRECTIONS:
            raise InvalidInput(
                f"direction must be one of {', '.join(DIRECTIONS)}; got {show(direction)}"
            )
        members = self._node(entity)
        want = None if predicate is None else norm(predicate)
        key = (members, want, direction)
        kept = self._nb.get(key)
        if kept is not None:
            if asked is not None:
                self._asked[asked] = kept
            return list(kept)
        if len(members) == 1:
            found = self._touching(members[0])
        else:
            by_id = {e.id: e for k in members for e in self._touching(k)}
            found = sorted(by_id.values(), key=lambda e: e.seq)
        keys = set(members)
        out = []
        for e in found:
            p = norm(e.predicate)
            if (p == ALIAS and want != ALIAS) or (want is not None and p != want):
                continue
            if direction == "out" and norm(e.subject) not in keys:
                continue
            if direction == "in" and norm(e.object) not in keys:
                continue
            out.append(e)
        self._nb[key] = out
        if asked is not None:
            self._asked[asked] = out
        return list(out)

    def edges(self, entity: str | None = None, *, predicate: str | None = None) -> list[Edge]:
        """Every visible edge (at ``entity`` if given), oldest first."""
        if entity is not None:
            return self.neighbors(entity, predicate=predicate)
        want = None if predicate is None else norm(predicate)
        rows = [r for r in self._index.rows.values() if r.pos is not None and self._shows(r)]
        rows = self._timely(rows)
        rows.sort(key=lambda r: r.memory.seq)
        out = [self._index.edges[r.memory.id] for r in rows]
        return out if want is None else [e for e in out if norm(e.predicate) == want]

    # ---------------------------------------------------------- paths
    def reach(
        self, starts: Iterable[str], *, max_hops: int = 2, max_edges: int = 10_000
    ) -> dict[str, Path]:
        """A shortest path (of at most ``max_hops`` visible edges) from one of
        ``starts`` to each entity reached, by the entity's name; at most
        ``max_edges`` edges are looked at. Starts that name nothing are skipped."""
        hops, budget = _bounds(max_hops, max_edges)
        best: dict[tuple[str, ...], Path] = {}
        frontier: deque[tuple[tuple[str, ...], Path]] = deque()
        for s in starts:
            if not isinstance(s, str) or not s.strip() or not self.has(s):
                continue
            node = self._members(norm(s))
            if node not in best:
                p = Path((self._name(node),), ())
                best[node] = p
                frontier.append((node, p))
        looked = 0
        while frontier:
            node, path = frontier.popleft()
            if path.hops >= hops:
                continue
            for e in self._node_edges(node):
                looked += 1
                if looked > budget:
                    frontier.clear()
                    break
                nxt = self._other(e.id, node)
                if nxt in best:
                    continue
                p = Path((*path.nodes, self._name(nxt)), (*path.edges, e))
                best[nxt] = p
                frontier.append((nxt, p))
        return {self._name(n): p for n, p in best.items()}

    def paths(
        self,
        start: str,
        end: str,
        *,
        max_hops: int = 3,
        max_edges: int = 10_000,
        limit: int = 10,
    ) -> list[Path]:
        """The shortest paths from ``start`` to ``end`` along visible edges (either
        direction), at most ``limit`` of them and ``max_hops`` long; cycles are
        walked once. At most ``max_edges`` edges are looked at."""
        hops, budget = _bounds(max_hops, max_edges)
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 1000:
            raise InvalidInput(f"limit must be an integer in 1..1000, got {show(limit)}")
        a, z = self._node(start), self._node(end)
        if a == z:
            return [Path((self._name(a),), ())]
        dist = {a: 0}
        preds: dict[tuple[str, ...], list[tuple[tuple[str, ...], Edge]]] = {}
        level = [a]
        looked = 0
        found = False
        for d in range(1, hops + 1):
            nxt_level: list[tuple[str, ...]] = []
            for node in level:
                for e in self._node_edges(node):
                    looked += 1
                    if looked > budget:
                        break
                    nxt = self._other(e.id, node)
                    seen = dist.get(nxt)
                    if seen is None:
                        dist[nxt] = d
                        nxt_level.append(nxt)
                        seen = d
                    if seen == d:
                        preds.setdefault(nxt, []).append((node, e))
            if z in dist or looked > budget or not nxt_level:
                found = z in dist
                break
            level = nxt_level
        if not found:
            return []
        out: list[Path] = []

        def back(node: tuple[str, ...], nodes: list[str], edges: list[Edge]) -> None:
            if len(out) >= limit:
                return
            if node == a:
                out.append(Path(tuple(reversed(nodes)), tuple(reversed(edges))))
                return
            for prev, e in preds.get(node, ()):
                back(prev, [*nodes, self._name(prev)], [*edges, e])

        back(z, [self._name(z)], [])
        return out

    def _other(self, edge_id: str, node: tuple[str, ...]) -> tuple[str, ...]:
        """The entity at the end of ``edge_id`` that is not ``node``."""
        s, o = self._index.ends[edge_id]
        key = o if s in node else s
        got = self._comp.get(key)
        return got if got is not None else self._members(key)

    def _node_edges(self, node: tuple[str, ...]) -> list[Edge]:
        aliases = self._index.alias_ids
        if len(node) == 1:
            got = self._touching(node[0])
            return [e for e in got if e.id not in aliases] if aliases else got
        by_id = {e.id: e for k in node for e in self._touching(k) if e.id not in aliases}
        return sorted(by_id.values(), key=lambda e: e.seq)

    def _name(self, node: tuple[str, ...]) -> str:
        return self._index.display.get(node[0], node[0])

    def to_dict(self) -> dict[str, Any]:
        """Every visible entity and edge, JSON-friendly."""
        return {
            "at": self.at,
            "namespace": self.namespace,
            "entities": [e.to_dict() for e in self.entities()],
            "edges": [e.to_dict() for e in self.edges()],
        }


def _over(value: Any, most: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > most


def _bounds(max_hops: Any, max_edges: Any) -> tuple[int, int]:
    if isinstance(max_hops, bool) or not isinstance(max_hops, int) or not 1 <= max_hops <= MAX_HOPS:
        raise InvalidInput(
            f"max_hops must be an integer in 1..{MAX_HOPS}, got {show(max_hops)}"
            + ("; longer walks cost more than they find" if _over(max_hops, MAX_HOPS) else "")
        )
    if (
        isinstance(max_edges, bool)
        or not isinstance(max_edges, int)
        or not 1 <= max_edges <= MAX_EDGES
    ):
        raise InvalidInput(f"max_edges must be an integer in 1..{MAX_EDGES}, got {show(max_edges)}")
    return max_hops, max_edges
