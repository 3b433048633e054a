"""The memory lifecycle: decay, use, expiry, archive, validity, past answers, pruning.

None of this is a second visibility mechanism: the gate decides what an
anchor can see, and the lifecycle only narrows a read's answer by time
(``now``, ``as_of``) and by archive state. Records never change; what
changes is small per-record state kept beside them (archived, restored,
uses, last use), written only by calls that say so (`touch`,
`archive_expired`, `restore`), never by a read.

- **Decay.** Each kind has a half-life (`Policy.half_lives`). A record's
  effective score is ``importance × 0.5 ** (age / half_life) × boost``,
  where age counts from its last use (or its creation) and ``boost`` grows
  with recorded uses up to `Policy.max_boost`.
- **Expiry.** ``expires_at`` (or the kind's default TTL from `Policy.ttls`,
  applied when the record is written) hides the record from reads at and
  after that time. `archive_expired` moves expired records to the archive;
  ``include_archived=True`` shows archived and expired records; `restore`
  brings one back for good (its expiry no longer applies).
- **Validity.** ``valid_from``/``valid_to`` say when the fact holds in the
  world; a read at ``now`` outside that span hides it (archive or not).
- **As of.** ``as_of=t`` answers as the store would have at ``t``: only
  events, records and retractions written by then, branch heads where they
  were then, and ``now`` defaulting to ``t``. Archive state is judged by the
  latest archive or restore time only (an earlier archive that a restore
  undid is not remembered).

`Store.visible` answers for the gate alone: it ignores expiry, validity and
the archive. `Store.explain` says so when one of them hides a record the
gate shows from reads now.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, cast

from .backends.base import LifeRow
from .branches import check_actor, log
from .errors import InvalidInput, UnknownAnchor, UnknownMemory
from .model import Memory, set_fresh
from .validate import check_ids, check_name, check_namespace, check_time, show

if TYPE_CHECKING:
    from .store import Store

HOUR = 3600.0
DAY = 24 * HOUR


def _default_half_lives() -> dict[str, float]:
    return {
        "working": 6 * HOUR,
        "episodic": 30 * DAY,
        "semantic": 365 * DAY,
        "procedural": 365 * DAY,
    }


def _finite(x: Any) -> bool:
    """A real number (not a bool) that converts to a finite float."""
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return False
    try:
        return math.isfinite(x)
    except OverflowError:
        return False


@dataclass(frozen=True)
class Policy:
    """How records age: half-lives and default TTLs per kind (seconds), and the use boost.

    >>> Policy(ttls={"working": 3600}).ttls["working"]
    3600
    """

    half_lives: Mapping[str, float] = field(default_factory=_default_half_lives)
    ttls: Mapping[str, float] = field(default_factory=dict)
    boost_per_use: float = 0.1
    max_boost: float = 2.0

    def __post_init__(self) -> None:
        for name, table in (("half_lives", self.half_lives), ("ttls", self.ttls)):
            if not isinstance(table, Mapping):
                raise InvalidInput(f"Policy.{name} must be a dict of kind -> seconds")
            for kind, secs in table.items():
                if not _finite(secs) or secs <= 0:
                    raise InvalidInput(
                        f"Policy.{name}[{show(kind)}] must be a positive, finite number of "
                        f"seconds, got {show(secs)}"
                    )
        if not _finite(self.max_boost) or not _finite(self.boost_per_use):
            raise InvalidInput("Policy.max_boost and boost_per_use must be finite numbers")
        if not self.max_boost >= 1.0 or self.boost_per_use < 0:
            raise InvalidInput("Policy.max_boost must be >= 1 and boost_per_use >= 0")

    def with_ttl(self, m: Memory) -> Memory:
        """``m`` with its kind's default TTL applied, if it has no ``expires_at``."""
        ttl = self.ttls.get(m.kind)
        if ttl is None or m.expires_at is not None:
            return m
        set_fresh(m, expires_at=m.created_at + ttl)
        return m

    def score(self, m: Memory, now: float, life: LifeRow | None = None) -> float:
        """``importance × decay(age) × boost(uses)``; see the module docstring."""
        uses = life.uses if life is not None else 0
        last = life.last_used if life is not None and life.last_used is not None else 0.0
        age = max(0.0, now - max(m.created_at, last))
        half = self.half_lives.get(m.kind, 365 * DAY)
        boost = min(self.max_boost, 1.0 + self.boost_per_use * uses)
        return float(m.importance * 0.5 ** (age / half) * boost)


def narrow(
    s: Store,
    ns: str,
    out: list[Memory],
    *,
    now: float | None,
    as_of: float | None,
    include_archived: bool,
) -> list[Memory]:
    """Drop records that a read at ``now`` (or ``as_of``) must not show."""
    with s._b.reading():
        if not out or not s._b.has_lifecycle(ns):  # the usual case, answered in O(1)
            return out
        life = s._b.get_life(ns, [m.id for m in out])
    t = now if now is not None else as_of if as_of is not None else s._clock()
    cutoff = as_of if as_of is not None else float("inf")
    return [m for m in out if time_hides(m, life.get(m.id), t, cutoff, include_archived) is None]


def time_hides(
    m: Memory, life: LifeRow | None, t: float, cutoff: float, include_archived: bool
) -> str | None:
    """What makes a read at time ``t`` leave ``m`` out (archive state as of
    ``cutoff``): ``"valid_from"``, ``"valid_to"``, ``"archived"`` or
    ``"expires_at"``; None if it shows it."""
    if m.valid_from is not None and t < m.valid_from:
        return "valid_from"
    if m.valid_to is not None and t >= m.valid_to:
        return "valid_to"
    if include_archived:
        return None
    if life is not None and life.archived_at is not None and life.archived_at <= cutoff:
        return "archived"
    restored = life is not None and life.restored_at is not None and life.restored_at <= cutoff
    if m.expires_at is not None and m.expires_at <= t and not restored:
        return "expires_at"
    return None


def _when(t: float) -> str:
    try:
        return datetime.fromtimestamp(t, timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
    except (ValueError, OverflowError, OSError):  # beyond the calendar: say the number
        return f"{t:g} (seconds since 1970)"


def time_note(s: Store, ns: str, m: Memory, now: float | None) -> str | None:
    """Why a read at ``now`` (default: the store's clock) leaves out a record the
    gate shows."""
    with s._b.reading():
        if not s._b.has_lifecycle(ns):
            return None
        life = s._b.get_life(ns, [m.id]).get(m.id)
    why = time_hides(m, life, s._clock() if now is None else now, float("inf"), False)
    if why == "valid_from":
        return f"it holds only from {_when(m.valid_from or 0.0)} (valid_from)"
    if why == "valid_to":
        return f"it held only until {_when(m.valid_to or 0.0)} (valid_to)"
    if why == "archived":
        assert life is not None and life.archived_at is not None
        return f"it was archived at {_when(life.archived_at)}; restore() brings it back"
    if why == "expires_at":
        return f"it expired at {_when(m.expires_at or 0.0)}; include_archived=True shows it"
    return None


def anchor_as_of(s: Store, ns: str, at: str, as_of: float) -> str | None:
    """The event ``at`` named at time ``as_of`` (None if it named nothing yet)."""
    if s._b.get_events(ns, [at]):
        event = at
    else:
        moves = s._b.head_moves(ns, at)
        if not moves:
            raise UnknownAnchor(at, ns)
        then = [m for m in moves if m.at <= as_of]
        if not then or then[-1].to_head is None:
            return None
        event = then[-1].to_head
    path = s.path(event, namespace=ns)
    if not path or max(e.created_at for e in path) > as_of:
        return None  # not connected yet at that time
    return event


def check_read_times(now: Any, as_of: Any) -> tuple[float | None, float | None]:
    return check_time(now, "now"), check_time(as_of, "as_of")


class LifecycleOps:
    """`Store` methods for decay, use, expiry, archive and pruning (mixed into `Store`)."""

    def touch(
        self,
        ids: Iterable[str],
        *,
        namespace: str = "default",
        now: float | None = None,
        actor: str | None = None,
    ) -> None:
        """Record one use of each memory (it raises their effective score).

        Reads never record use by themselves; pass ``touch=True`` to
        `memories` or call this.

        >>> from branchmem import Store
        >>> store = Store()
        >>> _ = store.add_event("e1")
        >>> m = store.add_memory("x", sources=["e1"])
        >>> before = store.score(m.id)
        >>> store.touch([m.id])
        >>> store.score(m.id) > before
        True
        """
        s = cast("Store", self)
        ns = check_namespace(namespace)
        want = check_ids(ids, "memory id")
        t = check_time(now, "now")
        actor = check_actor(actor)
        when = s._clock() if t is None else t
        with s._b.transaction():
            found = s._b.get_records(ns, want)
            for i in want:
                if i not in found:
                    raise UnknownMemory(i, ns)
            life = s._b.get_life(ns, want)
            for i in want:
                lr = life.setdefault(i, LifeRow())
                lr.uses += 1
                lr.last_used = when if lr.last_used is None else max(lr.last_used, when)
            s._b.put_life(ns, life)
            log(s, ns, "touch", want, actor, s._clock())

    def score(
        self, memory_id: str, *, now: float | None = None, namespace: str = "default"
    ) -> float:
        """The effective score of a memory at ``now``: importance × decay × use boost.

        >>> from branchmem import Store
        >>> store = Store(clock=lambda: 0.0)
        >>> _ = store.add_event("e1")
        >>> m = store.add_memory("x", sources=["e1"], kind="working", importance=0.8)
        >>> store.score(m.id, now=6 * 3600)  # one half-life of "working" later
        0.4
        """
        s = cast("Store", self)
        ns = check_namespace(namespace)
        t = check_time(now, "now")
        with s._b.reading():
            m = s.get_memory(memory_id, namespace=ns)
            life = s._b.get_life(ns, [m.id]).get(m.id)
        return s._policy.score(m, s._clock() if t is None else t, life)

    def archive_expired(
        self, now: float | None = None, *, namespace: str = "default", actor: str | None = None
    ) -> list[str]:
        """Move every record expired at ``now`` to the archive; returns their ids.

        >>> from branchmem import Store
        >>> store = Store(clock=lambda: 100.0)
        >>> _ = store.add_event("e1")
        >>> m = store.add_memory("x", sources=["e1"], expires_at=150.0)
        >>> store.archive_expired(now=200.0) == [m.id]
        True
        >>> store.memories(at="e1", now=120.0, include_archived=True) == [m]
        True
        """
        s = cast("Store", self)
        ns = check_namespace(namespace)
        t = check_time(now, "now")
        actor = check_actor(actor)
        when = s._clock()
        t = when if t is None else t
        with s._b.transaction():
            ids = s._b.expired_records(ns, t)
            life = s._b.get_life(ns, ids)
            moved = []
            for i in ids:
                lr = life.setdefault(i, LifeRow())
                if lr.archived_at is None and lr.restored_at is None:
                    lr.archived_at = when
                    moved.append(i)
            if moved:
                s._b.put_life(ns, {i: life[i] for i in moved})
                log(s, ns, "archive", moved, actor, when)
        return moved

    def restore(
        self, memory_id: str, *, namespace: str = "default", actor: str | None = None
    ) -> Memory:
        """Bring a record back from the archive, or back from expiry; its expiry no
        longer hides it. A record that is neither raises `InvalidInput`.

        >>> from branchmem import Store
        >>> store = Store(clock=lambda: 100.0)
        >>> _ = store.add_event("e1")
        >>> m = store.add_memory("x", sources=["e1"], expires_at=150.0)
        >>> _ = store.archive_expired(now=200.0)
        >>> store.restore(m.id) == m, store.memories(at="e1", now=300.0) == [m]
        (True, True)
        """
        s = cast("Store", self)
        ns = check_namespace(namespace)
        actor = check_actor(actor)
        when = s._clock()
        with s._b.transaction():
            m = s.get_memory(memory_id, namespace=ns)
            lr = s._b.get_life(ns, [m.id]).get(m.id) or LifeRow()
            if lr.archived_at is None and (m.expires_at is None or m.expires_at > when):
                raise InvalidInput(
                    f"memory {show(m.id)} is neither archived nor expired, so there is nothing "
                    "to restore (restore() undoes archive_expired() or an expiry that passed)"
                )
            lr.archived_at, lr.restored_at = None, when
            s._b.put_life(ns, {m.id: lr})
            log(s, ns, "restore", [m.id], actor, when)
        return m

    def prune_branches(
        self,
        prefix: str,
        older_than: float,
        *,
        namespace: str = "default",
        now: float | None = None,
        actor: str | None = None,
        check: Callable[[str], object] | None = None,
    ) -> list[str]:
        """Delete the branch pointers under ``prefix/`` whose head has not moved
        for ``older_than`` seconds. Records stay, reachable from any other
        anchor. Returns the names removed.

        ``prefix`` names a folder of the name hierarchy: ``"tmp"`` and
        ``"tmp/"`` both prune ``tmp/a`` and ``tmp/b/c``, never the branch
        ``tmp`` itself (`delete_branch` removes that) nor ``tmpx``.
        ``check``, if given, is called with each name that would be deleted,
        before any is; an exception it raises ends the call with nothing
        deleted (the server checks each name against the caller's grant).

        >>> from branchmem import Store
        >>> store = Store(clock=lambda: 0.0)
        >>> _ = store.add_event("e1")
        >>> _ = store.create_branch("tmp", at="e1")
        >>> _ = store.create_branch("tmp/a", at="e1")
        >>> store.prune_branches("tmp", older_than=60, now=3600.0)
        ['tmp/a']
        """
        s = cast("Store", self)
        ns = check_namespace(namespace)
        if isinstance(prefix, str) and prefix.endswith("/"):
            prefix = prefix[:-1]  # "tmp/" and "tmp" name the same subtree
        prefix = check_name(prefix, "branch prefix")
        age = check_time(older_than, "older_than")
        if age is None or age < 0:
            raise InvalidInput(
                f"older_than must be a number of seconds >= 0, got {show(older_than)}"
            )
        t = check_time(now, "now")
        actor = check_actor(actor)
        when = s._clock()
        cutoff = (when if t is None else t) - age
        with s._b.transaction():
            removed = [
                row.name
                for row in s._b.list_branch_rows(ns)
                if row.name.startswith(prefix + "/") and row.updated_at <= cutoff
            ]
            if check is not None:
                for name in removed:
                    check(name)
            for name in removed:
                s.delete_branch(name, namespace=ns, actor=actor)
            if removed:
                log(s, ns, "prune_branches", removed, actor, when)
        return removed
