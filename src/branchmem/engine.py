"""`Engine`: what every capability of a store works with, in one place.

An engine holds the backend, the clock, the lifecycle `Policy`, the
redactor (and its `Scrub`), the hook the background embedder is told of new
records through, and every cache kept between calls. The capabilities
(`branchmem.ops`) are plain functions that take it first; `Store` holds one
and delegates to them.

The caches follow one rule (`Engine.sync`). Several `Store` objects, in one
process or many, may share one file, so a cache that outlives a transaction
is checked against the file's state, the backend's `Generation`, inside the
read or write that uses it: when ``erasures`` moved since the engine last
looked (a purge, by this store or any other on the file, may even have
rebuilt a namespace with the same ids), every cache is cleared. What a cache
keeps besides is checked by the cache against the rows it was made from
(each says how). A purge through this engine also tells every cache what it
erased (`Engine.forget`), at once.

>>> from branchmem.backends.memory import MemoryBackend
>>> engine = Engine(MemoryBackend())
>>> engine.generation().erasures
0
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any, Protocol, TypeVar

from .backends.base import Backend, Generation, Pos
from .backends.memory import MemoryBackend
from .copies import ViaCopies
from .errors import InvalidInput
from .lineage_memo import RangesMemo
from .model import Event, Memory
from .policy import Policy
from .redact import Redactor
from .redact.scrub import Scrub
from .validate import check_time, show

_Item = TypeVar("_Item", Event, Memory)


class Cache(Protocol):
    """What the engine asks of a cache it holds."""

    def clear(self) -> object:
        """Drop everything: something was erased, so nothing derived before holds."""
        ...

    def forget(self, ns: str, ids: list[str] | None, /) -> object:
        """Drop what was derived from these records of ``ns`` (every record of
        it when ``ids`` is None): a purge through this engine erased them."""
        ...


_C = TypeVar("_C", bound=Cache)


class Engine:
    """A backend with the clock, policy, redactor and caches a store works with.

    ``clock`` gives the time written on events and records (a clock that
    returns ints gets floats back, as every backend stores them).
    """

    def __init__(
        self,
        backend: Backend,
        *,
        clock: Callable[[], float] = time.time,
        policy: Policy | None = None,
        redactor: Redactor | None = None,
    ) -> None:
        self.backend = backend
        self.clock = clock if clock is time.time else _float_clock(clock)
        self.policy = policy if policy is not None else Policy()
        self.redactor = redactor
        self.scrub = Scrub(redactor) if redactor is not None else None
        self.on_records: Callable[[str, list[Memory]], None] | None = None
        """Told of the records each write adds, once it commits (`BackgroundEmbedder`)."""
        self.ranges_memo = RangesMemo()
        self.via_copies = ViaCopies()
        self.query_logs: set[str] = set()
        """Paths of the query logs this engine's searches wrote to (for purge)."""
        self._caches: dict[str, Cache] = {"ranges": self.ranges_memo, "via": self.via_copies}
        self._erasures: int | None = None
        self._lock = threading.Lock()

    def close(self) -> None:
        self.backend.close()

    # ---------------------------------------------------------------- caches
    def sync(self, gen: Generation) -> None:
        """Clear every cache if something was erased since the engine last looked.
        ``gen`` is the backend's, read in the transaction that uses the caches."""
        if gen.erasures != self._erasures:
            with self._lock:
                if gen.erasures != self._erasures:
                    for c in self._caches.values():
                        c.clear()
                    self._erasures = gen.erasures

    @property
    def synced(self) -> bool:
        """Has the engine checked its caches against the store at least once?"""
        return self._erasures is not None

    def generation(self) -> Generation:
        """Where the store's contents stand now, the caches synced to it.

        >>> from branchmem.backends.memory import MemoryBackend
        >>> engine = Engine(MemoryBackend())
        >>> g = engine.generation()
        >>> with engine.backend.transaction():
        ...     engine.backend.set_branch("default", "main", "e1")
        >>> engine.generation().writes != g.writes, engine.generation().erasures == g.erasures
        (True, True)
        """
        with self.backend.reading():
            gen = self.backend.generation()
        self.sync(gen)
        return gen

    def cache(self, name: str, make: Callable[[], _C]) -> _C:
        """The cache registered under ``name``, made by ``make`` on first use."""
        c = self._caches.get(name)
        if c is None:
            with self._lock:
                c = self._caches.get(name)
                if c is None:
                    c = self._caches[name] = make()
        return c  # type: ignore[return-value]

    def find(self, name: str) -> Cache | None:
        """The cache registered under ``name``, if any."""
        return self._caches.get(name)

    def attach(self, name: str, cache: Cache) -> None:
        """Register ``cache`` under ``name`` (replacing any)."""
        with self._lock:
            self._caches[name] = cache

    def detach(self, name: str, cache: Cache) -> None:
        """Unregister ``cache`` if it is the one under ``name``."""
        with self._lock:
            if self._caches.get(name) is cache:
                del self._caches[name]

    def forget(self, ns: str, ids: list[str] | None) -> None:
        """Tell every cache what a purge through this engine erased."""
        with self._lock:
            caches = list(self._caches.values())
        for c in caches:
            c.forget(ns, ids)

    # ------------------------------------------------------------- redaction
    # Every write goes through these (see `branchmem.redact.scrub` for the rule):
    # without a redactor each is one test of ``self.scrub``.
    def redact(self, text: str) -> str:
        """Text as stored (content, a logged query, an actor): redacted."""
        return text if self.scrub is None or not text else self.scrub.text(text)

    def redact_value(self, value: Any) -> Any:
        """A structured value as stored (``meta``, search filters): every string redacted."""
        return value if self.scrub is None else self.scrub.value(value)

    def identifier(self, value: str, what: str) -> str:
        """An identifier as stored: itself, or refused if it holds personal data."""
        return value if self.scrub is None else self.scrub.identifier(value, what)

    def redacted(self, items: list[_Item]) -> list[_Item]:
        """Events or records as stored, before they are written: ids checked,
        content and ``meta`` redacted."""
        if self.scrub is None or not items:
            return items
        if isinstance(items[0], Event):
            return self.scrub.events(items)
        return self.scrub.records(items)

    # --------------------------------------------------------------- lineage
    def seg_parents(self, ns: str) -> Callable[[Iterable[int]], dict[int, tuple[Pos, ...]]]:
        """The fork points of segments of ``ns``, as `branchmem.lineage` asks for them."""
        b = self.backend
        return lambda segs: b.segment_parents(ns, segs)


class SupportsEngine(Protocol):
    """Anything that holds an engine: a `Store`."""

    @property
    def _engine(self) -> Engine: ...


def engine_of(store: Engine | SupportsEngine) -> Engine:
    """The engine of a `Store`, or the engine itself (public retrieval functions
    take either)."""
    return store if isinstance(store, Engine) else store._engine


def open_engine(
    path: str | os.PathLike[str] | None,
    *,
    backend: Backend | None = None,
    clock: Callable[[], float] = time.time,
    policy: Policy | None = None,
    create: bool = True,
    readonly: bool = False,
    busy_timeout: float = 30.0,
    durability: str = "full",
    redactor: Redactor | None = None,
) -> Engine:
    """The engine of ``Store(path, ...)``: its arguments checked, its backend opened."""
    if path is not None and not isinstance(path, (str, os.PathLike)):
        raise InvalidInput(
            f"path must be a file path (str or os.PathLike) or None for memory, "
            f"got {type(path).__name__}"
        )
    if redactor is not None and not isinstance(redactor, Redactor):
        raise InvalidInput(
            f"redactor must be a branchmem.Redactor or None, got {type(redactor).__name__}"
        )
    if not callable(clock):
        raise InvalidInput("clock must be a callable returning seconds, like time.time")
    if not isinstance(readonly, bool):
        raise InvalidInput(f"readonly must be True or False, got {show(readonly)}")
    if durability not in ("full", "normal"):
        raise InvalidInput(f'durability must be "full" or "normal", got {show(durability)}')
    timeout = check_time(busy_timeout, "busy_timeout")
    if timeout is None or timeout < 0:
        raise InvalidInput(f"busy_timeout must be seconds >= 0, got {show(busy_timeout)}")
    if backend is None:
        backend = _backend(path, create, readonly, timeout, durability)
    return Engine(backend, clock=clock, policy=policy, redactor=redactor)


def _backend(
    path: str | os.PathLike[str] | None,
    create: bool,
    readonly: bool,
    timeout: float,
    durability: str,
) -> Backend:
    if path is None or str(path) == ":memory:":
        if readonly:
            raise InvalidInput("readonly=True applies to a store file; pass its path")
        return MemoryBackend()
    if isinstance(path, str) and path.startswith(("postgresql://", "postgres://")):
        if readonly:  # refused rather than ignored: a caller relying on it must know
            raise InvalidInput(
                "readonly=True applies to SQLite store files; a PostgreSQL store has no "
                "read-only mode"
            )
        return _postgres(path, create=create, durability=durability)
    scheme = _url_scheme(path)
    if scheme is not None:  # else 'mysql://h/db' reads as a file in a folder 'mysql:'
        raise InvalidInput(
            f"no backend opens {scheme}:// URLs; pass an SQLite file path, a "
            "postgresql:// URL, backend=, or None for a store in memory"
        )
    from .backends.sqlite.backend import SQLiteBackend

    return SQLiteBackend(
        os.fspath(path),
        create=create,
        readonly=readonly,
        busy_timeout=timeout,
        durability=durability,
    )


def _url_scheme(path: str | os.PathLike[str]) -> str | None:
    """The scheme of ``path`` when it is written as a URL (``scheme://...``), else
    None. Only the scheme: the rest may hold a password."""
    if not isinstance(path, str):
        return None
    scheme, sep, _ = path.partition("://")
    if sep and scheme[:1].isalpha() and all(c.isalnum() or c in "+.-" for c in scheme):
        return scheme
    return None


def _postgres(url: str, *, create: bool, durability: str) -> Backend:
    """A `PostgresBackend`, or one line naming the extra when psycopg is missing."""
    from .backends.postgres.backend import PostgresBackend

    try:
        return PostgresBackend(url, create=create, durability=durability)
    except ModuleNotFoundError as exc:
        if exc.name not in ("psycopg", "psycopg_pool"):
            raise
        raise InvalidInput(
            f"a PostgreSQL store needs the postgres extra ({exc.name} is not installed): "
            "pip install 'branchmem[postgres]'"
        ) from exc


def _float_clock(clock: Callable[[], float]) -> Callable[[], float]:
    """A caller's clock whose readings are floats, so that every backend hands
    back the same ``created_at`` (an int clock's 5 comes back as 5.0 everywhere)."""

    def now() -> float:
        t = clock()
        if type(t) is float:
            return t
        if isinstance(t, bool) or not isinstance(t, (int, float)):
            raise InvalidInput(f"clock() must return seconds as a number, got {show(t)}")
        return float(t)

    return now
