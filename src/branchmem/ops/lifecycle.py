"""The memory lifecycle: decay, use, expiry, archive, validity, past answers.

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

from collections.abc import Iterable

from ..backends.base import LifeRow
from ..engine import Engine
from ..errors import InvalidInput, UnknownMemory
from ..model import Memory
from ..validate import check_actor, check_id, check_ids, check_namespace, check_time, show
from .audit import log


def touch(
    engine: Engine,
    ids: Iterable[str],
    *,
    namespace: str,
    now: float | None,
    actor: str | None,
) -> None:
    """`Store.touch`."""
    ns = check_namespace(namespace)
    want = check_ids(ids, "memory id")
    t = check_time(now, "now")
    actor = check_actor(actor)
    when = engine.clock() if t is None else t
    b = engine.backend
    with b.transaction():
        found = b.get_records(ns, want)
        for i in want:
            if i not in found:
                raise UnknownMemory(i, ns)
        life = b.get_life(ns, want)
        for i in want:
            lr = life.setdefault(i, LifeRow())
            lr.uses += 1
            lr.last_used = when if lr.last_used is None else max(lr.last_used, when)
        b.put_life(ns, life)
        log(engine, ns, "touch", want, actor, engine.clock())


def score(engine: Engine, memory_id: str, *, now: float | None, namespace: str) -> float:
    """`Store.score`."""
    ns = check_namespace(namespace)
    t = check_time(now, "now")
    b = engine.backend
    with b.reading():
        m = _stored(engine, ns, memory_id)
        life = b.get_life(ns, [m.id]).get(m.id)
    return engine.policy.score(m, engine.clock() if t is None else t, life)


def archive_expired(
    engine: Engine, now: float | None, *, namespace: str, actor: str | None
) -> list[str]:
    """`Store.archive_expired`."""
    ns = check_namespace(namespace)
    t = check_time(now, "now")
    actor = check_actor(actor)
    when = engine.clock()
    t = when if t is None else t
    b = engine.backend
    with b.transaction():
        ids = b.expired_records(ns, t)
        life = b.get_life(ns, ids)
        moved = []
        for i in ids:
            lr = life.setdefault(i, LifeRow())
            if lr.archived_at is None and lr.restored_at is None:
                lr.archived_at = when
                moved.append(i)
        if moved:
            b.put_life(ns, {i: life[i] for i in moved})
            log(engine, ns, "archive", moved, actor, when)
    return moved


def restore(engine: Engine, memory_id: str, *, namespace: str, actor: str | None) -> Memory:
    """`Store.restore`."""
    ns = check_namespace(namespace)
    actor = check_actor(actor)
    when = engine.clock()
    b = engine.backend
    with b.transaction():
        m = _stored(engine, ns, memory_id)
        lr = b.get_life(ns, [m.id]).get(m.id) or LifeRow()
        if lr.archived_at is None and (m.expires_at is None or m.expires_at > when):
            raise InvalidInput(
                f"memory {show(m.id)} is neither archived nor expired, so there is nothing "
                "to restore (restore() undoes archive_expired() or an expiry that passed)"
            )
        lr.archived_at, lr.restored_at = None, when
        b.put_life(ns, {m.id: lr})
        log(engine, ns, "restore", [m.id], actor, when)
    return m


def _stored(engine: Engine, ns: str, memory_id: str) -> Memory:
    """The stored record (whatever its visibility), or `UnknownMemory`."""
    row = engine.backend.get_records(ns, [check_id(memory_id, "memory id")]).get(memory_id)
    if row is None:
        raise UnknownMemory(memory_id, ns)
    return row.memory
