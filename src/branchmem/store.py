"""`Store`: the one front door. The gate and every rule above storage live in it
and in the mixins it is composed of, one job each (see `branchmem.store_parts`).

A derived record is visible at an anchor iff every one of its sources is the
anchor or one of its ancestors, and no retraction of it is visible there.
Switching branches only moves the anchor; nothing is tagged or rewritten.
"""

from __future__ import annotations

import functools
import os
import time
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from .audit import AuditOps
from .backends.base import Backend, Generation, Pos
from .backends.memory import MemoryBackend
from .branches import BranchOps
from .errors import InvalidInput
from .ingest import EventOps
from .lifecycle import LifecycleOps, Policy
from .lineage_memo import RangesMemo
from .merge import MergeOps
from .model import Event, Memory
from .purge import PurgeOps
from .reads import ReadOps
from .records import RecordOps
from .redact import Redactor
from .redact.scrub import Scrub
from .scope import ViaCopies
from .snapshots import SnapshotOps
from .validate import MAX_MESSAGE_BYTES, check_time, show

if TYPE_CHECKING:
    from .context import Context
    from .extract.proposal import Extractor
    from .importers.model import ImportReport
    from .retrieval.hit import Hit

_Item = TypeVar("_Item", Event, Memory)


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


def _postgres(url: str, *, create: bool, durability: str) -> Backend:
    """A `PostgresBackend`, or one line naming the extra when psycopg is missing."""
    from .backends.postgres import PostgresBackend

    try:
        return PostgresBackend(url, create=create, durability=durability)
    except ModuleNotFoundError as exc:
        if exc.name not in ("psycopg", "psycopg_pool"):
            raise
        raise InvalidInput(
            f"a PostgreSQL store needs the postgres extra ({exc.name} is not installed): "
            "pip install 'branchmem[postgres]'"
        ) from exc


class Store(
    EventOps, RecordOps, ReadOps, BranchOps, SnapshotOps, MergeOps, LifecycleOps, PurgeOps, AuditOps
):
    """A memory store whose history is a tree (or a DAG).

    ``Store()`` or ``Store(":memory:")`` keeps everything in memory;
    ``Store("mem.db")`` opens (or creates) an SQLite file;
    ``Store("postgresql://user@host:5432/db")`` a PostgreSQL database (the
    ``postgres`` extra; `backends.postgres`). ``clock`` gives
    the time written on events and records; ``policy`` (a
    `branchmem.lifecycle.Policy`) sets half-lives and default TTLs per kind.
    ``create=False`` refuses a path that is not already a branchmem store
    (for tools that only read one); a file that is not a branchmem store (another
    application's database) is always refused and left untouched.

    SQLite files only: ``readonly=True`` opens the store read-only (it works
    on a read-only file; every write raises `ReadOnlyStore`). ``busy_timeout``
    is how long, in seconds, a write waits for another process's write lock
    before raising `StoreLocked`. ``durability="full"`` (the default) makes
    every committed write survive a power cut; ``"normal"`` ingests faster
    and may lose the last commits on a power cut (never on a crash of the
    process alone), without corrupting the file. New files are created
    readable by their owner only (0600). ``redactor`` (a `branchmem.Redactor`)
    redacts personal data before anything is stored: the content and ``meta``
    (keys and values) of events and records, logged queries, actors; an id,
    key, namespace or branch name holding personal data is refused
    (docs/redaction.md).

    >>> store = Store()
    >>> _ = store.add_event("e1", role="user", content="你好，我在准备搬家。")
    >>> _ = store.add_event("e2", parent="e1", content="我下个月搬去成都。")
    >>> fact = store.add_memory("用户下个月搬去成都", sources=["e2"])
    >>> _ = store.add_event("e2b", parent="e1", content="我下个月搬去杭州。")
    >>> store.memories(at="e2b")
    []
    >>> [m.content for m in store.memories(at="e2")]
    ['用户下个月搬去成都']
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        backend: Backend | None = None,
        clock: Callable[[], float] = time.time,
        policy: Policy | None = None,
        create: bool = True,
        readonly: bool = False,
        busy_timeout: float = 30.0,
        durability: str = "full",
        redactor: Redactor | None = None,
    ) -> None:
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
        if backend is not None:
            self._b: Backend = backend
        elif path is None or str(path) == ":memory:":
            if readonly:
                raise InvalidInput("readonly=True applies to a store file; pass its path")
            self._b = MemoryBackend()
        elif isinstance(path, str) and path.startswith(("postgresql://", "postgres://")):
            if readonly:  # refused rather than ignored: a caller relying on it must know
                raise InvalidInput(
                    "readonly=True applies to SQLite store files; a PostgreSQL store has no "
                    "read-only mode"
                )
            self._b = _postgres(path, create=create, durability=durability)
        else:
            from .backends.sqlite import SQLiteBackend

            self._b = SQLiteBackend(
                os.fspath(path),
                create=create,
                readonly=readonly,
                busy_timeout=timeout,
                durability=durability,
            )
        self._clock = clock if clock is time.time else _float_clock(clock)
        self._policy = policy if policy is not None else Policy()
        self._via_copies = ViaCopies()
        self._ranges_memo = RangesMemo()
        self._redactor = redactor
        self._scrub = Scrub(redactor) if redactor is not None else None
        # Told of the records each write adds (`retrieval.background` queues them).
        self._on_records: Callable[[str, list[Memory]], None] | None = None

    @property
    def redactor(self) -> Redactor | None:
        """The `Redactor` this store applies before storing text, or ``None``."""
        return self._redactor

    # Every write goes through these (see `branchmem.redact.scrub` for the rule):
    # without a redactor each is one test of ``self._scrub``.
    def _redact(self, text: str) -> str:
        """Text as stored (content, a logged query, an actor): redacted."""
        return text if self._scrub is None or not text else self._scrub.text(text)

    def _redact_value(self, value: Any) -> Any:
        """A structured value as stored (``meta``, search filters): every string redacted."""
        return value if self._scrub is None else self._scrub.value(value)

    def _identifier(self, value: str, what: str) -> str:
        """An identifier as stored: itself, or refused if it holds personal data."""
        return value if self._scrub is None else self._scrub.identifier(value, what)

    def _redacted(self, items: list[_Item]) -> list[_Item]:
        """Events or records as stored, before they are written: ids checked,
        content and ``meta`` redacted."""
        if self._scrub is None or not items:
            return items
        if isinstance(items[0], Event):
            return self._scrub.events(items)
        return self._scrub.records(items)

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Release the backend (the SQLite connection). The store is unusable after."""
        self._b.close()

    def _generation(self) -> Generation:
        """Where the store's contents stand now (see `branchmem.backends.base.Generation`).

        A cache kept between calls (of search state, of rendered context)
        compares it with the one it was built at: when ``erasures`` moved,
        something was deleted or blanked, by this `Store` or another on the
        same file, and everything derived before must go.

        >>> store = Store()
        >>> g = store._generation()
        >>> _ = store.add_event("e1")
        >>> store._generation().writes != g.writes, store._generation().erasures == g.erasures
        (True, True)
        """
        with self._b.reading():
            return self._b.generation()

    def _seg_parents(self, ns: str) -> Callable[[Iterable[int]], dict[int, tuple[Pos, ...]]]:
        b = self._b
        return lambda segs: b.segment_parents(ns, segs)

    # --------------------------------------------------------------- retrieval
    def search(
        self,
        query: str,
        *,
        at: str | Sequence[str] | None,
        k: int = 10,
        namespace: str = "default",
        **options: Any,
    ) -> list[Hit]:
        """The ``k`` records visible at ``at`` that best match ``query`` (gate first,
        then rank). ``at`` may be a scope chain; ``options`` are those of
        `branchmem.retrieval.search` (``mode``, ``embedder``, ``weights``,
        ``kind``, ``key_prefix``, ``meta``, ``now``, ``as_of``, ``explain``, ``log``).

        >>> store = Store()
        >>> _ = store.add_event("e1", content="我对花生过敏。")
        >>> _ = store.add_memory("用户对花生过敏", sources=["e1"])
        >>> [h.memory.content for h in store.search("花生", at="e1", embedder="hashing")]
        ['用户对花生过敏']
        """
        from .retrieval.search import search

        unknown = set(options) - _search_options()
        if unknown:
            raise InvalidInput(
                f"search() got unknown option(s) {sorted(unknown)}; it takes "
                f"{', '.join(sorted(_search_options()))}"
            )
        return search(self, query, at=at, k=k, namespace=namespace, **options)

    # ------------------------------------------------------- extraction, context
    def extract(
        self,
        at: str,
        *,
        extractor: Extractor | None = None,
        window: int = 8,
        namespace: str = "default",
        actor: str | None = None,
    ) -> list[Memory]:
        """Run ``extractor`` (default: the offline `branchmem.extract.RuleExtractor`)
        on the last ``window`` events of the path to ``at`` and the memories
        visible there, and write its proposals as gated records: new facts,
        supersedes and retractions, each sourced from the messages it came from.
        Proposals citing events off the path, or targeting memories not visible
        at ``at``, are dropped (fail closed). Idempotent: ids come from the
        proposals, so a second run at the same anchor writes nothing. Returns
        the records written (`branchmem.extract.extract` also reports drops).

        >>> store = Store()
        >>> _ = store.add_event("e1", content="我在腾讯做产品经理。")
        >>> [m.key for m in store.extract(at="e1")]
        ['user.employer', 'user.job']
        >>> store.extract(at="e1")
        []
        """
        from .extract.writer import extract

        done = extract(
            self, at, extractor=extractor, window=window, namespace=namespace, actor=actor
        )
        return list(done.written)

    def context(
        self,
        at: str | Sequence[str] | None,
        *,
        query: str | None = None,
        window: int | None = 8,
        k: int | None = 10,
        namespace: str = "default",
        **search_options: Any,
    ) -> Context:
        """What a model sees at ``at``: the last ``window`` messages on the path
        (root first; ``None`` for the whole path, 0 for none) and up to ``k``
        visible memories (``None`` for all), ranked by `search` for ``query``
        or by importance and recency without one. ``at`` may be a scope chain;
        the messages then come from its first anchor. ``search_options`` go to
        `search` (``embedder``, ``mode``, ...).

        >>> store = Store()
        >>> _ = store.add_event("e1", content="我在阿里巴巴上班。")
        >>> _ = store.extract(at="e1")
        >>> print(store.context(at="e1").text())
        相关记忆：
        - 用户在阿里巴巴工作
        <BLANKLINE>
        对话记录：
        用户：我在阿里巴巴上班。
        """
        from .context import build_context

        return build_context(
            self, at, query=query, window=window, k=k, namespace=namespace, **search_options
        )

    # ----------------------------------------------------------------- imports
    def import_export(
        self,
        path: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
        *,
        format: str = "auto",
        namespace: str = "default",
        progress: Callable[[int, int], None] | None = None,
        max_message_bytes: int = MAX_MESSAGE_BYTES,
    ) -> ImportReport:
        """Import a chat export (ChatGPT, Claude, Open WebUI, LibreChat, SillyTavern):
        each conversation's messages become events (abandoned branches too) in one
        transaction, and branch ``conv/<id>`` points at its current leaf.
        Re-importing adds only what is new; see `branchmem.importers`.

        ``format`` is ``"auto"`` or a name from `branchmem.importers.FORMATS`;
        ``progress`` is called with (bytes read, total bytes). A conversation
        with a message whose text is over ``max_message_bytes`` (UTF-8; 8 MiB
        by default) is skipped, and the report says why.

        >>> import json, pathlib, tempfile
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "conversations.json"
        >>> _ = path.write_text(json.dumps([{"conversation_id": "c1", "current_node": "m1",
        ...     "mapping": {"m1": {"parent": None, "message": {"author": {"role": "user"},
        ...     "content": {"content_type": "text", "parts": ["你好"]}}}}}]))
        >>> store = Store()
        >>> [(c.branch, c.added) for c in store.import_export(path).conversations]
        [('conv/c1', 1)]
        """
        from .importers import import_export

        return import_export(
            self,
            path,
            format=format,
            namespace=namespace,
            progress=progress,
            max_message_bytes=max_message_bytes,
        )


@functools.cache
def _search_options() -> frozenset[str]:
    import inspect

    from .retrieval.search import search

    params = inspect.signature(search).parameters
    return frozenset(params) - {"store", "query", "at", "k", "namespace"}
