"""`Store`: the one front door, a thin shell over one `Engine`.

Each method checks nothing and decides nothing itself: it hands its
arguments to the capability that implements it (`branchmem.ops`, in the order
that module states; search in `branchmem.retrieval`; the relation graph in
`branchmem.graph`) together with the store's engine (`branchmem.engine`:
backend, clock, policy, redactor and every cache). Those methods are the
doors of `branchmem.front`, plain functions with their signatures and
docstrings, one module per area, bound here in the class body: `Store` has no
base class but ``object``. Opening, closing, and the methods that hand the
store itself to a layer built on its public API like a client (context,
extraction, the extraction worker, consolidation and imports) are written here.

A derived record is visible at an anchor iff every one of its sources is the
anchor or one of its ancestors, and no retraction of it is visible there.
Switching branches only moves the anchor; nothing is tagged or rewritten.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .backends.base import Backend
from .engine import open_engine
from .front import branches as _branches
from .front import events as _events
from .front import graph as _graph
from .front import jobs as _jobs
from .front import lifecycle as _lifecycle
from .front import merge as _merge
from .front import reads as _reads
from .front import records as _records
from .front import search as _search
from .front import tree as _tree
from .model import Memory
from .policy import Policy
from .redact import Redactor
from .searchlog import QueryLog
from .validate import MAX_MESSAGE_BYTES

if TYPE_CHECKING:
    from .consolidate import Consolidation, Profile
    from .context import Context
    from .extract.proposal import Extractor
    from .extract.worker import Worker
    from .importers.model import ImportReport
    from .retrieval.embed import Embedder
    from .retrieval.fusion import Weights
    from .retrieval.tokenize import Tokenizer


class Store:
    """A memory store whose history is a tree (or a DAG).

    ``Store()`` or ``Store(":memory:")`` keeps everything in memory;
    ``Store("mem.db")`` opens (or creates) an SQLite file;
    ``Store("postgresql://user@host:5432/db")`` a PostgreSQL database (the
    ``postgres`` extra; `backends.postgres`). ``clock`` gives
    the time written on events and records; ``policy`` (a
    `branchmem.Policy`) sets half-lives and default TTLs per kind.
    ``create=False`` refuses a path that is not already a branchmem store
    (for tools that only read one); a file that is not a branchmem store (another
    application's database) is always refused and left untouched.

    SQLite files only: ``readonly=True`` opens the store read-only (it works
    on a read-only file; every write raises `ReadOnlyStore`). ``busy_timeout``
    is how long, in seconds, a write waits for another process's write lock
    before raising `StoreLocked`. ``durability="full"`` (the default) makes
    every committed write survive a power cut (but for the backend's
    `unsynced_transaction`, which the LangGraph integration uses for a step's
    writes before its checkpoint syncs them); ``"normal"`` ingests faster
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
        self._engine = open_engine(
            path,
            backend=backend,
            clock=clock,
            policy=policy,
            create=create,
            readonly=readonly,
            busy_timeout=busy_timeout,
            durability=durability,
            redactor=redactor,
        )

    @property
    def redactor(self) -> Redactor | None:
        """The `Redactor` this store applies before storing text, or ``None``."""
        return self._engine.redactor

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Release the backend (the SQLite connection). The store is unusable after."""
        self._engine.close()

    # The doors, each a function of `branchmem.front` bound here as a method.
    # events and records
    add_event = _events.add_event
    add_events = _events.add_events
    add_memory = _records.add_memory
    add_memories = _records.add_memories
    retract = _records.retract
    supersede = _records.supersede
    # reads
    memories = _reads.memories
    visible = _reads.visible
    explain = _reads.explain
    path = _reads.path
    get_event = _reads.get_event
    events = _reads.events
    records = _reads.records
    get_memory = _reads.get_memory
    # the tree
    children = _tree.children
    siblings = _tree.siblings
    versions = _tree.versions
    diff = _tree.diff
    # branches and snapshots
    create_branch = _branches.create_branch
    remember = _branches.remember
    set_branch = _branches.set_branch
    branch_head = _branches.branch_head
    branches = _branches.branches
    delete_branch = _branches.delete_branch
    prune_branches = _branches.prune_branches
    snapshot = _branches.snapshot
    snapshots = _branches.snapshots
    rollback = _branches.rollback
    history = _branches.history
    # merge
    merge = _merge.merge
    conflicts = _merge.conflicts
    resolve = _merge.resolve
    # lifecycle, erasure, audit
    touch = _lifecycle.touch
    score = _lifecycle.score
    archive_expired = _lifecycle.archive_expired
    restore = _lifecycle.restore
    purge = _lifecycle.purge
    checkpoint = _lifecycle.checkpoint
    erasure_pending = _lifecycle.erasure_pending
    info = _lifecycle.info
    audit = _lifecycle.audit
    # the relation graph
    add_edge = _graph.add_edge
    graph = _graph.graph
    # retrieval
    search = _search.search
    # the extraction queue
    pending = _jobs.pending

    # ------------------------------------------------ the layers built on StoreAPI
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

    def start_worker(
        self,
        extractor: Extractor | None = None,
        *,
        window: int = 8,
        lease: float = 300.0,
        poll: float = 0.5,
    ) -> Worker:
        """Start a `branchmem.extract.Worker` thread in this process: it runs
        ``extractor`` (default: the rules) at every tip queued with
        ``add_event(..., extract=True)``, by this process or another on the same
        store, each once. ``lease`` is how long a claim holds before another
        worker may redo a job whose worker died. Stop it with its ``close()``.

        >>> store = Store()
        >>> worker = store.start_worker()
        >>> _ = store.add_event("e1", content="我对花生过敏。", extract=True)
        >>> [m.content for m in store.memories(at="e1", wait=10)]
        ['用户对花生过敏']
        >>> worker.close()
        True
        """
        from .extract.worker import Worker

        return Worker(self, extractor, window=window, lease=lease, poll=poll).start()

    def consolidate(
        self,
        at: str,
        *,
        namespace: str = "default",
        contradictions: str = "recency",
        near: float = 0.8,
        embedder: Embedder | str | None = None,
        profile: bool = True,
        actor: str | None = None,
    ) -> Consolidation:
        """Consolidate what is visible at ``at``, keeping the evidence: merge
        duplicates and near-duplicates (one record, sourced from all of
        theirs, retracts them), resolve contradictions of one key by recency
        (``contradictions="recency"``; ``"flag"`` writes a conflict note
        instead), and write a profile (the current fact of each key). Each
        output is a gated record whose sources are the union of its inputs',
        so it shows only where every input does, and it falls wherever any
        input is later retracted, superseded or purged. ``near`` is the
        bigram overlap (or, with ``embedder``, the cosine) that makes two
        texts duplicates. All of it lands in one transaction; a second run at
        the same anchor writes nothing (`branchmem.consolidate`).

        >>> store = Store()
        >>> _ = store.add_event("e1", content="我住在成都。")
        >>> _ = store.add_memories([{"content": "用户住在成都", "sources": ["e1"], "key": "city"}])
        >>> store.consolidate(at="e1").profile.content
        'city: 用户住在成都'
        >>> store.consolidate(at="e1").written
        0
        """
        from .consolidate import consolidate
        from .retrieval.embed import get_embedder

        emb = get_embedder(embedder) if isinstance(embedder, str) else embedder
        with self._engine.backend.transaction():
            return consolidate(
                self, at, namespace=namespace, contradictions_by=contradictions, near=near,
                embedder=emb, write_profile=profile, actor=actor,
            )  # fmt: skip

    def profile(self, at: str, *, namespace: str = "default") -> Profile:
        """The profile visible at ``at``: the current fact of each key, as the
        latest `consolidate` visible there wrote it (``facts`` is empty and
        ``record`` None where none is).

        >>> store = Store()
        >>> _ = store.add_event("e1", content="我住在成都。")
        >>> _ = store.add_memory("用户住在成都", sources=["e1"], key="city")
        >>> store.profile("e1").facts
        {}
        >>> _ = store.consolidate(at="e1")
        >>> store.profile("e1").facts
        {'city': '用户住在成都'}
        """
        from .consolidate import profile

        return profile(self, at, namespace=namespace)

    def context(
        self,
        at: str | Sequence[str] | None,
        *,
        query: str | None = None,
        window: int | None = 8,
        k: int | None = 10,
        namespace: str = "default",
        mode: str = "hybrid",
        embedder: Embedder | str | None = None,
        tokenizer: Tokenizer | str | None = None,
        weights: Weights | None = None,
        scope_weights: Sequence[float] | None = None,
        kind: str | Sequence[str] | None = None,
        key_prefix: str | None = None,
        meta: Mapping[str, Any] | None = None,
        now: float | None = None,
        as_of: float | None = None,
        explain: bool = False,
        log: QueryLog | str | os.PathLike[str] | None = None,
        max_embed: int | None = None,
    ) -> Context:
        """What a model sees at ``at``: the last ``window`` messages on the path
        (root first; ``None`` for the whole path, 0 for none) and up to ``k``
        visible memories (``None`` for all), ranked by `search` for ``query``
        or by importance and recency without one. ``at`` may be a scope chain;
        the messages then come from its first anchor. The other keywords are
        `search`'s, used when there is a ``query``; one this method does not
        take raises ``TypeError``.

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
            self,
            at,
            query=query,
            window=window,
            k=k,
            namespace=namespace,
            mode=mode,
            embedder=embedder,
            tokenizer=tokenizer,
            weights=weights,
            scope_weights=scope_weights,
            kind=kind,
            key_prefix=key_prefix,
            meta=meta,
            now=now,
            as_of=as_of,
            explain=explain,
            log=log,
            max_embed=max_embed,
        )

    def import_export(
        self,
        path: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
        *,
        format: str = "auto",
        namespace: str = "default",
        progress: Callable[[int, int], None] | None = None,
        max_message_bytes: int = MAX_MESSAGE_BYTES,
        extract: bool = False,
    ) -> ImportReport:
        """Import a chat export (ChatGPT, Claude, Open WebUI, LibreChat, SillyTavern)
        or coding-agent transcripts (Claude Code, Codex; docs/coding-agents.md):
        each conversation's messages become events (abandoned branches too) in one
        transaction, and branch ``conv/<id>`` points at its current leaf.
        Re-importing adds only what is new; see `branchmem.importers`.

        ``format`` is ``"auto"`` or a name from `branchmem.importers.FORMATS`;
        ``progress`` is called with (bytes read, total bytes). A conversation
        with a message whose text is over ``max_message_bytes`` (UTF-8; 8 MiB
        by default) is skipped, and the report says why. ``extract=True``
        then queues an extraction at the current leaf of each conversation
        that gained messages (a worker does them: `start_worker`).

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
        from .ops import jobs

        queue = jobs.check_extract(extract)
        report = import_export(
            self,
            path,
            format=format,
            namespace=namespace,
            progress=progress,
            max_message_bytes=max_message_bytes,
        )
        if queue:
            tips = [c.current for c in report.conversations if c.added]
            jobs.enqueue(self._engine, namespace, tips)
        return report
