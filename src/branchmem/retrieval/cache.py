"""Per-store caches of what ranking derives from a record: tokens and vectors.

Records are immutable, so what is computed from one never goes stale. Both
caches live in process memory, one per engine (a `Store` object's, dropped
with it, registered with the engine as its other caches are), keyed
by (namespace, memory id) under the tokenizer's or embedder's name, with the
text they were made from: a vector is only ever compared with vectors the
same embedder made, and an id written again after a purge, with other text,
is never served stale.

Backends that keep vectors (`VectorStore`: every built-in one) hold each
record's vector per embedder, written once and deleted with the record, so a
new process reads vectors instead of embedding again; those that keep tokens
(`TermStore`, `retrieval.terms`) do the same for each record's keyword tokens
per tokenizer and version.

Erasure reaches the cache two ways: a purge through the same engine calls
`RankCache.forget`, and `cache_for` has the engine check the store's
`Generation` (so a purge by another `Store` or process on the same file),
which clears every cache (`RankCache.clear`) when something was erased since
it last looked (`branchmem.engine`).
"""

from __future__ import annotations

import threading
import time
from array import array
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from itertools import repeat
from operator import attrgetter, is_, ne
from typing import Any, cast

from ..backends.base import StoredColumns, TermStore, VectorStore
from ..engine import Engine, SupportsEngine, engine_of
from ..errors import EmbeddingError, StorageError
from ..model import Memory
from . import terms as stored
from .ann import NamespaceIndex
from .embed import Embedder
from .state import SearchStates
from .terms import reading as _reading
from .tokenize import Tokenizer
from .vectors import TermStats, digest, unit_vector, unit_vectors

_ID, _NS, _TEXT = attrgetter("id"), attrgetter("namespace"), attrgetter("content")
_BATCH = 64
Found = dict[tuple[str, str], tuple[str, "array[float]"]]
"""Vectors by (namespace, id), with the text each was made from."""
_SAVE, _SAVE_S = 2048, 1.0
"""Vectors made are written once this many are waiting or this many seconds
have passed since the last write (and at the end): one transaction per batch
cost more than the writes themselves, and a crash loses at most a second's work."""
_PROGRESS: ContextVar[Callable[[int, int], None] | None] = ContextVar("progress", default=None)


@contextmanager
def embedding_progress(report: Callable[[int, int], None]) -> Iterator[None]:
    """Within the block, every embedding run (the records a search or `prepare`
    must embed, in batches of 64) calls ``report(done, total)`` after each batch.

    >>> from branchmem import HashingEmbedder, Store
    >>> store = Store()
    >>> _ = store.add_event("e1")
    >>> _ = store.add_memory("用户对花生过敏", sources=["e1"])
    >>> with embedding_progress(lambda done, total: print(done, total)):
    ...     _ = store.search("花生", at="e1", embedder=HashingEmbedder())
    0 1
    1 1
    """
    token = _PROGRESS.set(report)
    try:
        yield
    finally:
        _PROGRESS.reset(token)


QUERY_CACHE = 1024

BULK = 10_000
"""Records from which a search state built whole reads what is stored for
them in one pass (`RankCache.stored_block`, `terms.load_all`) and keeps it
in the state alone: a copy per record in this cache would double what the
process holds."""


class RankCache:
    """Tokens and unit vectors per record, for one store."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.terms: dict[str, stored.Table] = {}
        self.vectors: dict[str, dict[tuple[str, str], tuple[str, array[float]]]] = {}
        self.queries: dict[tuple[str, str], array[float]] = {}
        self.states = SearchStates()
        self.ann: dict[tuple[str, str], NamespaceIndex] = {}  # by (namespace, embedder)
        self._digested: tuple[list[Memory], list[str], list[str]] | None = None  # `keys`
        self.epoch = 0
        """Moves whenever entries are dropped for an erasure. A search notes it
        before reading records and passes it back: what it computed is then
        kept only if nothing was erased meanwhile (it may hold purged text)."""

    def clear(self) -> None:
        """Drop everything (the engine does when something was erased)."""
        self.states.clear()
        with self._lock:
            self._digested = None
            self.ann.clear()
            self.terms.clear()
            self.vectors.clear()
            self.queries.clear()
            self.epoch += 1

    def token_blobs(
        self,
        tokenizer: Tokenizer,
        mems: Sequence[Memory],
        epoch: int | None = None,
        backend: object = None,
    ) -> list[bytes]:
        """Each record's tokens as stored (`terms.encode`), tokenizing only
        those not seen before.

        With a ``backend`` that keeps tokens (`TermStore`) and a tokenizer that
        names its version (`terms.store_key`), tokens are read from it first
        (one read per namespace) and the ones made here are written to it, so
        each record is tokenized once per tokenizer, not once per process.
        What is new is kept in process unless `epoch` is given and has moved.
        """
        with self._lock:
            table = self.terms.setdefault(tokenizer.name, {})
        out: list[bytes | None] = []
        missing: list[Memory] = []
        if not table:  # a new process: nothing to look up
            out, missing = [None] * len(mems), list(mems)
        else:
            for m in mems:
                hit = table.get((m.namespace, m.id))
                if hit is not None and hit[0] == m.content:
                    out.append(hit[1])
                else:
                    out.append(None)
                    missing.append(m)
        if not missing:
            return cast(list[bytes], out)
        key = stored.store_key(tokenizer)
        store = backend if key is not None and isinstance(backend, TermStore) else None
        if store is not None and key is not None and len(missing) == len(mems) >= BULK:
            keys = self.keys(mems)
            if keys is not None:
                whole = stored.load_all(store, key, mems[0].namespace, *keys)
                if whole is not None:
                    return whole
        fresh: stored.Table = {}
        if store is not None and key is not None:
            missing = stored.load(store, key, missing, fresh)
        made: list[tuple[Memory, bytes]] = []
        many = getattr(tokenizer, "many", None)  # (a batch form, where the tokenizer has one)
        texts = [m.content for m in missing]
        toks = many(texts) if many is not None else [tokenizer(t) for t in texts]
        for m, tk in zip(missing, toks, strict=True):
            blob = stored.encode(tk)
            fresh[(m.namespace, m.id)] = (m.content, blob)
            made.append((m, blob))
        if store is not None and key is not None and made:
            stored.save(store, key, made)
        with self._lock:
            if epoch is None or epoch == self.epoch:
                table.update(fresh)
        return [
            b if b is not None else fresh[(m.namespace, m.id)][1]
            for b, m in zip(out, mems, strict=True)
        ]

    def term_stats(
        self,
        tokenizer: Tokenizer,
        mems: Sequence[Memory],
        epoch: int | None = None,
        backend: object = None,
    ) -> list[TermStats]:
        """Term frequencies and length of each record (`token_blobs`, decoded)."""
        return [stored.decode(b) for b in self.token_blobs(tokenizer, mems, epoch, backend)]

    def query_vector(self, embedder: Embedder, query: str) -> array[float]:
        """The unit vector of ``query``, embedded once per embedder (the last
        `QUERY_CACHE` distinct queries are kept)."""
        key = (embedder.name, query)
        with self._lock:
            hit = self.queries.pop(key, None)
            if hit is not None:
                self.queries[key] = hit  # most recent last
                return hit
        vec = unit_vector(embedder.embed_queries([query])[0], embedder)
        with self._lock:
            self.queries[key] = vec
            while len(self.queries) > QUERY_CACHE:
                del self.queries[next(iter(self.queries))]
        return vec

    def forget(self, namespace: str, ids: Sequence[str] | None = None) -> int:
        """Drop what was derived from these records (all of the namespace when
        ``ids`` is None), as an erasure must; returns how many entries went."""
        want = None if ids is None else set(ids)
        n = 0
        self.states.clear()  # rebuilt on the next search, from what remains
        with self._lock:
            self._digested = None
            self.ann = {k: v for k, v in self.ann.items() if k[0] != namespace}
            self.epoch += 1
            tables: list[dict[tuple[str, str], Any]] = [*self.terms.values()]
            tables += self.vectors.values()
            for table in tables:
                gone = [k for k in table if k[0] == namespace and (want is None or k[1] in want)]
                for k in gone:
                    del table[k]
                n += len(gone)
        return n

    def passage_vectors(
        self,
        embedder: Embedder,
        mems: Sequence[Memory],
        backend: object = None,
        epoch: int | None = None,
        found: Found | None = None,
    ) -> list[array[float]]:
        """Unit vectors of each record, embedding (in batches) only the missing ones.

        With a ``backend`` that keeps vectors (`VectorStore`), vectors are read
        from it first and the ones embedded here are written to it, so each
        record is embedded once per embedder, not once per process. What is new
        is kept in process unless `epoch` is given and has moved. ``found``:
        what `known_vectors` put into the caller's map, looked up first.
        """
        with self._lock:
            table = self.vectors.setdefault(embedder.name, {})
        # Looked up once, into a local map: a purge on another thread may drop
        # entries from ``table`` at any moment.
        got: dict[tuple[str, str], tuple[str, array[float]]] = {}
        missing_by_key: dict[tuple[str, str], Memory] = {}
        for m in mems:
            k = (m.namespace, m.id)
            hit = found.get(k) if found else None
            if hit is None or hit[0] != m.content:
                hit = table.get(k)
            if hit is not None and hit[0] == m.content:
                got[k] = hit
            else:
                missing_by_key[k] = m
        missing = list(missing_by_key.values())
        store = backend if isinstance(backend, VectorStore) else None
        fresh: dict[tuple[str, str], tuple[str, array[float]]] = {}
        if missing and store is not None:
            missing = _load(store, embedder, missing, fresh)
        report = _PROGRESS.get() if missing else None
        if report is not None:
            report(0, len(missing))
        unsaved: list[Memory] = []
        saved_at = time.monotonic()
        for i in range(0, len(missing), _BATCH):
            batch = missing[i : i + _BATCH]
            vecs = embedder.embed_passages([m.content for m in batch])
            if len(vecs) != len(batch):
                raise EmbeddingError(
                    f"embedder {embedder.name!r} returned {len(vecs)} vectors for "
                    f"{len(batch)} passages"
                )
            for m, u in zip(batch, unit_vectors(vecs, embedder), strict=True):
                fresh[(m.namespace, m.id)] = (m.content, u)
            unsaved += batch
            last = i + _BATCH >= len(missing)
            if store is not None and (
                last or len(unsaved) >= _SAVE or time.monotonic() - saved_at >= _SAVE_S
            ):
                _save(store, embedder, unsaved, fresh)
                unsaved, saved_at = [], time.monotonic()
            if report is not None:
                report(i + len(batch), len(missing))
        got.update(fresh)
        with self._lock:
            if epoch is None or epoch == self.epoch:
                table.update(fresh)
        return [got[(m.namespace, m.id)][1] for m in mems]

    def keys(self, mems: Sequence[Memory]) -> tuple[list[str], list[str]] | None:
        """The ids of ``mems`` and the digests of their texts (`vectors.digest`),
        in order; None when they are not all of one namespace. The last answer
        is kept, so a large state's tokens and vectors read each record once:
        the same records (the very objects, which the state holds too) get it
        back."""
        with self._lock:
            held = self._digested
        if held is not None and len(held[0]) == len(mems) and all(map(is_, held[0], mems)):
            return held[1], held[2]
        if mems and any(map(ne, map(_NS, mems), repeat(mems[0].namespace))):
            return None
        kept = list(mems)
        ids = list(map(_ID, kept))
        digests = list(map(digest, map(_TEXT, kept)))
        with self._lock:
            self._digested = (kept, ids, digests)
        return ids, digests

    def stored_block(
        self, embedder: Embedder, mems: Sequence[Memory], backend: object
    ) -> bytes | None:
        """The stored unit vectors of ``mems`` (one namespace), in order, as one
        float32 buffer; None when any is missing or was stored for other text.
        One read and no per-record array: for a large search state built whole
        (`VectorIndex.add` takes the block)."""
        store = backend if isinstance(backend, VectorStore) else None
        keys = self.keys(mems) if store is not None and mems else None
        if store is None or keys is None:
            return None
        (ids, digests), ns, size = keys, mems[0].namespace, 4 * embedder.dim
        with _reading(store):
            if isinstance(store, StoredColumns):
                got: stored.Stored = store.vector_columns(ns, embedder.name, ids)
            else:
                got = store.get_vectors(ns, embedder.name, ids)
        blobs = stored.in_order(got, ids, digests)
        if blobs is None or set(map(len, blobs)) != {size}:
            return None
        return b"".join(blobs)

    def known_vectors(
        self,
        embedder: Embedder,
        mems: Sequence[Memory],
        backend: object = None,
        epoch: int | None = None,
        into: Found | None = None,
    ) -> list[array[float] | None]:
        """The unit vector of each record that has one already, in process or
        stored (None for the others), without embedding any. Stored ones found
        are kept in process (unless `epoch` is given and has moved), or only
        put ``into`` the caller's map when it gives one (a search building a
        large state whole: the state holds them, and a copy per record here
        would double what the process holds)."""
        with self._lock:
            table = self.vectors.setdefault(embedder.name, {})
        got: dict[tuple[str, str], tuple[str, array[float]]] = {}
        missing = []
        for m in mems:
            k = (m.namespace, m.id)
            hit = table.get(k)
            if hit is not None and hit[0] == m.content:
                got[k] = hit
            else:
                missing.append(m)
        store = backend if isinstance(backend, VectorStore) else None
        if missing and store is not None:
            found: dict[tuple[str, str], tuple[str, array[float]]] = {}
            _load(store, embedder, missing, found)
            got.update(found)
            if into is not None:
                into.update(found)
            else:
                with self._lock:
                    if epoch is None or epoch == self.epoch:
                        table.update(found)
        out: list[array[float] | None] = []
        for m in mems:
            hit = got.get((m.namespace, m.id))
            out.append(hit[1] if hit is not None else None)
        return out

    def ann_index(
        self, namespace: str, embedder: Embedder, epoch: int | None = None
    ) -> NamespaceIndex | None:
        """The approximate index of the namespace's vectors (`retrieval.ann`);
        None if `epoch` is given and has moved (what the search read may hold
        purged records, which must not enter a fresh index)."""
        with self._lock:
            if epoch is not None and epoch != self.epoch:
                return None
            key = (namespace, embedder.name)
            index = self.ann.get(key)
            if index is None or index.dim != embedder.dim:
                index = self.ann[key] = NamespaceIndex(embedder.dim)
            return index


def _load(
    store: VectorStore,
    embedder: Embedder,
    mems: list[Memory],
    table: dict[tuple[str, str], tuple[str, array[float]]],
) -> list[Memory]:
    """Fill ``table`` from the stored vectors; returns the records still missing.
    Each namespace's lookup is one read view of the backend."""
    by_ns: dict[str, list[Memory]] = {}
    for m in mems:
        by_ns.setdefault(m.namespace, []).append(m)
    rest = []
    size = 4 * embedder.dim
    for ns, group in by_ns.items():
        with _reading(store):
            got = store.get_vectors(ns, embedder.name, [m.id for m in group])
        get = got.get
        for m in group:
            hit = get(m.id)
            if hit is not None:
                dig, blob = hit
                if len(blob) == size and dig == digest(m.content):
                    if type(blob) is not bytes:  # (a view would be read as ints)
                        blob = bytes(blob)
                    table[(ns, m.id)] = (m.content, array("f", blob))
                    continue
            rest.append(m)
    return rest


def _save(
    store: VectorStore,
    embedder: Embedder,
    mems: list[Memory],
    table: dict[tuple[str, str], tuple[str, array[float]]],
) -> None:
    """Write freshly made vectors to the backend, if it lets us (a read-only
    file still searches; its vectors then live only in this process)."""
    by_ns: dict[str, list[tuple[str, str, bytes]]] = {}
    for m in mems:
        vec = table[(m.namespace, m.id)][1]
        by_ns.setdefault(m.namespace, []).append((m.id, digest(m.content), vec.tobytes()))
    try:
        with store.transaction():
            for ns, rows in by_ns.items():
                store.put_vectors(ns, embedder.name, rows)
    except StorageError:
        pass


def rank_cache(engine: Engine) -> RankCache:
    """The engine's search cache, for a caller that syncs the engine in the read
    view it reads records in (`gather`): checked against the store here only
    the first time, so that an epoch noted now is not moved by that first check."""
    if not engine.synced:
        engine.generation()
    return engine.cache("rank", RankCache)


def cache_for(store: Engine | SupportsEngine) -> RankCache:
    """The search cache of a store's engine (made on first use, dropped with
    it), the engine's caches first synced to the store's `Generation`."""
    engine = engine_of(store)
    engine.generation()
    return engine.cache("rank", RankCache)
