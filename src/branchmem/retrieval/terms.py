"""Each record's keyword tokens, kept in the store beside its vectors.

A fresh process (or a second `Store` on the file) reads a record's tokens
instead of tokenizing its text again: on a first search over 100,000
visible records tokenizing was about 30% of its profile. The tokens are
stored per (namespace, tokenizer key, record id) by backends that keep them
(`TermStore`: memory, SQLite, PostgreSQL), with the digest of the text they
came from, and deleted with the record, as vectors are.

The key names the tokenizer and its version, ``terms:<name>:<version>``
(`store_key`), so a changed tokenizer never reuses another's tokens; a
tokenizer without a ``version`` attribute (one of your own) is not stored.

Encoding: the record's tokens in order, joined by U+001F, as UTF-8 (no
built-in tokenizer makes a token holding it: tokens are letters and digits;
a tokenizer of your own that does has it replaced by U+FFFD, in the records'
tokens and the query's alike, `clean`). A search never decodes them: its
keyword state (`state.KeywordIndex`) keeps the bytes and finds a query
term's postings in them when it is first asked for.
"""

from __future__ import annotations

import collections
from collections.abc import Callable, Iterable, Mapping
from contextlib import nullcontext
from operator import itemgetter
from typing import Any, cast

from ..backends.base import Columns, StoredColumns, TermStore
from ..errors import StorageError
from ..model import Memory
from .tokenize import Tokenizer
from .vectors import TermStats, digest

SEP = "\x1f"
SEP_B = b"\x1f"
_DIGEST, _BLOB = itemgetter(0), itemgetter(1)

Table = dict[tuple[str, str], tuple[str, bytes]]
"""(namespace, record id) -> (the text, its tokens as stored, `encode`)."""


def _count_py(tf: dict[str, int], toks: Iterable[str]) -> None:
    for t in toks:
        tf[t] = tf.get(t, 0) + 1


_count: Callable[[dict[str, int], Iterable[str]], None] = getattr(
    collections, "_count_elements", _count_py
)  # Counter's own loop, in C where the interpreter has it


def stats_of(toks: list[str]) -> TermStats:
    """Term frequencies and length of a token list.

    >>> stats_of(["杭州", "花生", "杭州"])
    ({'杭州': 2, '花生': 1}, 3)
    """
    tf: dict[str, int] = {}
    _count(tf, toks)
    return tf, len(toks)


def store_key(tok: Tokenizer) -> str | None:
    """The key a tokenizer's tokens are stored under, or None for one that
    names no ``version`` (not stored).

    >>> from branchmem.retrieval.tokenize import get_tokenizer
    >>> store_key(get_tokenizer("stem"))
    'terms:stem:1'
    """
    version = getattr(tok, "version", None)
    return None if version is None else f"terms:{tok.name}:{version}"


def clean(tok: str) -> str:
    """A token as it is stored and looked up: `SEP` inside it replaced.

    >>> clean("a\x1fb")
    'a\ufffdb'
    """
    return tok.replace(SEP, "\ufffd") if SEP in tok else tok


def encode(toks: list[str]) -> bytes:
    """The stored form of a record's tokens.

    >>> decode(encode(["用户", "python", "用户"]))
    ({'用户': 2, 'python': 1}, 3)
    """
    text = SEP.join(toks)
    if text.count(SEP) != max(len(toks) - 1, 0):
        text = SEP.join(clean(t) for t in toks)
    return text.encode("utf-8")


def decode(blob: bytes) -> TermStats:
    """The term frequencies and length `encode` stored."""
    if not blob:
        return {}, 0
    return stats_of(blob.decode("utf-8").split(SEP))


def load(
    store: TermStore,
    key: str,
    mems: list[Memory],
    table: Table,
) -> list[Memory]:
    """Fill ``table`` from the stored tokens; returns the records still missing
    (none stored, or stored for other text). One read view per namespace."""
    by_ns: dict[str, list[Memory]] = {}
    for m in mems:
        by_ns.setdefault(m.namespace, []).append(m)
    rest = []
    for ns, group in by_ns.items():
        with reading(store):
            got = store.get_terms(ns, key, [m.id for m in group])
        found: list[tuple[Memory, bytes]] = []
        get = got.get
        for m in group:
            hit = get(m.id)
            if hit is None or hit[0] != digest(m.content):
                rest.append(m)
                continue
            blob = hit[1]
            found.append((m, blob if type(blob) is bytes else bytes(blob)))
        # What `encode` wrote decodes; anything else is made again.
        if not _all_decode(b for _, b in found):
            sound = [_decodes(b) for _, b in found]
            rest += [m for (m, _), ok in zip(found, sound, strict=True) if not ok]
            found = [f for f, ok in zip(found, sound, strict=True) if ok]
        for m, blob in found:
            table[(ns, m.id)] = (m.content, blob)
    return rest


def load_all(
    store: TermStore, key: str, ns: str, ids: list[str], digests: list[str]
) -> list[bytes] | None:
    """The stored tokens of each record of ``ns`` with these ``ids``, in order;
    None when any is missing, stored for other text, or does not decode
    (`load` then sorts them out). ``digests``: those of the records' texts,
    in order. One read, and no per-record table: a large search state built
    whole holds them itself."""
    if not ids:
        return []
    with reading(store):
        if isinstance(store, StoredColumns):
            got: Stored = store.term_columns(ns, key, ids)
        else:
            got = store.get_terms(ns, key, ids)
    out = in_order(got, ids, digests)
    return out if out is not None and _all_decode(out) else None


Stored = Columns | Mapping[str, tuple[str, bytes]]
"""Stored rows as a backend gives them: `StoredColumns`'s lists, or by id."""


def in_order(got: Stored, ids: list[str], digests: list[str]) -> list[bytes] | None:
    """The stored blobs of the records with these ``ids`` (one namespace), in
    order, from ``got`` (what `get_terms` or `get_vectors` gave for the ids,
    or `term_columns` or `vector_columns`); None when any is missing or was
    stored for other text (``digests``: those of the records' texts, in
    order). Columns whose ids and digests are the records' own, in order,
    pass with one comparison each and are used as they are; others are
    matched by id. Built-in loops only: a large state made whole checks
    100,000 records here."""
    if isinstance(got, tuple):
        got_ids, got_digests, blobs = got
        if got_ids == ids and got_digests == digests:
            return blobs
        got = dict(zip(got_ids, zip(got_digests, blobs, strict=True), strict=True))
    hits = list(map(got.get, ids))
    if None in hits:
        return None
    found = cast(list[tuple[str, bytes]], hits)
    if list(map(_DIGEST, found)) != digests:
        return None
    return list(map(bytes, map(_BLOB, found)))


def _all_decode(blobs: Iterable[bytes]) -> bool:
    """Whether every blob decodes, checked all at once: a newline (no part of
    any other character) between two blobs, so a blob's broken end or start
    cannot pass with its neighbour."""
    try:
        b"\n".join(blobs).decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _decodes(blob: bytes) -> bool:
    try:
        blob.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def save(
    store: TermStore,
    key: str,
    rows: list[tuple[Memory, bytes]],
) -> None:
    """Write freshly made tokens to the backend, if it lets us (a read-only
    file still searches; its tokens then live only in this process)."""
    by_ns: dict[str, list[tuple[str, str, bytes]]] = {}
    for m, blob in rows:
        by_ns.setdefault(m.namespace, []).append((m.id, digest(m.content), blob))
    try:
        with store.transaction():
            for ns, group in by_ns.items():
                store.put_terms(ns, key, group)
    except StorageError:
        pass


def reading(store: object) -> Any:
    """The backend's read view, or nothing for an object without one."""
    read = getattr(store, "reading", None)
    return read() if read is not None else nullcontext()
